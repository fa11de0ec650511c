"""Bounty events stored before modes, deadlines and holds (v1) still load, as a contest with no deadline.

`Bounty.Created` v2 adds `deadline`, `mode`, `hold_seconds`; `Bounty.Accepted` v2 adds `hold_until`.
The v1 events here are written the way the code before this change stored them: without those keys and
without a `class_version`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from eventsourcing.application import Application

from domain.bounty import Bounty
from domain.chain_events import ChainEvent
from domain.contract import Mode, Status

SPONSOR, WORKER = "0x" + "a" * 64, "0x" + "b" * 64
V2_ONLY = {"Created": ("deadline", "mode", "hold_seconds"), "Accepted": ("hold_until",)}


def chain_event(etype: str, version: int, **data: Any) -> ChainEvent:
    return ChainEvent(type=etype, data={"bounty_id": "1", **data}, tx_hash=f"0x{version:064x}", version=version,
                      index=0)


def created(mode: Mode = Mode.CONTEST, hold: int = 0) -> Bounty:
    return Bounty.from_chain(chain_event(
        "BountyCreated", 1, sponsor=SPONSOR, repo="o/r", issue_hash="e" * 64, asset="USDT", amount=7,
        cooling_period=60, created_at=100, deadline=200, mode=int(mode), hold_seconds=hold))


def as_v1(app: Application, bounty: Bounty) -> list[Any]:
    """The bounty's pending events as the code before v2 stored them."""
    stored = []
    for domain_event in bounty.collect_events():
        item = app.mapper.to_stored_event(domain_event)
        state = json.loads(item.state)
        kind = item.topic.rsplit(".", 1)[-1]
        assert state.pop("class_version", 1) == (2 if kind in V2_ONLY else 1), kind
        for key in V2_ONLY.get(kind, ()):
            del state[key]
        stored.append(replace(item, state=json.dumps(state).encode()))
    return stored


def test_a_bounty_stored_by_v1_loads_as_a_contest_without_deadline_or_hold() -> None:
    app = Application(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    bounty = created()
    bounty.observe(chain_event("BountyAccepted", 2, worker=WORKER, hold_until=0))
    app.recorder.insert_events(as_v1(app, bounty))
    loaded = app.repository.get(bounty.id)
    assert (loaded.mode, loaded.deadline, loaded.hold_seconds) == (Mode.CONTEST.label, None, 0)
    assert (loaded.workers, loaded.holder, loaded.hold_until, loaded.status) == ([WORKER], None, None, Status.STARTED)
    assert loaded.comparable()["holder"] is None


def test_v2_events_keep_their_terms_and_holds() -> None:
    app = Application(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    bounty = created(Mode.EXCLUSIVE, 30)
    bounty.observe(chain_event("BountyAccepted", 2, worker=WORKER, hold_until=130))
    bounty.observe(chain_event("TaskWithdrawn", 3, worker=WORKER))
    app.save(bounty)
    loaded = app.repository.get(bounty.id)
    assert (loaded.mode, loaded.deadline, loaded.hold_seconds) == ("exclusive", 200, 30)
    assert (loaded.workers, loaded.holder, loaded.status) == ([], None, Status.OPEN)
    assert [type(e).__name__ for e in app.events.get(bounty.id)] == ["Created", "Accepted", "Withdrawn"]


def test_chain_events_an_embedded_ledger_recorded_before_modes_still_build_the_mirror() -> None:
    """A ledger file keeps its old events: BountyCreated without terms, BountyAccepted without hold_until."""
    bounty = Bounty.from_chain(chain_event("BountyCreated", 1, sponsor=SPONSOR, repo="o/r", issue_hash="h",
                                           asset="USDT", amount=7, cooling_period=60, created_at=100))
    assert bounty.observe(chain_event("BountyAccepted", 2, worker=WORKER))
    assert (bounty.mode, bounty.deadline, bounty.hold_seconds, bounty.workers) == ("contest", None, 0, [WORKER])
