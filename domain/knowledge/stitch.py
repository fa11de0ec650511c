"""Stitch annotations into one prompt under a character budget (pure; the caller supplies current snippets).

Order: priority (P0 first), then file, then line. The budget keeps the longest prefix of that order
that fits, so whole annotations are dropped lowest priority first and, within a priority, last in
order first; no annotation is ever kept while one before it in the order was dropped. The result
never exceeds `max_chars` characters (Python str length), headers and footer included.

Sensitivity: a `secret` annotation contributes one summary line (its place, never its comment, tags
or snippet); an `internal` one is left out unless the server shares internal annotations
(`include_internal`, a setting, not a tool argument).

`truncated` says the budget cut something (an annotation dropped, or the final text cut); a
template's fixed shortening of long snippets is not a cut. The token estimate is ceil(chars / 4),
a local estimate, not a tokenizer's count.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from domain.errors import Code, Code3Error

Template = Literal["concise", "detailed"]
TEMPLATES: tuple[str, ...] = ("concise", "detailed")
PRIORITY_RANK = {"P0": 0, "P1": 1, "P2": 2}
MAX_CHARS_DEFAULT = 4000
MAX_CHARS_MIN = 200
MAX_CHARS_MAX = 200_000
RESPONSE_LIMIT = 262_144
"""Every tool or route answer is capped at 256 KB of UTF-8 (cap_response)."""
CONCISE_KEEP = 60
DETAILED_KEEP_LINES = 20
CHARS_PER_TOKEN = 4

_FENCE_LANG = {".py": "python", ".ts": "ts", ".tsx": "tsx", ".js": "js", ".jsx": "jsx", ".go": "go", ".rs": "rust",
               ".java": "java", ".rb": "ruby", ".c": "c", ".h": "c", ".cpp": "cpp", ".cs": "csharp", ".sh": "bash",
               ".md": "markdown", ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".sql": "sql"}


@dataclass(frozen=True)
class StitchItem:
    """One annotation as stitch sees it. `snippet` is the file's current text at the (re-)anchored
    lines, or None when the anchor is orphaned or the file cannot be read."""

    id: str
    file_path: str
    start_line: int
    end_line: int
    comment: str
    priority: str = "P1"
    sensitivity: str = "public"
    snippet: str | None = None
    tags: tuple[str, ...] = ()
    status: str = "exact"


@dataclass(frozen=True)
class StitchResult:
    prompt: str
    annotations: int
    files: int
    truncated: bool
    dropped: list[str] = field(default_factory=list)

    @property
    def chars(self) -> int:
        return len(self.prompt)

    @property
    def token_estimate(self) -> int:
        return token_estimate(self.prompt)

    def as_dict(self) -> dict[str, Any]:
        """The tools' answer: the seed's {prompt, stats} plus the dropped ids and the token estimate."""
        return {
            "prompt": self.prompt,
            "stats": {"annotations": self.annotations, "chars": self.chars, "files": self.files,
                      "truncated": self.truncated},
            "dropped": list(self.dropped),
            "tokenEstimate": self.token_estimate,
        }


def token_estimate(text: str) -> int:
    """An estimate (about four characters a token), not a tokenizer's count."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def check_max_chars(max_chars: int) -> int:
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or not (
            MAX_CHARS_MIN <= max_chars <= MAX_CHARS_MAX):
        raise Code3Error(Code.VALIDATION, f"maxChars must be an integer from {MAX_CHARS_MIN} to {MAX_CHARS_MAX}",
                         f"omit it for the default {MAX_CHARS_DEFAULT}")
    return max_chars


def check_template(template: str) -> Template:
    if template not in TEMPLATES:
        raise Code3Error(Code.VALIDATION, "unknown templateId", "use 'concise' or 'detailed'")
    return template  # type: ignore[return-value]


