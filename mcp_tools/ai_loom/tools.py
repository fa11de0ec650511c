"""The ai-loom tools: the seed's three read-only ones (list_contexts, get_context, stitch) and the writes
beside them (annotate, edit, delete), each get → change → save through `access`. Read tools only show the
current best anchor, never record it: recording is the re-anchoring jobs' (`reanchoring`); the owner's own
commands (`owner`) are no tool.

Every path goes through the shared resolver; a secret annotation's comment and quoted text never leave
(the store keeps them sealed); `internal` ones are shared only when the server is configured to.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from adapters.private_files import read_or_create_private
from adapters.redact import redact
from domain.errors import Code
from domain.knowledge.anchor import Anchor
from domain.knowledge.annotation import Annotation, Sealer
from domain.knowledge.annotation_rules import DEFAULT_PRIORITY, check_client_key, format_ann_id
from domain.knowledge.stitch import MAX_CHARS_DEFAULT, MAX_CHARS_MIN, StitchItem, stitch
from mcp_tools import answer_size
from mcp_tools.ai_loom import access
from mcp_tools.ai_loom.answers import AnnotationView, DeleteAnswer, ListAnswer, StitchAnswer
from mcp_tools.ai_loom.errors import LoomError, loom_errors
from mcp_tools.ai_loom.reading import UNREAD, ReadBudget
from mcp_tools.declare import tool
from mcp_tools.services import Services
from projections.knowledge import annotations as store_rows

READ = ("ai-loom",)
MAX_PAGE = 200
MAX_STITCH_IDS = 10_000
ID_KEY_FILE = "annotation_ids.key"

Priority = Literal["P0", "P1", "P2"]
Sensitivity = Literal["public", "internal", "secret"]
AnnId = Annotated[str, Field(description="an annotation id (ann_…)", max_length=40)]


def _for_model(item: StitchItem) -> StitchItem:
    """A stitch item with the credentials of its comment and snippet redacted (adapters/redact.py)."""
    return replace(item, comment=redact(item.comment).text,
                   snippet=None if item.snippet is None else redact(item.snippet).text)


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
    access.fresh(s)
    views, more = store_rows.page(s.views, size, start)
    texts: dict[str, str | None] = {}
    items, reading = [], ReadBudget()
    for view in views:
        path = view["filePath"]
        if path not in texts:
            texts[path] = UNREAD if reading.expired() else access.text(s, path)
        items.append(access.current(s, access.load(s, view["id"]), texts[path], reading))
    answer: dict[str, Any] = {"items": items}
    if more:
        answer["nextOffset"] = start + size
    return answer_size.cut_page(answer, "items", start)  # type: ignore[return-value]


@tool("ai-loom.get_context", profiles=READ, read_only=True, open_world=False)
@loom_errors
def get_context(s: Services, id: AnnId) -> AnnotationView:
    """One annotation, with where its lines are now."""
    annotation = access.load(s, id)
    return access.current(s, annotation, access.text(s, annotation.file_path))  # type: ignore[return-value]


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
        chosen = [access.load(s, i) for i in dict.fromkeys(annotationIds)]
    else:
        access.fresh(s)
        chosen = [access.load(s, i) for i in store_rows.ids(s.views, MAX_STITCH_IDS)]
    texts: dict[str, str | None] = {}
    items, reading = [], ReadBudget()
    for annotation in chosen:
        if annotation.file_path not in texts:
            texts[annotation.file_path] = UNREAD if reading.expired() else access.text(s, annotation.file_path)
        items.append(_for_model(annotation.stitch_item(texts[annotation.file_path], access.sealer(s), reading.find)))
    budget = MAX_CHARS_DEFAULT if maxChars is None else maxChars
    whole = stitch(items, templateId or "concise", budget, include_internal=access.shares_internal(s))

    def within(chars: int) -> dict[str, Any]:  # the answer cap may allow fewer characters than maxChars
        result = whole if chars == budget else stitch(items, templateId or "concise", chars,
                                                      include_internal=access.shares_internal(s))
        answer = result.as_dict()
        if chars < budget:
            answer.update(truncated=True, omitted=whole.annotations - result.annotations)
        return answer

    return answer_size.largest_fitting(within, min(MAX_CHARS_MIN, budget), budget)[1]  # type: ignore[return-value]


def _anchor(s: Services, file_path: str, start_line: int, end_line: int) -> tuple[str, Anchor]:
    paths = access.paths(s)
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
    sealer = access.sealer(s)
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
        return access.current(s, created, access.text(s, relative))  # type: ignore[return-value]
    keyed = _keyed(s, clientKey)
    legacy = s.store.get(Annotation, Annotation.id_for_key(clientKey))  # made before ids were keyed
    if legacy is not None:
        create(legacy)
        return access.current(s, legacy, access.text(s, relative))  # type: ignore[return-value]
    found = access.write(s, format_ann_id(Annotation.id_for_key(keyed)), create, new=True)
    assert found is not None
    return access.current(s, found, access.text(s, relative))  # type: ignore[return-value]


def _keyed(s: Services, client_key: str) -> str:
    """The idempotency key as ids are derived from it: HMAC-SHA256 under a per-project secret kept beside the
    annotations' key (CODE3_HOME/projects/<key>/annotation_ids.key, created on first use), so nobody can
    compute offline which id a key gives."""
    check_client_key(client_key)
    where = getattr(access.sealer(s).box, "path", None)  # the SecretBox's key file
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
        existing.sensitivity == "internal" and access.shares_internal(s)))
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
    annotation = access.load(s, id)
    anchor = None
    if (startLine is None) != (endLine is None):
        raise LoomError(Code.VALIDATION, "startLine and endLine go together", "pass both, or neither")
    if startLine is not None and endLine is not None:
        _, anchor = _anchor(s, annotation.file_path, startLine, endLine)
    at, sealer = datetime.now(UTC), access.sealer(s)
    edited, _ = access.step(s, id, lambda a: a.edit(at=at, comment=comment, tags=tags, priority=priority,
                                                    sensitivity=sensitivity, anchor=anchor, sealer=sealer),
                            known=annotation)
    return access.current(s, edited, access.text(s, edited.file_path))  # type: ignore[return-value]


@tool("ai-loom.delete", profiles=(), destructive=True, open_world=False)
@loom_errors
def delete(s: Services, id: AnnId) -> DeleteAnswer:
    """Delete an annotation (its history stays in the log); a repeat changes nothing."""
    at = datetime.now(UTC)
    found, deleted = access.step(s, id, lambda a: a.delete(at=at), deleted_too=True)
    return {"success": True, "id": found.ann_id, "deleted": deleted}
