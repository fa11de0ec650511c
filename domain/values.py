"""Value objects for the inputs that recur: each validated once, by a full match (no trailing newline
slips through), with bounded length and a canonical form, used by handlers and adapters alike.

Each `parse_*` returns the canonical value or raises `Code3Error(E_VALIDATION)` whose hint says what
a valid value looks like.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NewType
from urllib.parse import urlsplit

from domain.errors import Code, Code3Error

U64_MAX = 2**64 - 1

# What a parse returns keeps its type from a tool's arguments to the aggregate, so a checker sees a value that was
# checked once travel as checked (no str re-parsed downstream): free at run time (NewType is the value itself).
Repo = NewType("Repo", str)  # owner/name, as parse_repo accepted it
FeatureId = NewType("FeatureId", str)  # NNN-slug
Branch = NewType("Branch", str)  # by git's ref rules
Amount = NewType("Amount", int)  # in the asset's smallest unit, within u64
CommitSha = NewType("CommitSha", str)  # 7 to 64 lowercase hex digits
MAX_DURATION = 10 * 365 * 24 * 3600  # ten years, far inside u64 once added to any chain clock

_REPO = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9_.-]{1,100}")
_FEATURE_ID = re.compile(r"\d{3}-[a-z0-9]+(?:-[a-z0-9]+)*")
_TASK_ID = re.compile(r"(?P<repo>[^#\s]{3,141})#(?P<number>[1-9][0-9]{0,9})")
_DIGITS = re.compile(r"0|[1-9][0-9]{0,19}")
_SHA = re.compile(r"[0-9a-f]{7,64}")
_BRANCH_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")


def _invalid(what: str, value: object, hint: str) -> Code3Error:
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    return Code3Error(Code.VALIDATION, f"invalid {what} {shown}", hint)


def _text(what: str, value: object, max_len: int, hint: str) -> str:
    if not isinstance(value, str) or not value or len(value) > max_len:
        raise _invalid(what, value, hint)
    return value


def parse_repo(value: object) -> Repo:
    text = _text("repository", value, 141, "use the form owner/repo")
    if not _REPO.fullmatch(text) or text.split("/")[1] in (".", ".."):
        raise _invalid("repository", value, "use the form owner/repo (letters, digits, '-', '_', '.')")
    return Repo(text)


def parse_feature_id(value: object) -> FeatureId:
    hint = "use NNN-slug: three digits, a dash, lower-case words joined by dashes (e.g. 001-login), at most 64 chars"
    text = _text("feature_id", value, 64, hint)
    if not _FEATURE_ID.fullmatch(text):
        raise _invalid("feature_id", value, hint)
    return FeatureId(text)


@dataclass(frozen=True)
class TaskId:
    repo: str
    number: int

    def __str__(self) -> str:
        return f"{self.repo}#{self.number}"


def parse_task_id(value: object) -> TaskId:
    hint = "use the form owner/repo#123"
    match = _TASK_ID.fullmatch(_text("task_id", value, 160, hint))
    if not match:
        raise _invalid("task_id", value, hint)
    return TaskId(parse_repo(match["repo"]), int(match["number"]))


@dataclass(frozen=True)
class ForgeUrl:
    """An issue or pull request URL on one forge: `<base>/owner/repo/(issues|pull)/N`."""

    base: str
    repo: str
    kind: str
    number: int

    def __str__(self) -> str:
        return f"{self.base}/{self.repo}/{self.kind}/{self.number}"


def parse_forge_url(value: object, kind: str | None = None, base: str | None = None) -> ForgeUrl:
    """`kind` ("issues" or "pull") and `base` (the forge's web base URL) are enforced when given."""
    hint = f"pass a URL of the form {base or '<base>'}/owner/repo/{kind or 'issues|pull'}/N"
    text = _text("URL", value, 400, hint)
    parts = urlsplit(text)
    path = parts.path.rstrip("/").split("/")
    if (parts.scheme not in ("http", "https", "local") or not parts.netloc or parts.query or parts.fragment
            or len(path) != 5 or path[3] not in ("issues", "pull") or not _DIGITS.fullmatch(path[4])
            or path[4] == "0" or text != text.strip()):
        raise _invalid("URL", value, hint)
    url = ForgeUrl(f"{parts.scheme}://{parts.netloc}", parse_repo(f"{path[1]}/{path[2]}"), path[3], int(path[4]))
    if kind is not None and url.kind != kind:
        raise _invalid("URL", value, hint)
    if base is not None and url.base.lower() != base.rstrip("/").lower():
        raise Code3Error(Code.VALIDATION, f"{text} is not on this forge ({base})",
                         f"pass a URL on {base}: the bounty's PRs and issues live there")
    return url


def parse_comment_url(value: object, base: str | None = None) -> tuple[ForgeUrl, int]:
    """An issue or PR comment's URL, `<base>/owner/repo/issues/N#issuecomment-ID` (GitHub's `html_url` of a
    comment; `pull/N` too): the issue or PR, and the comment's id."""
    hint = f"pass a comment URL of the form {base or '<base>'}/owner/repo/issues/N#issuecomment-ID"
    text = _text("comment URL", value, 400, hint)
    page, _, fragment = text.partition("#")
    found = re.fullmatch(r"issuecomment-([1-9][0-9]{0,19})", fragment)
    if not found:
        raise _invalid("comment URL", value, hint)
    return parse_forge_url(page, base=base), int(found[1])


def parse_branch(value: object) -> Branch:
    """A branch name by git's ref rules (check-ref-format), at most 200 characters."""
    hint = "use a git branch name such as feat/003-web-ai-agent (no spaces, '..', '~^:?*[\\', '@{', leading '-')"
    text = _text("branch", value, 200, hint)
    if (_BRANCH_FORBIDDEN.search(text) or text.startswith(("-", "/", ".")) or text.endswith(("/", ".", ".lock"))
            or "/." in text or ".lock/" in text or text == "@"):
        raise _invalid("branch", value, hint)
    return Branch(text)


def parse_amount(value: object, allow_zero: bool = False, what: str = "amount") -> Amount:
    """A decimal string of digits in the asset's smallest unit, within the chain's u64 range (`what`: the argument's
    name, as the refusal says it)."""
    hint = f'pass {what} as a string of digits in the asset\'s smallest unit, e.g. "1000000" (at most 2^64-1)'
    text = _text(what, value, 20, hint)
    if not _DIGITS.fullmatch(text) or int(text) > U64_MAX or (int(text) == 0 and not allow_zero):
        raise _invalid(what, value, hint)
    return Amount(int(text))


def parse_duration(value: object, what: str = "duration") -> int:
    """Seconds, a positive integer of at most ten years (a JSON integer, never a string or a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_DURATION:
        raise _invalid(what, value, f"pass a whole number of seconds between 1 and {MAX_DURATION}")
    return value


def parse_commit_sha(value: object) -> CommitSha:
    text = _text("commit_sha", value, 64, "pass the commit id as 7 to 64 lower-case hex digits")
    if not _SHA.fullmatch(text):
        raise _invalid("commit_sha", value, "pass the commit id as 7 to 64 lower-case hex digits")
    return CommitSha(text)


def parse_project_path(value: object, max_len: int = 1024) -> str:
    """A path relative to the project root, written with `/`: no NUL or control character, not absolute,
    no `..` segment. Whether it exists, and what it may be, the adapters' path resolver decides."""
    hint = "pass a path relative to the project root, such as src/main.py"
    text = _text("path", value, max_len, hint)
    if any(ord(c) < 32 or ord(c) == 127 for c in text) or "\\" in text:
        raise _invalid("path", value, hint)
    posix = text.removeprefix("./")
    segments = posix.split("/")
    if posix.startswith("/") or re.match(r"[A-Za-z]:", posix) or ".." in segments or not posix:
        raise _invalid("path", value, hint)
    return "/".join(s for s in segments if s not in ("", ".")) or "."