def order(items: Iterable[StitchItem]) -> list[StitchItem]:
    return sorted(items, key=lambda a: (PRIORITY_RANK.get(a.priority, 9), a.file_path, a.start_line, a.end_line,
                                        a.id))


def fence_for(text: str) -> str:
    """Three backticks, or one more than the longest run of backticks inside the text."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def shorten(snippet: str, template: Template) -> str:
    """The template's fixed shortening of a long snippet, in the middle, with an omission marker."""
    if template == "concise":
        omitted = len(snippet) - 2 * CONCISE_KEEP
        marker = f"<<<OMITTED ~{omitted} CHARS>>>"
        if omitted <= len(marker):
            return snippet
        return snippet[:CONCISE_KEEP] + marker + snippet[-CONCISE_KEEP:]
    lines = snippet.split("\n")
    omitted = len(lines) - 2 * DETAILED_KEEP_LINES
    if omitted <= 1:
        return snippet
    return "\n".join([*lines[:DETAILED_KEEP_LINES], f"<<<OMITTED ~{omitted} LINES>>>", *lines[-DETAILED_KEEP_LINES:]])


def _where(a: StitchItem) -> str:
    lines = f"{a.start_line}" if a.start_line == a.end_line else f"{a.start_line}-{a.end_line}"
    return f"{a.file_path}:{lines}"


def _code(a: StitchItem, template: Template) -> str:
    if a.snippet is None and a.status == "stale":
        return "(the file changed and the annotated code was not searched for again yet; the worker will)\n"
    if a.snippet is None:
        return "(the annotated code could not be found in the current file; the note may be out of date)\n"
    body = shorten(a.snippet, template)
    fence = fence_for(body)
    dot = a.file_path.rfind(".")
    lang = _FENCE_LANG.get(a.file_path[dot:], "") if dot > a.file_path.rfind("/") else ""
    return f"{fence}{lang}\n{body}\n{fence}\n"


def render(a: StitchItem, template: Template) -> str:
    """One annotation's block. A secret annotation renders as its summary line only."""
    if a.sensitivity == "secret":
        return f"## [{a.priority}] [secret annotation at {_where(a)}]\n\n"
    if template == "concise":
        tags = f" #{' #'.join(a.tags)}" if a.tags else ""
        return f"## [{a.priority}] {_where(a)}{tags}\n{a.comment}\n{_code(a, template)}\n"
    facts = [f"- priority: {a.priority}"]
    if a.tags:
        facts.append(f"- tags: {', '.join(a.tags)}")
    if a.sensitivity != "public":
        facts.append(f"- sensitivity: {a.sensitivity}")
    if a.status in _ANCHOR_NOTES:
        facts.append(f"- anchor: {a.status} ({_ANCHOR_NOTES[a.status]})")
    return (f"## {_where(a)}\n" + "\n".join(facts) + f"\n\n### Note\n{a.comment}\n\n"
            f"### Code (lines {a.start_line}-{a.end_line})\n{_code(a, template)}\n")


_ANCHOR_NOTES = {"moved": "the lines moved since the note was written",
                 "fuzzy": "the code changed a little since the note was written",
                 "orphaned": "the annotated code is no longer found",
                 "stale": "the file changed and the lines were not searched for again yet; where they were"}


def _header(template: Template) -> str:
    if template == "concise":
        return "# Code annotations\n\n"
    return ("# Code annotations (detailed)\n\nEach section is a note on a range of the project's current files, "
            "most important first.\n\n")


def _footer(dropped: int, room: int) -> str:
    """The notice of what the budget left out, in the `room` characters the kept annotations leave: the
    long form, else a short one, else none (`dropped` and `stats.truncated` still say it)."""
    if not dropped:
        return ""
    for notice in (f"[{dropped} more annotation(s) left out to fit the character budget]\n", f"[+{dropped} dropped]\n"):
        if len(notice) <= room:
            return notice
    return ""


