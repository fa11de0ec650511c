"""Re-anchoring: find an annotated line range again in a file's current text (pure computation, no I/O).

An anchor keeps the quoted lines, up to three lines of context on each side, the file's digest and
how many times the quote occurred in the file (the Hypothesis-style "quote, prefix, suffix" selector,
by lines). Finding it again goes from the surest evidence to the least sure:

1. the file's digest is unchanged → exact, same lines;
2. the quoted lines occur verbatim: once, at the same lines → exact; once elsewhere → moved (a short
   quote also needs its context, or to have been unique when captured and no edited copy where it
   was); several times → the copy whose context, on both sides, clearly matches best (intact, when
   the quote already had copies at capture); copies in a run of identical lines that changed → none;
3. the same with whitespace collapsed (re-indented, re-spaced) → fuzzy;
4. when copies exist but none is surely ours and one has gone missing since capture: that one edited
   where it was (same line count, both contexts intact, very close text) → fuzzy;
5. windows of about the quote's length scored against the quote and the context, edges aligned line by
   line (anchor_match.py): close text with agreeing context, an edited block between its intact
   context, or a long block moved and barely edited → fuzzy, with a confidence;
6. otherwise orphaned, with the reason.

Never silently wrong: a short quote found elsewhere without its context, two near-equal candidates, an
unclear edge or a weak similarity all give orphaned, which a person can re-attach, rather than a
doubtful anchor. benchmarks/reanchor.py measures both sides of that trade.

What an anchor and a result are, and the line primitives, are domain/knowledge/anchor_model.py's (re-exported
here: this module is what callers import); the evidence of steps 2 to 5 is weighed in anchor_match.py.
"""

from __future__ import annotations

from domain.knowledge.anchor_match import IN_PLACE_CONTEXT, Matcher
from domain.knowledge.anchor_model import (
    CONTEXT_CHARS,
    CONTEXT_LINES,
    Anchor,
    AnchorResult,
    Status,
    context_of,
    file_digest,
    occurrences,
    orphaned,
    split_lines,
)

__all__ = ["CONTEXT_CHARS", "CONTEXT_LINES", "Anchor", "AnchorResult", "Status", "file_digest", "quick", "reanchor",
           "search_cost", "snippet_at", "split_lines", "stale"]


def snippet_at(text: str, start_line: int, end_line: int) -> str:
    """Lines start_line..end_line (1-based, inclusive) of a text: what stitch shows for an anchor."""
    return "\n".join(split_lines(text)[start_line - 1 : end_line])


def quick(anchor: Anchor, text: str | None, digest: str | None = None,
          lines: list[str] | None = None) -> AnchorResult | None:
    """The cases settled without a search, in time linear in the file: the file gone, its digest unchanged,
    or the quoted lines with their context still verbatim at the same lines and the quote nowhere else in
    the text (what step 2 would answer). None otherwise. `digest` and `lines` (the text's, when the caller
    has them for several anchors on one file) save computing them again."""
    if text is None:
        return orphaned("the file no longer exists")
    if (digest or file_digest(text)) == anchor.file_digest:
        return AnchorResult("exact", anchor.start_line, anchor.end_line, 1.0, "file unchanged")
    if lines is None:
        need = anchor.end_line + CONTEXT_LINES
        pieces = text.split("\n", need)  # the lines up to the context after the block, the rest in one piece
        lines = pieces[:need] if len(pieces) > need else split_lines(text)
    if (anchor.end_line <= len(lines) and anchor.selected_text.strip()
            and "\n".join(lines[anchor.start_line - 1 : anchor.end_line]) == anchor.selected_text
            and context_of(lines, anchor.start_line, anchor.end_line) == (anchor.context_before, anchor.context_after)
            and text.count(anchor.selected_text) == 1):
        return AnchorResult("exact", anchor.start_line, anchor.end_line, 1.0,
                            "selected text and its context unchanged at the same lines")
    return None


def search_cost(anchor: Anchor, text: str) -> int:
    """About how much work a full `reanchor` does, in characters of the file: its windows and line
    comparisons are linear in the file, and comparing the quote with a few dozen windows costs about twenty
    times the quote's length (a big quote is compared line by line, anchor_match._lines_similarity; a small
    one's exact ratio is cheap). Measured on 20 000 to 100 000-line files with 10 to 1 000-line quotes."""
    return len(text) + 20 * len(anchor.selected_text)


def stale(anchor: Anchor) -> AnchorResult:
    """The answer of a read that left the search to the worker: the lines where the anchor was last found."""
    return AnchorResult("stale", anchor.start_line, anchor.end_line, 0.0,
                        "the file changed and the anchor was not searched for yet; the lines are where it was last "
                        "found (the worker re-anchors it)")


def reanchor(anchor: Anchor, text: str | None) -> AnchorResult:
    """Where the anchored lines are in the file's current text (None: the file is gone)."""
    if text is None:
        return orphaned("the file no longer exists")
    if file_digest(text) == anchor.file_digest:
        return AnchorResult("exact", anchor.start_line, anchor.end_line, 1.0, "file unchanged")
    match = Matcher(anchor, text)
    blank = not anchor.selected_text.strip()
    for lines, quote, exact in ((match.lines, match.quote, True), (match.norm, match.quote_norm, False)):
        starts = occurrences(lines, quote)
        if starts:
            doubt = match.verbatim(starts, exact)
            if doubt.found or blank:
                return doubt
            if len(starts) >= anchor.occurrences:
                return doubt  # as many copies as when captured: ours may be any of them
            if max(match.context_score(s, s + match.k - 1) for s in starts) >= IN_PLACE_CONTEXT:
                return doubt  # copies that fit in their context: no edited one may win over them
            # the text is there, but where is in doubt: an edited copy in place may still settle it
            result = match.fuzzy()
            lo, hi = result.start_line or 0, result.end_line or 0
            if (result.found and not any(s <= hi and lo <= s + match.k - 1 for s in starts)
                    and match.clearly_in_place(lo, hi)):
                return result
            return doubt
    if blank:
        return orphaned("the annotated blank lines are gone")
    return match.fuzzy()
