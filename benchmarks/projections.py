"""Projection catch-up and replay over a log of 100 000 events, against reading the same notifications.

The log is synthetic but real: Bounty (and Issue) aggregates saved through the event store, shaped
as full lifecycles. Each figure is a ratio to paging through the same notifications doing nothing
with them, measured in the same run, so it says what the projection work itself costs.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from adapters.event_store import EventStore, open_store
from adapters.sql import SqlDb
from benchmarks.report import Row
from domain.bounties.bounty import Bounty
from domain.bounties.chain_events import ChainEvent
from projections.bounties.board import BountyBoard
from projections.replay import replay_aggregates
from projections.runner import follow

EVENTS = 100_000
PAGE = 1000


def build_log(store: EventStore, events: int) -> int:
    """Whole lifecycles (created, two accepts, submit, merge, cooling, paid), saved 100 bounties at a time."""
    version, written, n = 0, 0, 0
    while written < events:
        batch = []
        for _ in range(100):
            n += 1

            def ev(kind: str, data: dict, bounty_id: str = str(n)) -> ChainEvent:
                nonlocal version
                version += 1
                return ChainEvent(type=kind, data={"bounty_id": bounty_id, **data}, tx_hash=f"0x{version:064x}",
                                  version=version, index=0)

            bounty = Bounty.from_chain(ev("BountyCreated", {
                "sponsor": "0xs", "repo": "o/r", "issue_hash": f"h{n}", "asset": "USDT", "amount": 1000 + n,
                "cooling_period": 60, "created_at": 0}))
            for item in (ev("BountyAccepted", {"worker": "0xa"}), ev("BountyAccepted", {"worker": "0xb"}),
                         ev("PRSubmitted", {"worker": "0xa", "pr_url": f"u{n}", "commit_sha": "abcdef1"}),
                         ev("BountyMerged", {"winner": "0xa", "pr_url": f"u{n}", "merged_at": 1}),
                         ev("CoolingStarted", {"cooling_until": 61}),
                         ev("BountyPaid", {"winner": "0xa", "amount": 1000 + n, "paid_at": 62})):
                bounty.observe(item)
            batch.append(bounty)
            written += 7
        store.save(*batch)
    return written


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _read_only(store: EventStore) -> None:
    start = 1
    while page := store.recorder.select_notifications(start=start, limit=PAGE):
        start = page[-1].id + 1


def rows() -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = open_store(root)
        count = build_log(store, EVENTS)
        store.close()
        cold = open_store(root)  # a cold start: a new process's store, no cache
        baseline = min(_timed(lambda: _read_only(cold)) for _ in range(3))
        views = SqlDb.sqlite(root / "views.sqlite")
        catch_up = _timed(lambda: follow(cold, views, BountyBoard(), limit=PAGE))
        views.close()
        replay = _timed(lambda: replay_aggregates(cold))
        cold.close()
    return [
        Row("projections: log size", count, "events"),
        Row.against_baseline("projections: board catch-up from cold (time vs reading only)", baseline, catch_up, "s"),
        Row("projections: board catch-up speed", count / catch_up, "events/s"),
        Row.against_baseline("projections: replay of every aggregate (time vs reading only)", baseline, replay, "s"),
        Row("projections: replay speed", count / replay, "events/s"),
        Row("projections: reading notifications only", count / baseline, "events/s"),
    ]


if __name__ == "__main__":
    from benchmarks.report import format_table

    print(format_table(rows()))
