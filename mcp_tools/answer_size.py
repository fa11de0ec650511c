"""One cap for a whole tool answer as the client receives it: the JSON-RPC line, not the payload.

A success answer of a tool with an output schema carries its payload twice (the JSON text content, escaped
inside a JSON string, and the structuredContent object), so a payload of N bytes makes a line of about 2N; a tool
whose seed defines its answer as text (`mcp_tools.catalog.TEXT_ANSWERS`) sends the text alone (`text_only`). The
cap (`CODE3_MAX_ANSWER_BYTES`, 48 KB by default) bounds that line, so that what a client shows its model arrives
whole: Claude Code saves an answer over 25 000 tokens to a file and shows the first 80 000 characters of it, and
shows structuredContent rather than the text when there is one. 48 KB keeps a text page under 50 000 characters
and a structured page near 24 KB (room for a client that pretty-prints it), well inside the ai-loom seed's
256 KB response cap. Tools whose answers can grow (prepare, batch, ai-loom.list_contexts, ai-loom.stitch,
query_files, sync_renames) cut themselves with the helpers below and say what they left out and how to get it
(stateless offsets); every other answer that would still exceed the cap is refused with a coded error rather
than sent (`answer`). A cut answer puts what continues it first (`continuation`, `nextOffset`, `next_offset`): a
reader of a file cut short finds it.

The payload is serialised once (`encode`), and that JSON is the text content too; what a sub-object adds
to the line is computed from its own JSON (`cost`), so a cut is found without re-serialising the answer.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from domain.errors import Code, Code3Error

if TYPE_CHECKING:  # `import mcp` costs most of a second: the worker and the CLI import this module without a server
    from mcp.types import CallToolResult

Page = TypeVar("Page", bound=Mapping[str, Any])

VARIABLE = "CODE3_MAX_ANSWER_BYTES"
DEFAULT_MAX_ANSWER_BYTES = 49_152
MIN_ANSWER_BYTES = 4096
ENVELOPE = 1024
"""Bytes kept for the line's envelope: `{"jsonrpc":"2.0","id":…,"result":{"content":[{"type":"text","text":…}],
"structuredContent":…}}` (about 100 bytes) and the client's request id, whatever its length up to ~900."""
# how many copies of the payload the answer being built carries: 2 (text and structuredContent), or 1 in `text_only`
_COPIES: contextvars.ContextVar[int] = contextvars.ContextVar("code3_answer_copies", default=2)


@contextlib.contextmanager
def text_only() -> Iterator[None]:
    """Within it, answers are costed and built as text alone (no structuredContent): a TEXT_ANSWERS tool's call."""
    token = _COPIES.set(1)
    try:
        yield
    finally:
        _COPIES.reset(token)


def limit(env: dict[str, str] | None = None) -> int:
    """The cap in bytes of a JSON-RPC answer line: CODE3_MAX_ANSWER_BYTES, else 48 KB."""
    raw = (os.environ if env is None else env).get(VARIABLE, "").strip()
    if not raw:
        return DEFAULT_MAX_ANSWER_BYTES
    if not raw.isdigit() or int(raw) < MIN_ANSWER_BYTES:
        raise Code3Error(Code.VALIDATION, f"{VARIABLE} must be a whole number of bytes, at least {MIN_ANSWER_BYTES}",
                         f"unset it for the default ({DEFAULT_MAX_ANSWER_BYTES}) or set e.g. {VARIABLE}=524288")
    return int(raw)


def encode(data: Any) -> str:
    """The payload's JSON, compact: the text content of a success and what structuredContent serialises to."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _on_line(text: str) -> int:
    """Bytes a JSON text adds to the line: escaped in the text content (each `"` and `\\` of it gains a backslash
    there; a JSON text has no raw control characters), and again as structuredContent unless `text_only`."""
    return _COPIES.get() * len(text.encode("utf-8")) + text.count('"') + text.count("\\")


def cost(value: Any) -> int:
    """Bytes `value` adds to the line (both copies, or the text's alone in `text_only`)."""
    return _on_line(encode(value))


def line_bytes(text: str, payload: str) -> int:
    """The line's size, given the text content and the payload's JSON (the envelope included)."""
    shown = json.dumps(text, ensure_ascii=False)
    return ENVELOPE + len(shown.encode("utf-8")) + len(payload.encode("utf-8"))


class AnswerTooLarge(Code3Error):
    def __init__(self, size: int, cap: int, hint: str = "") -> None:
        super().__init__(Code.VALIDATION, f"the answer would be {size} bytes, over the {cap}-byte cap "
                         f"({VARIABLE})", hint or "ask for less (a narrower path, a smaller limit or fewer ids), "
                         f"or raise {VARIABLE}")


def answer(data: dict[str, Any], render: Callable[[Any], str] | None = None) -> CallToolResult:
    """A success answer within the cap: the payload serialised once, as the text content (unless the tool
    renders its own text) and as structuredContent (unless `text_only`). Raises AnswerTooLarge when the line
    would exceed the cap."""
    structured = _COPIES.get() == 2
    payload = encode(data)
    text = payload if render is None else render(data)
    cap = limit()
    size = ENVELOPE + _on_line(payload) if render is None else line_bytes(text, payload if structured else "")
    if size > cap:
        raise AnswerTooLarge(size, cap)
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=data if structured else None)


