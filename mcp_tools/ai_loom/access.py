"""Reading and writing one annotation, for every ai-loom path: the MCP tools (`tools`), the re-anchoring jobs
(`reanchoring`), the owner's commands (`owner`) and the web page's file view (`mcp_tools.web.knowledge`).

Here, once: the project's sealer and path resolver, a file's current text, loading an annotation (a deleted
one is NOT_FOUND), catching the annotation index up with the log (read your writes), the get → change → save
of one annotation with its retries, and the view a caller is shown (the current best anchor, nothing recorded;
no unshared internal comment; credentials redacted).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from eventsourcing.persistence import IntegrityError

from adapters.event_store import Change
from adapters.home import project_secrets_dir
from adapters.paths import PathRefused, ProjectPaths
from adapters.redact import redact
from adapters.sealing import CredentialSealer
from adapters.secret_box import SecretBox
from domain.errors import Code, present
from domain.knowledge.annotation import Annotation
from domain.knowledge.annotation_rules import parse_ann_id
from mcp_tools.ai_loom.errors import LoomError
from mcp_tools.ai_loom.reading import ReadBudget
from mcp_tools.services import Services
from projections.knowledge.annotations import AnnotationIndex
from projections.runner import follow

SAVE_ATTEMPTS = 25  # optimistic-concurrency retries of one write (racing edits of one annotation)


def sealer(s: Services) -> CredentialSealer:
    """The wiring's box (for hand-built services, one in the project's secrets directory, CODE3_HOME) as a sealer
    that also judges credentials: a text bearing one is sealed whatever its sensitivity."""
    if s.sealer is None:
        s.sealer = SecretBox(project_secrets_dir(s.project))
    box = s.sealer
    return box if isinstance(box, CredentialSealer) else CredentialSealer(box)  # credentials sealed too


def shares_internal(s: Services) -> bool:
    """CODE3_LOOM_SHARE_INTERNAL: a server setting, never an argument the model can set."""
    return s.loom_share_internal


def paths(s: Services) -> ProjectPaths:
    """The project's path resolver, built once per Services (resolving the root costs a few syscalls)."""
    if s.paths is None:
        s.paths = ProjectPaths(s.project)
    return s.paths


def text(s: Services, file_path: str) -> str | None:
    """The file's current text, or None when it is gone or cannot be read (the anchor is then orphaned)."""
    try:
        return paths(s).read_text(file_path)
    except PathRefused:
        return None


def load(s: Services, ann_id: str) -> Annotation:
    """The live annotation `ann_id`; NOT_FOUND when there is none or it was deleted."""
    found = s.store.get(Annotation, parse_ann_id(ann_id))
    if found is None or found.deleted:
        raise LoomError(Code.NOT_FOUND, f"no annotation {ann_id}", "list the annotations (ai-loom.list_contexts)")
    return found


def live(found: Annotation | None, ann_id: str) -> Annotation:
    """`found` when it is a live annotation; NOT_FOUND otherwise (gone, or deleted by a racing write)."""
    if found is None or found.deleted:
        raise LoomError(Code.NOT_FOUND, f"no annotation {ann_id}", "list the annotations (ai-loom.list_contexts)")
    return found


def fresh(s: Services) -> None:
    """Read your writes: the annotation index catches up with the log before a read (the tools' list and stitch,
    the re-anchoring passes and the web page's file view all call it first)."""
    follow(s.store, s.views, AnnotationIndex(s.store))


def write(s: Services, ann_id: str, apply: Callable[[Annotation | None], Annotation | None],
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


def step(s: Services, ann_id: str, rule: Callable[[Annotation], bool], known: Annotation | None = None,
         deleted_too: bool = False) -> tuple[Annotation, bool]:
    """Get → decide → save of one annotation by one of its rules (`edit`, `lower`, `delete`: each records what
    it decides and says whether it recorded anything), with `write`'s retries: the annotation as saved and
    whether the rule recorded. NOT_FOUND when there is none, or when it was deleted (unless `deleted_too`: a
    repeated delete finds it deleted and records nothing)."""
    recorded = [False]

    def apply(current: Annotation | None) -> Annotation | None:
        annotation = current if deleted_too and current is not None else live(current, ann_id)
        recorded[0] = rule(annotation)  # a redo on newer state decides afresh
        return annotation if recorded[0] else None

    return present(write(s, ann_id, apply, known), f"annotation {ann_id}"), recorded[0]


def current(s: Services, annotation: Annotation, file_text: str | None,
            reading: ReadBudget | None = None) -> dict[str, Any]:
    """The view with the current best anchor (nothing recorded), searched for within the read's budget."""
    view = annotation.view(sealer(s))
    where = annotation.locate(file_text, sealer(s), (reading or ReadBudget()).find)
    if where.found:
        view.update(startLine=where.start_line, endLine=where.end_line)
    view["anchor"] = {"status": where.status, "confidence": where.confidence, "reason": where.reason}
    return _shown(s, view)


def _shown(s: Services, view: dict[str, Any]) -> dict[str, Any]:
    """What a tool answers: no unshared internal comment, and a comment's credentials redacted (a model reads it)."""
    if view["sensitivity"] == "internal" and not shares_internal(s):
        return {**view, "comment": None}
    if view.get("comment"):
        return {**view, "comment": redact(view["comment"]).text}
    return view
