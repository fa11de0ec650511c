"""The ai-loom tools: the seed's three read-only ones (list_contexts, get_context, stitch) and the writes
beside them (annotate, edit, delete), each get → change → save; `verify_all` records re-anchoring
(`code3 loom verify`, the worker) — read tools only show the current best anchor, never record it.

Every path goes through the shared resolver; a secret annotation's comment and quoted text never leave
(the store keeps them sealed); `internal` ones are shared only when the server is configured to.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from eventsourcing.persistence import IntegrityError
from pydantic import Field

from adapters.event_store import Change
from adapters.home import project_secrets_dir
from adapters.paths import PathRefused, ProjectPaths
from adapters.private_files import read_or_create_private
from adapters.redact import redact
from adapters.sealing import CredentialSealer
from adapters.secret_box import SecretBox
from domain.anchor import Anchor, file_digest
from domain.annotation import Annotation, Sealer
from domain.annotation_rules import DEFAULT_PRIORITY, check_client_key, format_ann_id, parse_ann_id
from domain.errors import Code
from domain.stitch import MAX_CHARS_DEFAULT, MAX_CHARS_MIN, StitchItem, stitch
from mcp_tools import answer_size
from mcp_tools.ai_loom.answers import AnnotationView, DeleteAnswer, ListAnswer, StitchAnswer
from mcp_tools.ai_loom.errors import LoomError, loom_errors
from mcp_tools.ai_loom.reading import UNREAD, ReadBudget
from mcp_tools.declare import tool
from mcp_tools.services import Services
from projections import annotations as store_rows
from projections.annotations import AnnotationIndex
from projections.runner import follow

READ = ("ai-loom",)
MAX_PAGE = 200
MAX_STITCH_IDS = 10_000
SAVE_ATTEMPTS = 25  # optimistic-concurrency retries of one write (racing edits of one annotation)
ID_KEY_FILE = "annotation_ids.key"

Priority = Literal["P0", "P1", "P2"]
Sensitivity = Literal["public", "internal", "secret"]
AnnId = Annotated[str, Field(description="an annotation id (ann_…)", max_length=40)]


def _sealer(s: Services) -> Sealer:
    """The wiring's sealer; for hand-built services, one in the project's secrets directory (CODE3_HOME)."""
    if s.sealer is None:
        s.sealer = SecretBox(project_secrets_dir(s.project))
    box = s.sealer
    return box if isinstance(box, CredentialSealer) else CredentialSealer(box)  # credentials sealed too


def _shares_internal(s: Services) -> bool:
    """CODE3_LOOM_SHARE_INTERNAL: a server setting, never an argument the model can set."""
    return s.loom_share_internal


def _paths(s: Services) -> ProjectPaths:
    """The project's path resolver, built once per Services (resolving the root costs a few syscalls)."""
    if s.paths is None:
        s.paths = ProjectPaths(s.project)
    return s.paths


def _text(s: Services, file_path: str) -> str | None:
    """The file's current text, or None when it is gone or cannot be read (the anchor is then orphaned)."""
    try:
        return _paths(s).read_text(file_path)
    except PathRefused:
        return None


def _load(s: Services, ann_id: str) -> Annotation:
    found = s.store.get(Annotation, parse_ann_id(ann_id))
    if found is None or found.deleted:
        raise LoomError(Code.NOT_FOUND, f"no annotation {ann_id}", "list the annotations (ai-loom.list_contexts)")
    return found


def _fresh(s: Services) -> None:
    """Read your writes: the annotation store catches up with the log before a read."""
    follow(s.store, s.views, AnnotationIndex(s.store))


def _shown(s: Services, view: dict[str, Any]) -> dict[str, Any]:
    """What a tool answers: no unshared internal comment, and a comment's credentials redacted (a model reads it)."""
    if view["sensitivity"] == "internal" and not _shares_internal(s):
        return {**view, "comment": None}
    if view.get("comment"):
        return {**view, "comment": redact(view["comment"]).text}
    return view


def _for_model(item: StitchItem) -> StitchItem:
    """A stitch item with the credentials of its comment and snippet redacted (adapters/redact.py)."""
    return replace(item, comment=redact(item.comment).text,
                   snippet=None if item.snippet is None else redact(item.snippet).text)


def _write(s: Services, ann_id: str, apply: Callable[[Annotation | None], Annotation | None],
           known: Annotation | None = None, new: bool = False) -> Annotation | None:
    """Load, change and save one annotation, retried (with a short random pause) when a racing write saved
    first, as the lifecycle's units of work are: racing edits all land, each on the other's result. Spent
    retries answer a coded error, never INTERNAL."""
    uuid = parse_ann_id(ann_id)
    for attempt in range(SAVE_ATTEMPTS):
        first = attempt == 0
        try:
            return s.store.update_all(Change(Annotation, uuid, apply, known if first else None, new and first),
                                      attempts=1)[0]
        except IntegrityError:
            time.sleep(random.uniform(0, min(0.05, 0.002 * 2**attempt)))
    raise LoomError(Code.PRECONDITION, f"annotation {ann_id} is being written by others at this moment",
                    "retry in a moment")


