"""Where re-anchoring moved each annotation, for the people at the CLI (`code3 loom verify|list|show`).

After `verify` records a move, the annotation is anchored at its new lines, so reading it again finds it
exactly there ("exact / file unchanged"). What a person wants to see is the move itself: the lines before
and after, the status and the confidence. That is in the annotation's history (its last Reanchored or
Orphaned event), read here; nothing is recorded, and no comment or quoted text is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.knowledge.annotation import Annotation
from domain.knowledge.annotation_rules import parse_ann_id
from mcp_tools.services import Services
from projections.knowledge import annotations as store_rows
from projections.knowledge.annotations import AnnotationIndex
from projections.runner import follow


def _lines(start: int | None, end: int | None) -> str | None:
    if start is None or end is None:
        return None
    return str(start) if start == end else f"{start}-{end}"


def last_move(s: Services, ann_id: str, since: int = 0) -> dict[str, Any] | None:
    """The last re-anchoring recorded for `ann_id` after its version `since`: {from, to, status, confidence,
    reason, at} (`to` is null when the lines were not found); None when none was recorded."""
    start = end = None
    move: dict[str, Any] | None = None
    for event in s.store.repository.event_store.get(parse_ann_id(ann_id)):
        if isinstance(event, Annotation.Annotated):
            start, end = event.start_line, event.end_line
        elif isinstance(event, Annotation.Edited):
            start, end = event.changes.get("start_line", start), event.changes.get("end_line", end)
        elif isinstance(event, (Annotation.Reanchored, Annotation.Orphaned)):
            found = event if isinstance(event, Annotation.Reanchored) else None
            after = (found.start_line, found.end_line) if found is not None else (None, None)
            if event.originator_version > since:
                move = {"from": _lines(start, end), "to": _lines(*after),
                        "status": found.status if found is not None else "orphaned",
                        "confidence": found.confidence if found is not None else 0.0, "reason": event.reason,
                        "at": event.at}
            if found is not None:
                start, end = after
    return move


def with_last_moves(s: Services, page: Mapping[str, Any]) -> dict[str, Any]:
    """A list_contexts page whose items carry `lastMove` (the last re-anchoring recorded), when there was one."""
    return {**page, "items": [with_last_move(s, item) for item in page["items"]]}


def with_last_move(s: Services, view: Mapping[str, Any]) -> Mapping[str, Any]:
    move = last_move(s, view["id"])
    return view if move is None else {**view, "lastMove": move}


def verify(s: Services) -> dict[str, Any]:
    """`verify_all`, and for each live annotation what it did: the move it recorded, or `unchanged`."""
    from mcp_tools.ai_loom.reanchoring import verify_all

    follow(s.store, s.views, AnnotationIndex(s.store))
    before = {}
    for path, ann_ids in store_rows.ids_by_file(s.views).items():
        for ann_id in ann_ids:
            found = s.store.get(Annotation, parse_ann_id(ann_id))
            if found is not None:
                before[ann_id] = (path, found.version)
    counts = verify_all(s)
    annotations = []
    for ann_id, (path, version) in before.items():
        now = s.store.get(Annotation, parse_ann_id(ann_id))
        if now is None or now.deleted:
            continue
        move = last_move(s, ann_id, since=version)
        if move is None:  # nothing recorded: the lines are where they were anchored
            lines = _lines(now.start_line, now.end_line)
            status = "orphaned" if now.status == "orphaned" else "exact"
            move = {"from": lines, "to": None if status == "orphaned" else lines, "status": status,
                    "confidence": 0.0 if status == "orphaned" else 1.0, "reason": now.reason, "unchanged": True}
        annotations.append({"id": ann_id, "filePath": path, **move})
    return {"counts": counts, "annotations": annotations}


def report(verified: dict[str, Any]) -> str:
    """`code3 loom verify` for people: one line per annotation (old → new lines, status, confidence), then
    the counts."""
    lines = []
    for a in verified["annotations"]:
        where = f"{a['from']} (unchanged)" if a.get("unchanged") and a["to"] else \
            f"{a['from']} → {a['to'] or 'not found'}"
        lines.append(f"{a['id']}  {a['filePath']}:{where}  {a['status']} "
                     f"(confidence {a['confidence']:.2f}; {a['reason']})")
    counts = verified["counts"]
    total = sum(counts.values())
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    lines.append(f"verified {total} annotation{'s' if total != 1 else ''}" + (f": {summary}" if summary else ""))
    return "\n".join(lines)
