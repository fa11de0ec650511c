"""What the ai-loom tools and routes answer: the seed's shapes, declared once (output schemas, OpenAPI)."""

from __future__ import annotations

from typing import Literal, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic builds nested TypedDict schemas only from this on Python < 3.12

STRICT = ConfigDict(extra="forbid")


@with_config(STRICT)
class AnchorState(TypedDict):
    # stale: the file changed and a read's search budget was spent before this anchor; the lines are where it
    # was last found, and the worker's re-anchoring pass records where it is now
    status: Literal["exact", "moved", "fuzzy", "orphaned", "stale"]
    confidence: float
    reason: str


@with_config(STRICT)
class AnnotationView(TypedDict):
    """The seed's Annotation; `comment` is null for a secret annotation (and for an internal one when the
    server does not share internal annotations); `anchor` says where the lines are now."""

    id: str
    filePath: str
    startLine: int
    endLine: int
    comment: str | None
    tags: list[str]
    priority: str
    sensitivity: str
    createdAt: str
    updatedAt: str
    anchor: AnchorState


@with_config(STRICT)
class ListAnswer(TypedDict):
    items: list[AnnotationView]
    nextOffset: NotRequired[int]  # where the next page starts; also when the answer cap cut the last page
    truncated: NotRequired[bool]  # the answer cap (CODE3_MAX_ANSWER_BYTES, 48 KB by default) cut the page
    omitted: NotRequired[int]  # the items the cap left out (they start at nextOffset)


@with_config(STRICT)
class StitchStats(TypedDict):
    annotations: int
    chars: int
    files: int
    truncated: bool


@with_config(STRICT)
class StitchAnswer(TypedDict):
    prompt: str
    stats: StitchStats
    dropped: list[str]  # beyond the seed: the ids the budget left out
    tokenEstimate: int  # beyond the seed: about chars / 4, an estimate
    truncated: NotRequired[bool]  # the answer cap allowed fewer characters than maxChars
    omitted: NotRequired[int]  # annotations that cap left out (listed in dropped: stitch them in another call)


@with_config(STRICT)
class DeleteAnswer(TypedDict):
    success: bool
    id: str
    deleted: bool  # false when it was deleted already