def _current(s: Services, annotation: Annotation, text: str | None,
             reading: ReadBudget | None = None) -> dict[str, Any]:
    """The view with the current best anchor (nothing recorded), searched for within the read's budget."""
    view = annotation.view(_sealer(s))
    where = annotation.locate(text, _sealer(s), (reading or ReadBudget()).find)
    if where.found:
        view.update(startLine=where.start_line, endLine=where.end_line)
    view["anchor"] = {"status": where.status, "confidence": where.confidence, "reason": where.reason}
    return _shown(s, view)


@tool("ai-loom.list_contexts", profiles=READ, read_only=True, open_world=False)
@loom_errors
def list_contexts(
    s: Services,
    kind: Annotated[Literal["annotation"] | None, Field(description="only 'annotation' exists")] = "annotation",
    limit: Annotated[int | None, Field(description=f"page size, 1-{MAX_PAGE} (default 50)")] = 50,
    offset: Annotated[int | None, Field(description="where the page starts (nextOffset of the last page)")] = 0,
) -> ListAnswer:
    """List annotations (priority, then file, then line), a page at a time."""
    size = 50 if limit is None else limit
    start = 0 if offset is None else offset
    if not 1 <= size <= MAX_PAGE or not 0 <= start <= 10**9:
        raise LoomError(Code.VALIDATION, f"limit must be 1-{MAX_PAGE} and offset 0 or more",
                        "omit them for the first 50")
    _fresh(s)
    views, more = store_rows.page(s.views, size, start)
    texts: dict[str, str | None] = {}
    items, reading = [], ReadBudget()
    for view in views:
        path = view["filePath"]
        if path not in texts:
            texts[path] = UNREAD if reading.expired() else _text(s, path)
        items.append(_current(s, _load(s, view["id"]), texts[path], reading))
    answer: dict[str, Any] = {"items": items}
    if more:
        answer["nextOffset"] = start + size
    return answer_size.cut_page(answer, "items", start)  # type: ignore[return-value]


@tool("ai-loom.get_context", profiles=READ, read_only=True, open_world=False)
@loom_errors
def get_context(s: Services, id: AnnId) -> AnnotationView:
    """One annotation, with where its lines are now."""
    annotation = _load(s, id)
    return _current(s, annotation, _text(s, annotation.file_path))  # type: ignore[return-value]


@tool("ai-loom.stitch", profiles=READ, read_only=True, open_world=False)
@loom_errors
def stitch_contexts(
    s: Services,
    templateId: Annotated[Literal["concise", "detailed"] | None, Field(description="concise (default) or detailed")]
    = "concise",
    annotationIds: Annotated[list[str] | None, Field(description="the annotations to stitch (default: all)",
                                                     max_length=MAX_STITCH_IDS)] = None,
    maxChars: Annotated[int | None, Field(description=f"character budget, 200-200000 (default {MAX_CHARS_DEFAULT})")]
    = MAX_CHARS_DEFAULT,
) -> StitchAnswer:
    """Stitch annotations into one prompt within maxChars characters, highest priority first."""
    if annotationIds:
        chosen = [_load(s, i) for i in dict.fromkeys(annotationIds)]
    else:
        _fresh(s)
        chosen = [_load(s, i) for i in store_rows.ids(s.views, MAX_STITCH_IDS)]
    texts: dict[str, str | None] = {}
    items, reading = [], ReadBudget()
    for annotation in chosen:
        if annotation.file_path not in texts:
            texts[annotation.file_path] = UNREAD if reading.expired() else _text(s, annotation.file_path)
        items.append(_for_model(annotation.stitch_item(texts[annotation.file_path], _sealer(s), reading.find)))
    budget = MAX_CHARS_DEFAULT if maxChars is None else maxChars
    whole = stitch(items, templateId or "concise", budget, include_internal=_shares_internal(s))

    def within(chars: int) -> dict[str, Any]:  # the answer cap may allow fewer characters than maxChars
        result = whole if chars == budget else stitch(items, templateId or "concise", chars,
                                                      include_internal=_shares_internal(s))
        answer = result.as_dict()
        if chars < budget:
            answer.update(truncated=True, omitted=whole.annotations - result.annotations)
        return answer

    return answer_size.largest_fitting(within, min(MAX_CHARS_MIN, budget), budget)[1]  # type: ignore[return-value]


def _anchor(s: Services, file_path: str, start_line: int, end_line: int) -> tuple[str, Anchor]:
    paths = _paths(s)
    real = paths.resolve(file_path)
    return paths.relative(real), Anchor.capture(paths.read_text(file_path), start_line, end_line)


