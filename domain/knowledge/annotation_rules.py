"""The rules of an ai-loom annotation, each checked once where the aggregate takes its input, and its ids.

Ids are "ann_" + the aggregate's 128-bit UUID in 26 Crockford base32 characters (ULID-shaped): the
UUID is derived from the client's idempotency key when there is one (a repeated create collides
instead of duplicating), else 48 bits of milliseconds then 80 random bits (time-ordered).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING
from uuid import UUID

from domain.canonical import natural_id
from domain.errors import Code, Code3Error

if TYPE_CHECKING:
    from domain.knowledge.anchor import Anchor

PRIORITIES = ("P0", "P1", "P2")
SENSITIVITIES = ("public", "internal", "secret")
DEFAULT_PRIORITY = "P1"
MAX_COMMENT_CHARS = 4000
MAX_TAGS = 16
TAG = re.compile(r"^[a-z0-9_-]{2,50}$")  # as CodeNexus tags, so both share one vocabulary
MAX_LINES = 1000
MAX_QUOTE_CHARS = 100_000
MAX_PATH_CHARS = 1024
CLIENT_KEY = re.compile(r"^[\x21-\x7e]{1,128}$")
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ANN_ID = re.compile(r"^ann_[0-7][0-9A-HJKMNP-TV-Z]{25}$")

def invalid(message: str, hint: str) -> Code3Error:
    """An E_VALIDATION error that never echoes the input (it may be long or secret)."""
    return Code3Error(Code.VALIDATION, message, hint)


def format_ann_id(uuid: UUID) -> str:
    n = uuid.int
    return "ann_" + "".join(CROCKFORD[(n >> (5 * i)) & 31] for i in reversed(range(26)))


def parse_ann_id(ann_id: str) -> UUID:
    """The aggregate id behind an `ann_…` id (E_VALIDATION when it is not one)."""
    if not isinstance(ann_id, str) or not ANN_ID.fullmatch(ann_id):
        raise invalid("not an annotation id", "ids look like ann_ followed by 26 characters (0-9, A-Z without ILOU)")
    n = 0
    for ch in ann_id[4:]:
        n = (n << 5) | CROCKFORD.index(ch)
    return UUID(int=n)


def annotation_uuid(at: datetime, client_key: str | None = None, entropy: int | None = None) -> UUID:
    """With a client key: derived from it, so a repeated create collides instead of duplicating.
    Without: ULID-like, 48 bits of milliseconds since the epoch then 80 random bits (time-ordered)."""
    if client_key is not None:
        return natural_id("annotation", check_client_key(client_key))
    millis = int(at.timestamp() * 1000) & ((1 << 48) - 1)
    rand = secrets.randbits(80) if entropy is None else entropy & ((1 << 80) - 1)
    return UUID(int=(millis << 80) | rand)


# rules, each checked once at the boundary of the aggregate


def check_client_key(key: str) -> str:
    if not isinstance(key, str) or not CLIENT_KEY.fullmatch(key):
        raise invalid("invalid idempotency key", "use 1-128 printable ASCII characters without spaces")
    return key


def check_path(path: str) -> str:
    """A relative POSIX path inside the project (the path resolver then checks the file itself)."""
    if (not isinstance(path, str) or not path or len(path) > MAX_PATH_CHARS or path.startswith("/")
            or "\\" in path or any(ord(c) < 32 or ord(c) == 127 for c in path)
            or any(part in ("", ".", "..") for part in path.split("/"))):
        raise invalid("invalid filePath", "give a path relative to the project root, with '/' separators, "
                       "no '..' and at most 1024 characters")
    return path


def check_range(start_line: int, end_line: int) -> tuple[int, int]:
    for v in (start_line, end_line):
        if isinstance(v, bool) or not isinstance(v, int):
            raise invalid("startLine and endLine must be integers", "lines count from 1")
    if not 1 <= start_line <= end_line:
        raise invalid(f"invalid line range {start_line}-{end_line}", "use 1 <= startLine <= endLine")
    if end_line - start_line + 1 > MAX_LINES:
        raise invalid(f"an annotation covers at most {MAX_LINES} lines", "annotate a smaller range")
    return start_line, end_line


def check_anchor(anchor: Anchor) -> Anchor:
    """At most MAX_LINES lines and MAX_QUOTE_CHARS characters of quoted text."""
    check_range(anchor.start_line, anchor.end_line)
    if len(anchor.selected_text) > MAX_QUOTE_CHARS:
        raise invalid(f"the annotated lines hold more than {MAX_QUOTE_CHARS} characters", "annotate fewer lines")
    return anchor


def check_comment(comment: str) -> str:
    if not isinstance(comment, str) or not comment.strip():
        raise invalid("the comment is empty", "say what the annotation is about")
    if len(comment) > MAX_COMMENT_CHARS:
        raise invalid(f"the comment is longer than {MAX_COMMENT_CHARS} characters", "shorten it")
    if "\x00" in comment:
        raise invalid("the comment contains a NUL character", "remove it")
    return comment


def check_tags(tags: Iterable[str]) -> list[str]:
    """Lower-case [a-z0-9_-]{2,50}, at most MAX_TAGS; repeats collapse, first order kept."""
    if isinstance(tags, str):
        raise invalid("tags must be a list", 'give a list such as ["perf"]')
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str) or not TAG.fullmatch(tag):
            raise invalid("invalid tag", "tags are 2-50 characters of a-z, 0-9, '_' or '-'")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise invalid(f"more than {MAX_TAGS} tags", "keep the tags that matter")
    return out


def check_priority(priority: str) -> str:
    if priority not in PRIORITIES:
        raise invalid("invalid priority", "use P0, P1 or P2")
    return priority


def check_sensitivity(sensitivity: str) -> str:
    if sensitivity not in SENSITIVITIES:
        raise invalid("invalid sensitivity", "use public, internal or secret")
    return sensitivity


