"""What the CodeNexus tools answer (the seed's response shapes; a few fields beyond it are marked)."""

from __future__ import annotations

from typing import NotRequired

from pydantic import ConfigDict, with_config

# pydantic builds schemas of nested TypedDicts only from typing_extensions' TypedDict on Python < 3.12
from typing_extensions import TypedDict

STRICT = ConfigDict(extra="forbid")


@with_config(STRICT)
class AddTagAnswer(TypedDict):
    success: bool
    message: str
    added_tags: list[str]
    total_tags: int
    updated_at: str


@with_config(STRICT)
class RemoveTagAnswer(TypedDict):
    success: bool
    message: str
    removed_tags: list[str]
    total_tags: int
    updated_at: str


@with_config(STRICT)
class AddCommentAnswer(TypedDict):
    success: bool
    message: str
    comment_length: int
    updated_at: str


@with_config(STRICT)
class Relationship(TypedDict):
    source: str
    target: str
    type: str
    description: str
    origin: NotRequired[str]  # beyond the seed: "manual" or "derived"


@with_config(STRICT)
class CreateRelationshipAnswer(TypedDict):
    success: bool
    message: str
    relationship: Relationship
    created_at: str


@with_config(STRICT)
class RemoveRelationshipAnswer(TypedDict):
    success: bool
    message: str
    removed: bool


@with_config(STRICT)
class QueryResult(TypedDict):
    file_path: str
    tags: list[str]
    comment: str
    match_reason: str


@with_config(STRICT)
class QueryFilesAnswer(TypedDict):
    success: bool
    results: list[QueryResult]
    total_count: int
    query_time_ms: float
    next_offset: NotRequired[int]  # beyond the seed: where the next page starts, when there is one
    truncated: NotRequired[bool]  # beyond the seed: the answer cap (CODE3_MAX_ANSWER_BYTES) cut the page
    omitted: NotRequired[int]  # beyond the seed: the results that cap left out (they start at next_offset)
    # beyond the seed, only when false: total_count is an estimate (a broad query whose count needs a check per
    # row, extrapolated from the first rows of its most selective index; the pages themselves are exact)
    total_count_exact: NotRequired[bool]


@with_config(STRICT)
class DescribeTagAnswer(TypedDict):
    success: bool
    message: str
    name: str
    description: str
    color: str


@with_config(STRICT)
class UnresolvedReasons(TypedDict):
    """Why imports made no edge (they sum to unresolved_imports): external — a package, not a project file
    (standard library, an installed dependency, a module outside the project); not_found — a relative import
    naming no file of the project; outside_root — a relative import climbing above the project root; dynamic —
    a specifier computed at run time (`require(name)`, a template string); refused — a file the resolver
    never reads (a key, a secret, the state directory, a symlink leading out)."""

    external: int
    not_found: int
    outside_root: int
    dynamic: int
    refused: int


@with_config(STRICT)
class DeriveAnswer(TypedDict):
    success: bool
    message: str
    files_scanned: int
    created: int
    removed: int
    kept_manual: int
    unresolved_imports: int
    unresolved_by_reason: UnresolvedReasons  # beyond the seed: unresolved_imports broken down


@with_config(STRICT)
class Move(TypedDict):
    old_path: str
    new_path: str


@with_config(STRICT)
class SyncAnswer(TypedDict):
    success: bool
    message: str
    moved: list[Move]
    skipped: list[str]
    baseline: str
    # beyond the seed, only when the answer cap (CODE3_MAX_ANSWER_BYTES) cut the lists: the moves and skips
    # left out (the message counts every move; `git diff -M --name-status <since> <baseline>` lists them)
    truncated: NotRequired[bool]
    omitted: NotRequired[int]
    since: NotRequired[str]