@tool("ai-loom.annotate", profiles=(), idempotent=True, open_world=False)
@loom_errors
def annotate(
    s: Services,
    filePath: Annotated[str, Field(description="file path relative to the project root")],
    startLine: Annotated[int, Field(description="first annotated line (1-based)")],
    endLine: Annotated[int, Field(description="last annotated line (inclusive)")],
    comment: Annotated[str, Field(description="the note (Markdown)")],
    tags: Annotated[list[str] | None, Field(description="tags, lower-case [a-z0-9_-]{2,50}")] = None,
    priority: Annotated[Priority, Field(description="P0 (highest) to P2")] = DEFAULT_PRIORITY,  # type: ignore[assignment]
    sensitivity: Annotated[Sensitivity, Field(description="secret never leaves; internal only when shared")]
    = "public",
    clientKey: Annotated[str | None, Field(description="idempotency key: a repeat answers the same annotation")]
    = None,
) -> AnnotationView:
    """Annotate a line range of a file (beyond the seed: its MCP side is read-only)."""
    relative, anchor = _anchor(s, filePath, startLine, endLine)
    sealer = _sealer(s)
    at = datetime.now(UTC)
    repeat: list[bool] = []

    def create(existing: Annotation | None) -> Annotation | None:
        repeat[:] = [existing is not None]
        if existing is not None:
            _check_replay(s, existing, sealer, file_path=relative, start_line=startLine, end_line=endLine,
                          comment=comment, tags=tags or (), priority=priority, sensitivity=sensitivity)
            return None
        return Annotation.create(file_path=relative, anchor=anchor, comment=comment, at=at, tags=tags or (),
                                 priority=priority, sensitivity=sensitivity, client_key=keyed, sealer=sealer)

    if clientKey is None:
        keyed = None
        created = create(None)
        assert created is not None
        s.store.save(created)
        return _current(s, created, _text(s, relative))  # type: ignore[return-value]
    keyed = _keyed(s, clientKey)
    legacy = s.store.get(Annotation, Annotation.id_for_key(clientKey))  # made before ids were keyed
    if legacy is not None:
        create(legacy)
        return _current(s, legacy, _text(s, relative))  # type: ignore[return-value]
    found = _write(s, format_ann_id(Annotation.id_for_key(keyed)), create, new=True)
    assert found is not None
    return _current(s, found, _text(s, relative))  # type: ignore[return-value]


def _keyed(s: Services, client_key: str) -> str:
    """The idempotency key as ids are derived from it: HMAC-SHA256 under a per-project secret kept beside the
    annotations' key (CODE3_HOME/projects/<key>/annotation_ids.key, created on first use), so nobody can
    compute offline which id a key gives."""
    check_client_key(client_key)
    where = getattr(_sealer(s).box, "path", None)  # the SecretBox's key file
    if where is None:
        raise LoomError(Code.INTERNAL, "idempotency keys need the keystore's sealer", "configure a SecretBox")
    secret = read_or_create_private(Path(where).parent / ID_KEY_FILE, os.urandom(32))
    return hmac.new(secret, client_key.encode(), hashlib.sha256).hexdigest()


def _check_replay(s: Services, existing: Annotation, sealer: Sealer, **request: Any) -> None:
    """A create repeating a client key answers the annotation that key made. The request is compared with
    the first one only when the caller can read everything it carried (a public annotation whose texts are
    not sealed, or an internal one the server shares): otherwise a refusal for a wrong comment and the
    annotation for the right one would confirm guesses at a text the caller may not read (a secret's
    comment, a sealed credential). So a replay answers the same way whether a guess was right or not."""
    readable = not existing.sealed_texts and (existing.sensitivity == "public" or (
        existing.sensitivity == "internal" and _shares_internal(s)))
    if readable and not existing.is_repeat_of(sealer=sealer, **request):
        raise LoomError(Code.VALIDATION, "this clientKey already created another annotation",
                        "use a new clientKey for a new annotation")


