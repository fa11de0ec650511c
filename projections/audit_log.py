"""The audit trail read from the log: an aggregate's history, and a hash-chained export of the whole log
whose changed, missing or reordered lines `check` detects.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

from adapters.event_store import EventStore, iter_log
from domain.canonical import canonical_json

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


def history(store: EventStore, aggregate_id: UUID) -> list[dict[str, Any]]:
    return [event_record(e) for e in store.repository.event_store.get(aggregate_id)]


def export(store: EventStore, path: Path) -> int:
    """JSON lines, each with the previous line's hash; a trailer line closes the chain."""
    prev = GENESIS
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for position, event in iter_log(store):
            record = {"seq": position, **event_record(event), "prev": prev}
            prev = hashlib.sha256(canonical_json(record).encode()).hexdigest()
            out.write(canonical_json({**record, "hash": prev}) + "\n")
            count += 1
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