def room(base: dict[str, Any]) -> int:
    """Bytes left under the cap for what will be added to `base` (the answer with its growing parts empty)."""
    return limit() - ENVELOPE - cost(base)


def fit_items(costs: Iterable[int], budget: int) -> int:
    """How many of the leading items (each costing `costs[i]` bytes) fit in `budget` bytes, with their
    separating commas (one in each copy). `costs` is read only as far as the items fit (it may be lazy)."""
    count = used = 0
    for each in costs:
        used += each + (2 if count else 0)
        if used > budget:
            break
        count += 1
    return count


def fit_text(text: str, budget: int) -> int:
    """How many leading characters of `text` fit in `budget` bytes more than an empty string costs."""
    empty = cost("")
    if cost(text) - empty <= budget:
        return len(text)
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cost(text[:mid]) - empty <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def leading(first: Mapping[str, Any], rest: Mapping[str, Any]) -> dict[str, Any]:
    """`rest` with the entries of `first` put (or moved) first: where an answer says how it continues, so that a
    reader of an answer cut short (a client that saved it to a file and shows its beginning) finds it."""
    return {**first, **{k: v for k, v in rest.items() if k not in first}}


def cut_page(page: Page, key: str, start: int, next_key: str = "nextOffset") -> Page:
    """A page (`page[key]`, the items from `start`) within the cap: `page` itself when it fits (its `next_key`
    first, when it has a next page); else the leading items that fit, with `next_key` (nextOffset, CodeNexus's
    next_offset) at the first one left out, `truncated: true` and `omitted` (items left out), first, whether or
    not the page had a next one (a client paging on it misses nothing)."""
    items = page[key]
    base = leading({next_key: start + len(items), "truncated": True, "omitted": len(items)}, {**page, key: []})
    budget = room(base)
    kept = fit_items((cost(item) for item in items), budget)
    if kept == len(items):
        return cast(Page, leading({next_key: page[next_key]}, page)) if next_key in page else page
    if kept == 0 and items:
        raise AnswerTooLarge(cost(items[0]) + limit() - budget, limit(),
                             f"item {start} alone exceeds the cap; raise {VARIABLE}")
    # the same page with fewer items: a paged answer's type declares `truncated`, `omitted` and `next_key`
    cut = leading({next_key: start + kept, "truncated": True, "omitted": len(items) - kept},
                  {**page, key: items[:kept]})
    return cast(Page, cut)


def largest_fitting(build: Callable[[int], dict[str, Any]], lower: int, upper: int) -> tuple[int, dict[str, Any]]:
    """`build(n)` for the largest n in lower..upper whose answer fits the cap, `build` growing with n (a
    budget argument, such as stitch's maxChars); AnswerTooLarge when not even `build(lower)` fits."""
    cap = limit()

    def fits(n: int) -> tuple[bool, dict[str, Any]]:
        built = build(n)
        return ENVELOPE + cost(built) <= cap, built

    ok, best = fits(upper)
    if ok:
        return upper, best
    ok, best = fits(lower)
    if not ok:
        raise AnswerTooLarge(ENVELOPE + cost(best), cap)
    lo, hi = lower, upper - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        ok, built = fits(mid)
        if ok:
            lo, best = mid, built
        else:
            hi = mid - 1
    return lo, best


def cut_lists(answer: dict[str, Any], keys: Sequence[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """`answer` within the cap: itself when it fits; else its lists `keys` cut to their leading items (filled
    in that order), with `truncated: true`, `omitted` (the items left out) and `extra` (where to find them).
    For an answer that cannot be asked again (a write's report): what it left out is counted, never lost."""
    if ENVELOPE + cost(answer) <= limit():
        return answer
    total = sum(len(answer[key]) for key in keys)
    out = leading({"truncated": True, "omitted": total, **(extra or {})}, {**answer, **{key: [] for key in keys}})
    budget = room(out)
    for key in keys:
        items = answer[key]
        kept = fit_items((cost(item) for item in items), budget - 2)
        out[key] = items[:kept]
        budget -= sum(cost(item) for item in items[:kept]) + 2 * kept
        if kept < len(items):
            break
    out["omitted"] = total - sum(len(out[key]) for key in keys)
    return out