@tool("ai-loom.edit", profiles=(), open_world=False)
@loom_errors
def edit(
    s: Services,
    id: AnnId,
    comment: Annotated[str | None, Field(description="the new note")] = None,
    tags: Annotated[list[str] | None, Field(description="the new tags")] = None,
    priority: Annotated[Priority | None, Field(description="P0 to P2")] = None,
    sensitivity: Annotated[Sensitivity | None, Field(description="only rises: public < internal < secret (the owner "
                                                                 "lowers one with code3 loom lower)")] = None,
    startLine: Annotated[int | None, Field(description="a new first line (with endLine)")] = None,
    endLine: Annotated[int | None, Field(description="a new last line (with startLine)")] = None,
) -> AnnotationView:
    """Edit an annotation; what is omitted stays."""
    annotation = _load(s, id)
    anchor = None
    if (startLine is None) != (endLine is None):
        raise LoomError(Code.VALIDATION, "startLine and endLine go together", "pass both, or neither")
    if startLine is not None and endLine is not None:
        _, anchor = _anchor(s, annotation.file_path, startLine, endLine)
    at, sealer = datetime.now(UTC), _sealer(s)

    def change(current: Annotation | None) -> Annotation | None:
        live = _live(current, id)
        return live if live.edit(at=at, comment=comment, tags=tags, priority=priority, sensitivity=sensitivity,
                                 anchor=anchor, sealer=sealer) else None

    edited = _live(_write(s, id, change, known=annotation), id)
    return _current(s, edited, _text(s, edited.file_path))  # type: ignore[return-value]


def _live(found: Annotation | None, ann_id: str) -> Annotation:
    if found is None or found.deleted:
        raise LoomError(Code.NOT_FOUND, f"no annotation {ann_id}", "list the annotations (ai-loom.list_contexts)")
    return found


@tool("ai-loom.delete", profiles=(), destructive=True, open_world=False)
@loom_errors
def delete(s: Services, id: AnnId) -> DeleteAnswer:
    """Delete an annotation (its history stays in the log); a repeat changes nothing."""
    at, deleted = datetime.now(UTC), [False]

    def change(current: Annotation | None) -> Annotation | None:
        if current is None:
            raise LoomError(Code.NOT_FOUND, f"no annotation {id}", "list the annotations (ai-loom.list_contexts)")
        deleted[0] = current.delete(at=at)
        return current if deleted[0] else None

    found = _write(s, id, change)
    assert found is not None
    return {"success": True, "id": found.ann_id, "deleted": deleted[0]}


def verify_all(s: Services) -> dict[str, int]:
    """Re-anchor every live annotation on its file's current text and record the outcomes
    (Reanchored / Orphaned); counts by status. What `code3 loom verify` runs."""
    _fresh(s)
    counts: dict[str, int] = {}
    for path, ann_ids in store_rows.ids_by_file(s.views).items():
        _verify(s, ann_ids, _text(s, path), counts)
    return counts


def verify_changed(s: Services, seen: dict[str, str | None], budget: int | None = None) -> dict[str, int]:
    """`verify_all` for the files whose text changed since the last call (the worker's step): `seen` maps a
    path to the digest of its text at the last call (None: gone or unreadable) and is updated in place; a
    path not in it counts as changed, so the first call verifies everything. An unchanged file's
    annotations are skipped without loading them (each was anchored on that very text when it was last
    created, edited or verified). Counts by status of the annotations verified, `recorded`: the events
    written, and `pending`: 1 when `budget` (annotations verified per call, whole files at a time) stopped
    the pass before the last changed file (the next call goes on from there)."""
    _fresh(s)
    counts: dict[str, int] = {"recorded": 0, "pending": 0}
    grouped = store_rows.ids_by_file(s.views)
    verified = 0
    for path, ann_ids in grouped.items():
        text = _text(s, path)
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
    sealer, outcome = _sealer(s), {"status": "", "added": 0}

    def check(current: Annotation | None) -> Annotation | None:
        live = _live(current, ann_id)
        before = live.version
        outcome["status"] = live.verify(text, at=datetime.now(UTC), sealer=sealer).status
        outcome["added"] = live.version - before
        return live if outcome["added"] else None

    _write(s, ann_id, check, known=_load(s, ann_id))
    return str(outcome["status"]), int(outcome["added"])


@loom_errors
def lower(s: Services, id: str, to: str, by: str) -> dict[str, Any]:
    """Lower an annotation's sensitivity: the owner's act at the CLI (`code3 loom lower`), never a tool or a
    route (there a sensitivity only rises). Recorded as SensitivityLowered naming `by`; the answer carries
    no text (a sealed one stays sealed in the log)."""
    at, seen = datetime.now(UTC), {"from": "", "lowered": False}

    def change(current: Annotation | None) -> Annotation | None:
        live = _live(current, id)
        seen.update({"from": live.sensitivity, "lowered": live.lower(to=to, by=by, at=at)})
        return live if seen["lowered"] else None

    lowered = _live(_write(s, id, change), id)
    return {"id": lowered.ann_id, "from": seen["from"], "to": lowered.sensitivity, "lowered": seen["lowered"],
            "by": by}


@loom_errors
def reveal(s: Services, id: str) -> dict[str, Any]:
    """One annotation with its comment opened, secret and internal ones included: for the owner's CLI
    (`code3 loom show --reveal`) only, never a tool or a route."""
    annotation = _load(s, id)
    text = _text(s, annotation.file_path)
    view = _current(s, annotation, text)
    view["comment"] = annotation.view(_sealer(s), reveal=True)["comment"]
    return view
