"""The audit trail read from the log: an aggregate's history, and a hash-chained export of the whole log
whose changed, missing or reordered lines `check` detects.

The chain alone is unkeyed: whoever edits a line can recompute every hash after it. So the trailer, which
names the last hash, is signed with the exporting identity's ed25519 key; `check` verifies the signature
and always says who signed, and with `key` refuses any other signer.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

from adapters.event_store import EventStore, iter_log
from adapters.keystore import address_of, public_key_of, sign, verify
from adapters.ports import Signer
from domain.canonical import canonical_json

GENESIS = "0" * 64
FORMAT = "code3-audit/2"


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


def export(store: EventStore, path: Path, signer: Signer) -> int:
    """JSON lines, each with the previous line's hash; a trailer closes the chain and is signed (ed25519) by
    `signer`, whose public key and address it carries. Written to a temporary file, then renamed."""
    count = 0
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as out:
            for line in export_lines(iter_log(store), signer):
                out.write(line)
                count += 1
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return count - 1  # the trailer is no event


def export_lines(events: Iterable[tuple[int, Any]], signer: Signer, scope: dict[str, Any] | None = None
                 ) -> Iterator[str]:
    """The export's lines for `events` ((sequence number, domain event) pairs, numbers increasing): the whole log
    (`export`) or a part of it, such as one bounty's events (the web page's download); `scope`, when given, is
    named in the trailer (what part of the log this is). The same chain of hashes and signed trailer either
    way, so `check` verifies both."""
    prev = GENESIS
    count = 0
    for position, event in events:
        record = {"seq": position, **event_record(event), "prev": prev}
        prev = hashlib.sha256(canonical_json(record).encode()).hexdigest()
        yield canonical_json({**record, "hash": prev}) + "\n"
        count += 1
    public = public_key_of(signer.private_key_hex)
    trailer = {"trailer": True, "format": FORMAT, "count": count, "last": prev,
               "exported_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "alg": "ed25519",
               "signer": {"name": signer.name, "address": signer.address, "public_key": public.hex()},
               **({"scope": scope} if scope is not None else {})}
    signature = sign(signer, canonical_json(trailer).encode())
    yield canonical_json({**trailer, "signature": signature.hex()}) + "\n"


@dataclass
class Checked:
    """What `check` found: problems (none when intact), and who signed the trailer if its signature holds."""

    problems: list[str] = field(default_factory=list)
    signer: dict[str, str] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def key_matches(signer: dict[str, str], key: str) -> bool:
    """`key` names the signer: its address (0x…), its public key (hex), with or without 0x."""
    wanted = key.strip().lower().removeprefix("0x")
    return wanted in (signer.get("address", "").lower().removeprefix("0x"), signer.get("public_key", "").lower())


def _check_signature(trailer: dict[str, Any], key: str | None, result: Checked) -> None:
    body = {k: v for k, v in trailer.items() if k != "signature"}
    signer = trailer.get("signer")
    signature = trailer.get("signature")
    if not isinstance(signer, dict) or not isinstance(signature, str):
        result.problems.append("the trailer is not signed: anyone could have recomputed the hashes")
        return
    try:
        public = bytes.fromhex(str(signer.get("public_key", "")))
        raw_signature = bytes.fromhex(signature)
    except ValueError:
        result.problems.append("the trailer's public key or signature is not hex")
        return
    if len(public) != 32 or address_of(public) != signer.get("address"):
        result.problems.append("the trailer's address does not belong to its public key")
        return
    if trailer.get("alg") != "ed25519" or not verify(public, raw_signature, canonical_json(body).encode()):
        result.problems.append(f"the signature does not match (claimed signer {signer.get('address')}): "
                               "the export was changed after it was signed")
        return
    result.signer = {"address": str(signer["address"]), "public_key": public.hex(), "name": str(signer.get("name"))}
    if key is not None and not key_matches(result.signer, key):
        result.problems.append(f"signed by {signer['address']}, not by the expected key {key}")


def check(path: Path, key: str | None = None) -> Checked:
    """Problems found in an export: a changed line, a missing or reordered line, a missing trailer, a signature
    that does not match, or (with `key`, an address or public key) a signer other than the expected one."""
    result = Checked()
    problems = result.problems
    prev, count, last_seq = GENESIS, 0, 0
    trailer = None
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            try:
                record = json.loads(line)
            except ValueError:
                problems.append(f"line {number}: not JSON")
                continue
            if not isinstance(record, dict):
                problems.append(f"line {number}: not a record")
                continue
            if trailer is not None:
                problems.append(f"line {number}: follows the trailer")
            if record.get("trailer"):
                trailer = record
                continue
            claimed = record.pop("hash", None)
            actual = hashlib.sha256(canonical_json(record).encode()).hexdigest()
            if claimed != actual:
                problems.append(f"line {number}: content changed (hash mismatch)")
            if record.get("prev") != prev:
                problems.append(f"line {number}: does not follow the previous line (a line is missing or moved)")
            seq = record.get("seq", 0)
            if not isinstance(seq, int) or seq <= last_seq:
                problems.append(f"line {number}: sequence goes backwards")
                seq = last_seq
            prev, count, last_seq = claimed or actual, count + 1, seq
    if trailer is None:
        problems.append("no trailer: the export is truncated")
        return result
    if trailer.get("count") != count or trailer.get("last") != prev:
        problems.append("the trailer does not match the lines (lines missing at the end, or changed)")
    _check_signature(trailer, key, result)
    return result
