"""Re-anchoring, recorded: the jobs that find where each annotation's lines are now and write it down
(Reanchored / Orphaned events). `verify_all` is `code3 loom verify`; `verify_changed` is the worker's step,
which skips the files whose text has not changed since its last pass.

The read tools only show the current best anchor (`access.current`) and never record it: recording is these
jobs' alone, so a read never writes.
"""

from __future__ import annotations

from datetime import UTC, datetime

from domain.knowledge.anchor import file_digest
from domain.knowledge.annotation import Annotation
from mcp_tools.ai_loom import access
from mcp_tools.services import Services
from projections.knowledge import annotations as store_rows


def verify_all(s: Services) -> dict[str, int]:
    """Re-anchor every live annotation on its file's current text and record the outcomes
    (Reanchored / Orphaned); counts by status. What `code3 loom verify` runs."""
    access.fresh(s)
    counts: dict[str, int] = {}
    for path, ann_ids in store_rows.ids_by_file(s.views).items():
        _verify(s, ann_ids, access.text(s, path), counts)
    return counts


def verify_changed(s: Services, seen: dict[str, str | None], budget: int | None = None) -> dict[str, int]:
    """`verify_all` for the files whose text changed since the last call (the worker's step): `seen` maps a
    path to the digest of its text at the last call (None: gone or unreadable) and is updated in place; a
    path not in it counts as changed, so the first call verifies everything. An unchanged file's
    annotations are skipped without loading them (each was anchored on that very text when it was last
    created, edited or verified). Counts by status of the annotations verified, `recorded`: the events
    written, and `pending`: 1 when `budget` (annotations verified per call, whole files at a time) stopped
    the pass before the last changed file (the next call goes on from there)."""
    access.fresh(s)
    counts: dict[str, int] = {"recorded": 0, "pending": 0}
    grouped = store_rows.ids_by_file(s.views)
    verified = 0
    for path, ann_ids in grouped.items():
        text = access.text(s, path)
        digest = None if text is None else file_digest(text)
        if path in seen and seen[path] == digest:
            continue
        if budget is not None and verified >= budget:
            counts["pending"] = 1
            break
        counts["recorded"] += _verify(s, ann_ids, text, counts)
        verified += len(ann_ids)
        seen[path] = digest
    for path in set(seen) - set(grouped):
        del seen[path]
    return counts


def _verify(s: Services, ann_ids: list[str], text: str | None, counts: dict[str, int]) -> int:
    """Verify these annotations (all on one file, whose current text is `text`); the events recorded."""
    recorded = 0
    for ann_id in ann_ids:
        status, added = _verify_one(s, ann_id, text)
        recorded += added
        counts[status] = counts.get(status, 0) + 1
    return recorded


def _verify_one(s: Services, ann_id: str, text: str | None) -> tuple[str, int]:
    """Verify one annotation, rerun on a racing write's result (an edit saved meanwhile): (status, events)."""
    sealer, status, added = access.sealer(s), "", 0

    def check(current: Annotation | None) -> Annotation | None:
        nonlocal status, added
        live = access.live(current, ann_id)
        before = live.version
        status = live.verify(text, at=datetime.now(UTC), sealer=sealer).status
        added = live.version - before
        return live if added else None

    access.write(s, ann_id, check, known=access.load(s, ann_id))
    return status, added
