"""Does loading an aggregate grow with its history? A cold load (a store just opened: nothing cached) of one
aggregate with 10, 1 000 and 5 000 events, for the three that can gather many: a Bounty (an exclusive task accepted
and withdrawn again and again), a FileMeta (tags added and removed) and an Issue (labels mirrored at every
transition). Beside each, the same load with eventsourcing's snapshots every SNAPSHOT_EVERY events
(`snapshotting_intervals`, what adapters.event_store.EventStore takes since this was measured).

    .venv/bin/python -m benchmarks.snapshots [--sizes 10,1000,5000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar
from uuid import UUID

from adapters.event_store import EventStore, _created, store_env
from domain.bounties.bounty import Bounty
from domain.bounties.chain_events import ChainEvent
from domain.bounties.issue import Issue
from domain.knowledge.file_meta import FileMeta

LOADS = 5
WORKER = "0x" + "b0" * 32


class PlainStore(EventStore):
    """The store without snapshots, as it was before they were enabled."""

    snapshotting_intervals: ClassVar[dict[type, int]] = {}  # type: ignore[misc]


SnapshottingStore = EventStore


def _bounty(n: int) -> Bounty:
    bounty = Bounty.from_chain(ChainEvent(type="BountyCreated", tx_hash="0x1", version=1, index=0, data={
        "bounty_id": "7", "sponsor": "0x" + "a1" * 32, "repo": "alice/app", "issue_hash": "ab" * 32,
        "asset": "USDT", "amount": "1000", "cooling_period": 604800, "created_at": 1, "deadline": 2**40, "mode": 0,
        "hold_seconds": 3600}))
    for k in range(1, n):
        coords = {"tx_hash": f"0x{k:x}", "version": 1 + k, "index": 0}
        if k % 2:
            bounty._accepted(worker=WORKER, coords=coords)
        else:
            bounty._withdrawn(worker=WORKER, coords=coords)
    return bounty


def _file(n: int) -> FileMeta:
    meta = FileMeta(project_id="p", path="src/app.py")
    for k in range(1, n):
        if k % 2:
            meta.add_tags(["hot"])
        else:
            meta.remove_tags(["hot"])
    return meta


def _issue(n: int) -> Issue:
    issue = Issue(issue_hash="cd" * 32, repo="alice/app", feature_id="001-x", spec_path="specs/001-x/spec.md",
                  spec_digest="ef" * 32, amount=1000, asset="USDT", network="local", labels=["code3", "open"],
                  assignees=[], effort=1, deadline=None)
    for k in range(1, n):
        issue.mirror_labels(labels=["code3", "open" if k % 2 else "in-progress"])
    return issue


BUILDERS: dict[str, Callable[[int], Any]] = {"Bounty": _bounty, "FileMeta": _file, "Issue": _issue}


def _open(cls: type[EventStore], project: Path) -> EventStore:
    return _created(lambda: cls(env=store_env(project, None)))


def _cold_load_ms(cls: type[EventStore], project: Path, aggregate_id: UUID) -> float:
    times = []
    for _ in range(LOADS):
        store = _open(cls, project)
        try:
            start = time.perf_counter()
            store.repository.get(aggregate_id)
            times.append((time.perf_counter() - start) * 1000)
        finally:
            store.close()
    return statistics.median(times)


def measure(kind: str, n: int, root: Path) -> dict[str, float]:
    figures = {}
    for label, cls in (("plain", PlainStore), ("snapshots", SnapshottingStore)):
        project = root / f"{kind}-{n}-{label}"
        project.mkdir(parents=True)
        aggregate = BUILDERS[kind](n)
        store = _open(cls, project)
        try:
            store.save(aggregate)  # with snapshotting_intervals, the store takes a snapshot every SNAPSHOT_EVERY
        finally:
            store.close()
        figures[label] = _cold_load_ms(cls, project, aggregate.id)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10,1000,5000")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="code3-snapshots-") as tmp:
        results = {(kind, n): measure(kind, n, Path(tmp)) for kind in BUILDERS for n in sizes}
    head = ["cold load p50 ms"] + [f"{n:,} events" for n in sizes] + [f"x{sizes[-1] // sizes[0]}"]
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    for kind in BUILDERS:
        for label in ("plain", "snapshots"):
            values = [results[(kind, n)][label] for n in sizes]
            print(" | ".join([f"{kind} ({label})", *(f"{v:.1f}" for v in values), f"{values[-1] / values[0]:.1f}"]))


if __name__ == "__main__":
    main()
