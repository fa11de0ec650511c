"""Bounty events stored by older code still load: before modes, deadlines and holds (as a contest with no deadline),
and before the v2 contract (no resolver yet, the repository compared by name's id, one payee, a whole refund).

`Bounty.Created` v2 adds `deadline`, `mode`, `hold_seconds`, v3 `resolver`, `repo_id`, `dispute_period`;
`Bounty.Accepted` v2 adds `hold_until`; `Bounty.Merged` v2 `author_id`, `repo_id`, `pr_number`; `Bounty.Paid` v2
`recipients`, `amounts`; `Bounty.Cancelled` v2 `amount`. The old events here are written the way the code before
each change stored them: without those keys and with the class_version of then.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from eventsourcing.application import Application

from domain.bounties.bounty import Bounty
from domain.bounties.chain_events import ChainEvent
from domain.bounties.contract import Mode, Status

SPONSOR, WORKER = "0x" + "a" * 64, "0x" + "b" * 64
# the keys each version added, newest last: stored "as of version N" drops the keys of every later version
ADDED = {"Created": [("deadline", "mode", "hold_seconds"), ("resolver", "repo_id", "dispute_period")],
         "Accepted": [("hold_until",)], "Merged": [("author_id", "repo_id", "pr_number")],
         "Paid": [("recipients", "amounts")], "Cancelled": [("amount",)]}


def chain_event(etype: str, version: int, **data: Any) -> ChainEvent:
    return ChainEvent(type=etype, data={"bounty_id": "1", **data}, tx_hash=f"0x{version:064x}", version=version,
                      index=0)


def created(mode: Mode = Mode.CONTEST, hold: int = 0) -> Bounty:
    return Bounty.from_chain(chain_event(
        "BountyCreated", 1, sponsor=SPONSOR, repo="o/r", issue_hash="e" * 64, asset="USDT", amount=7,
        cooling_period=60, created_at=100, deadline=200, mode=int(mode), hold_seconds=hold))


BEFORE_V2_CONTRACT = {"Created": 2, "Accepted": 2}  # the class versions of the code before the v2 contract


def as_of(app: Application, bounty: Bounty, versions: dict[str, int] | None = None) -> list[Any]:
    """The bounty's pending events as code with these class versions stored them (1 for a class not named)."""
    stored = []
    for domain_event in bounty.collect_events():
        item = app.mapper.to_stored_event(domain_event)
        state = json.loads(item.state)
        kind = item.topic.rsplit(".", 1)[-1]
        added = ADDED.get(kind, [])
        assert state.pop("class_version", 1) == len(added) + 1, kind
        keep = min((versions or {}).get(kind, 1), len(added) + 1)
        for keys in added[keep - 1:]:
            for key in keys:
                del state[key]
        if keep > 1:
            state["class_version"] = keep
        stored.append(replace(item, state=json.dumps(state).encode()))
    return stored


def as_v1(app: Application, bounty: Bounty) -> list[Any]:
    return as_of(app, bounty)


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


def test_a_bounty_paid_and_one_refunded_under_the_v1_contract_load_with_one_payee_and_a_whole_refund() -> None:
    app = Application(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    paid = created()
    cancelled = Bounty.from_chain(chain_event("BountyCreated", 8, sponsor=SPONSOR, repo="o/r", issue_hash="f" * 64,
                                              asset="USDT", amount=7, cooling_period=60, created_at=100,
                                              deadline=200, mode=1, hold_seconds=0, bounty_id="2"))
    for event in (chain_event("BountyAccepted", 2, worker=WORKER, hold_until=0),
                  chain_event("PRSubmitted", 3, worker=WORKER, pr_url="u", commit_sha="a" * 40),
                  chain_event("BountyMerged", 4, winner=WORKER, pr_url="u", merged_at=150),
                  chain_event("CoolingStarted", 5, cooling_until=210),
                  chain_event("BountyPaid", 6, winner=WORKER, asset="USDT", amount=7, paid_at=220)):
        paid.observe(event)
    cancelled.observe(chain_event("BountyCancelled", 7, refund_to=SPONSOR, amount=7, disputed=False))
    app.recorder.insert_events([*as_of(app, paid, BEFORE_V2_CONTRACT), *as_of(app, cancelled, BEFORE_V2_CONTRACT)])
    got = app.repository.get(paid.id)
    assert (got.status, got.payouts, got.merged_pr_number, got.resolver, got.repo_id) == (
        Status.PAID, [{"to": WORKER, "amount": 7}], None, None, 0)
    refunded = app.repository.get(cancelled.id)
    assert (refunded.status, refunded.refund_total, refunded.refunds) == (Status.CANCELLED, 7, {SPONSOR: 7})
    assert refunded.comparable()["pool"] == 7
