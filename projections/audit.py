"""Audit by replay: an aggregate's history, a proof that replay rebuilds every read model, and a
hash-chained export of the log whose changed or missing lines are detected.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

from domain.bounty import Bounty
from domain.canonical import canonical_json
from domain.errors import Code, Code3Error
from domain.issue import Issue
from domain.spec import FEATURE_ID, Spec
from mcp_tools.chain_record import lookup
from mcp_tools.context import Services
from projections import board
from projections.board import BountyBoard
from projections.replay import replay_aggregates, state_of
from projections.runner import Runner
from projections.views import ViewDB

GENESIS = "0" * 64


def _plain(value: Any) -> Any:
    if isinstance(value, UUID | datetime):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def event_record(event: Any) -> dict[str, Any]:
    data = {k: v for k, v in vars(event).items() if k not in ("originator_id", "originator_version", "timestamp")}
    return {"aggregate": type(event).__qualname__.split(".")[0], "event": type(event).__name__,
            "originator_id": str(event.originator_id), "version": event.originator_version,
            "timestamp": event.timestamp.isoformat(), "data": _plain(data)}


def resolve(s: Services, key: str) -> UUID:
    """A bounty id, a task id (owner/repo#N) or a feature id, to the aggregate it names."""
    if key.isdigit():
        return Bounty.create_id(key)
    if "#" in key:
        issue_hash = lookup(s, "task", key)
        if issue_hash is None:
            raise Code3Error(Code.NOT_FOUND, f"no published task {key}", "check the task id (owner/repo#N)")
        return Issue.create_id(issue_hash)
    if FEATURE_ID.match(key):
        return Spec.create_id(key)
    raise Code3Error(Code.VALIDATION, f"{key!r} is not a bounty id, task id or feature id",
                     "pass e.g. 3, owner/repo#12 or 001-login")


def history(s: Services, key: str) -> list[dict[str, Any]]:
    aggregate_id = resolve(s, key)
    events = list(s.store.repository.event_store.get(aggregate_id))
    if not events:
        raise Code3Error(Code.NOT_FOUND, f"nothing recorded for {key}", "check the id")
    return [event_record(e) for e in events]


@dataclass
class Verdict:
    aggregates: int = 0
    board_rows: int = 0
    bounties_checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(s: Services) -> Verdict:
    """Replay the whole log: aggregates, a fresh board, and the chain must all agree with what is live."""
    verdict = Verdict()
    replayed = replay_aggregates(s.store)
    verdict.aggregates = len(replayed)
    for aggregate_id, state in replayed.items():
        live = s.store.repository.get(aggregate_id)
        if state_of(state) != state_of(live):
            verdict.problems.append(f"aggregate {aggregate_id} differs between replay and repository")
    Runner(s.store, s.views).catch_up(BountyBoard(), keep_lease=False)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = ViewDB(sqlite_path=Path(tmp) / "verify.sqlite")
        try:
            Runner(s.store, fresh).catch_up(BountyBoard())
            rebuilt, live_rows = board.rows(fresh), board.rows(s.views)
        finally:
            fresh.close()
    verdict.board_rows = len(live_rows)
    if rebuilt != live_rows:
        verdict.problems.append(
            f"bounty board differs from its rebuild ({len(live_rows)} live, {len(rebuilt)} rebuilt)")
    for state in replayed.values():
        if isinstance(state, Bounty):
            verdict.bounties_checked += 1
            chain = s.chain.get_bounty(state.bounty_id)
            if chain is None or chain.comparable() != state.comparable():
                verdict.problems.append(f"bounty {state.bounty_id} disagrees with the chain")
    return verdict


def export(s: Services, path: Path) -> int:
    """JSON lines, each with the previous line's hash; a trailer line closes the chain."""
    prev = GENESIS
    count = 0
    with path.open("w", encoding="utf-8") as out:
        start = 1
        while page := s.store.recorder.select_notifications(start=start, limit=1000):
            for notification in page:
                record = {"seq": notification.id, **event_record(s.store.mapper.to_domain_event(notification)),
                          "prev": prev}
                prev = hashlib.sha256(canonical_json(record).encode()).hexdigest()
                out.write(canonical_json({**record, "hash": prev}) + "\n")
                count += 1
            start = page[-1].id + 1
        out.write(canonical_json({"trailer": True, "count": count, "last": prev}) + "\n")
    return count


def check(path: Path) -> list[str]:
    """Problems found in an export: a changed line, a missing or reordered line, a missing trailer."""
    problems: list[str] = []
    prev, count, last_seq = GENESIS, 0, 0
    trailer = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            record = json.loads(line)
        except ValueError:
            problems.append(f"line {number}: not JSON")
            continue
        if record.get("trailer"):
            trailer = record
            continue
        claimed = record.pop("hash", None)
        actual = hashlib.sha256(canonical_json(record).encode()).hexdigest()
        if claimed != actual:
            problems.append(f"line {number}: content changed (hash mismatch)")
        if record.get("prev") != prev:
            problems.append(f"line {number}: does not follow the previous line (a line is missing or moved)")
        if record.get("seq", 0) <= last_seq:
            problems.append(f"line {number}: sequence goes backwards")
        prev, count, last_seq = claimed or actual, count + 1, record.get("seq", 0)
    if trailer is None:
        problems.append("no trailer: the export is truncated")
    elif trailer.get("count") != count or trailer.get("last") != prev:
        problems.append("the trailer does not match the lines (lines missing at the end, or changed)")
    return problems