def stitch(items: Sequence[StitchItem], template: str = "concise", max_chars: int = MAX_CHARS_DEFAULT,
           include_internal: bool = False) -> StitchResult:
    """The prompt for `items` within `max_chars` characters; see the module's docstring for the rules.

    An annotation that fits is never dropped to make room for the notice of what was left out: the notice
    takes the room that remains (shortened or left out when there is too little)."""
    tpl = check_template(template)
    budget = check_max_chars(max_chars)
    eligible = order(a for a in items if a.sensitivity != "internal" or include_internal)
    header = _header(tpl)
    if not eligible:
        text = header + "(no annotations)\n"
        return StitchResult(text[:budget], 0, 0, truncated=len(text) > budget)
    n = len(eligible)
    blocks: list[str] = []
    used = len(header)
    for a in eligible:  # the longest prefix that fits
        block = render(a, tpl)
        if used + len(block) > budget:  # no longer prefix can fit: the rest is never rendered
            break
        blocks.append(block)
        used += len(block)
    keep = len(blocks)
    prompt = header + "".join(blocks) + _footer(n - keep, budget - used)
    cut = len(prompt) > budget
    if cut:  # not even the header fits: an empty-ish prompt, marked truncated
        prompt = prompt[:budget]
    kept = eligible[:keep]
    return StitchResult(prompt, keep, len({a.file_path for a in kept}), truncated=cut or keep < n,
                        dropped=[a.id for a in eligible[keep:]])


def _utf8_size(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False).encode("utf-8"))


def cap_response(obj: dict[str, Any], limit: int = RESPONSE_LIMIT, offset: int | None = None) -> dict[str, Any]:
    """`obj` itself when its JSON is within `limit` bytes of UTF-8; else a copy whose longest list (the
    items of a page) or, failing that, longest string (a prompt) is cut to fit, with `truncated: true`
    (and `omitted`, the number of list items left out). A page's `nextOffset` then points at the first
    item left out (give `offset`, the page's own, when the page had none: it was the last). A stitch
    answer's stats follow its cut prompt. Raises E_VALIDATION when nothing can be cut enough."""
    if _utf8_size(obj) <= limit:
        return obj
    out = dict(obj)
    out["truncated"] = True
    lists = [k for k, v in out.items() if isinstance(v, list) and v]
    if lists:
        key = max(lists, key=lambda k: _utf8_size(out[k]))
        items = out[key]

        def with_items(count: int) -> dict[str, Any]:
            cut = {**out, key: items[:count], "omitted": len(items) - count}
            if isinstance(out.get("nextOffset"), int):
                cut["nextOffset"] = out["nextOffset"] - (len(items) - count)
            elif offset is not None:
                cut["nextOffset"] = offset + count
            return cut

        count = _largest_fitting(len(items), lambda c: _utf8_size(with_items(c)) <= limit)
        if count is not None:
            return with_items(count)
    strings = [k for k, v in out.items() if isinstance(v, str) and v]
    if strings:
        key = max(strings, key=lambda k: len(out[k].encode("utf-8")))
        text = out[key]

        def with_text(chars: int) -> dict[str, Any]:
            cut = {**out, key: text[:chars]}
            if key == "prompt" and isinstance(out.get("stats"), dict):
                cut["stats"] = {**out["stats"], "chars": chars, "truncated": True}
                if "tokenEstimate" in out:
                    cut["tokenEstimate"] = token_estimate(text[:chars])
            return cut

        chars = _largest_fitting(len(text), lambda c: _utf8_size(with_text(c)) <= limit)
        if chars is not None:
            return with_text(chars)
    raise Code3Error(Code.VALIDATION, f"the answer would exceed {limit} bytes",
                     "ask for fewer items (limit) or a smaller maxChars")


def _largest_fitting(upper: int, fits: Any) -> int | None:
    """The largest n in 0..upper with fits(n), fits being monotone (true up to some n); None if not even 0."""
    if not fits(0):
        return None
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
