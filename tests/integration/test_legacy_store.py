"""Events are a persisted schema: a store written by the code before the layout refactor still loads.

The fixture is the event log of one whole demo lifecycle (spec, publish, accept, submit, merge, paid),
recorded by commit 3be1023. Moving or renaming an event class needs `register_topic`; changing an
event's shape needs `class_version` and an upcast — this test fails otherwise.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from adapters.event_store import iter_log, open_store
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from domain.bounties.index import Index
from domain.bounties.issue import Issue
from domain.bounties.spec import Spec

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "legacy_store" / "events.sqlite"


def test_every_aggregate_of_a_store_written_before_the_refactor_loads(tmp_path: Path) -> None:
    (tmp_path / ".code3").mkdir(mode=0o700)  # owner-only, as Code3 made it (a looser state is refused)
    shutil.copy(FIXTURE, tmp_path / ".code3" / "events.sqlite")
    (tmp_path / ".code3").chmod(0o700)
    (tmp_path / ".code3" / "events.sqlite").chmod(0o600)
    store = open_store(tmp_path)
    try:
        ids = {event.originator_id for _, event in iter_log(store)}
        loaded = {aggregate_id: store.repository.get(aggregate_id) for aggregate_id in ids}
    finally:
        store.close()
    assert len(loaded) == 6
    assert {type(a).__name__ for a in loaded.values()} == {"Bounty", "Index", "Issue", "Spec"}
    bounty = next(a for a in loaded.values() if isinstance(a, Bounty))
    assert bounty.status is Status.PAID and bounty.winner is not None and bounty.paid_tx
    issue = next(a for a in loaded.values() if isinstance(a, Issue))
    assert issue.metadata_written and issue.bounty_id == bounty.bounty_id
    assert issue.amount == bounty.amount and type(issue.amount) is int, "the amount stored as digits is upcast"
    spec = next(a for a in loaded.values() if isinstance(a, Spec))
    assert spec.published_as == issue.issue_hash and spec.tasked
    assert any(isinstance(a, Index) and a.kind == "task" for a in loaded.values())
