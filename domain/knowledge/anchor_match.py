"""How re-anchoring weighs its evidence (domain/knowledge/anchor.py runs the steps): verbatim occurrences told
apart by their context, fuzzy windows over the file scored against the quote and the context, their
edges aligned line by line through difflib, and the checks that turn a doubtful match into orphaned.

Similarities are rapidfuzz's normalized Indel similarity (0-1) on lines with whitespace collapsed.
Context is compared position by position from the line nearest the block, so a shifted context
does not match. The thresholds below were set on benchmarks/reanchor.py's generated corpus, with
"never wrong" first and "found" second.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from rapidfuzz import fuzz, process
from rapidfuzz.distance import Indel, LCSseq

from domain.knowledge.anchor_model import (
    CONTEXT_LINES,
    Anchor,
    AnchorResult,
    Status,
    orphaned,
    split_lines,
)

FUZZY_THRESHOLD = 0.8
"""Least similarity of the quote to a candidate window for a fuzzy anchor."""
SURE_QUOTE = 0.9
"""A quote this similar is accepted even where its context changed (moved and edited)."""
CONTEXT_AGREES = 0.5
CONTEXT_DISAMBIGUATES = 0.85
"""Context a copy needs to be taken for the annotated one among several."""
MARGIN = 0.15
"""How much better the best copy's context must match than the next one's."""
ONE_SIDED = 0.9
"""A perfect context on one side only (the block was at the file's start or end) scores this."""
BOTH_SIDES = 0.95
"""Context this close needs both sides: what an edited copy in place must show to beat a verbatim one."""
FUZZY_MARGIN = 0.05
"""A fuzzy candidate elsewhere scoring within this of the best makes the match ambiguous."""
DISTINCTIVE_CHARS = 30
"""A quote with fewer non-blank characters is too common to trust when found elsewhere alone."""
IN_PLACE_CONTEXT = 0.9
"""Surroundings this close to the stored context (line for line) locate an edited block in place..."""
IN_PLACE_QUOTE = 0.75
"""...when its text is still this similar to the quote (or contains it, or is contained in it)."""
LONG_QUOTE_CHARS = 40
REPLACED_LINE = 0.6
KEPT_WORDS = 0.7
DOUBLE_EDGE = 0.9
LENGTH_PENALTY = 0.02
"""Per line of difference from the quote's length, when ranking candidate windows."""
TRIM_GAIN = 0.03
SHIFT_MARGIN = 0.3
SAME_LINE = 0.9
MOVED_QUOTE = 0.93
QUOTE_MARGIN = 0.1
"""A block taken on its text alone (a new context) needs every other candidate this much less similar."""
SHORT_UNIQUE_CHARS = 8
"""A shorter quote found once elsewhere needs its context even when it was unique in the file."""
BRUTE_FORCE_WINDOWS = 40_000
WINDOW_SLACK = 2
"""Candidate windows are the quote's length ± this; alignment then finds the exact edges."""
MAX_SPREAD = 20
MAX_TRIM = 6
BIG_QUOTE_LINES = 40
BIG_QUOTE_CHARS = 4000
"""Past this size only the few windows sharing the most lines with the quote are compared in full."""
NEAREST_LINE = 0.74
STRETCH_PAIRS = 250_000
"""Changed stretches of a big quote compared character by character when this small (length times length)."""

_WORD = re.compile(r"\w+")


@lru_cache(maxsize=2)
def _lines_of(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A text's lines and their whitespace-collapsed forms, kept for the last texts: the worker re-anchors
    every annotation of a changed file on the same text (200 on a 100 000-line file normalised it 200
    times). Tuples, so no caller can change what the next one gets."""
    lines = tuple(split_lines(text))
    return lines, tuple(_norm(line) for line in lines)


def _norm(line: str) -> str:
    return " ".join(line.split())


def _similarity(a: str, b: str) -> float:
    if not a and not b:
        return 1.0
    return fuzz.ratio(a, b) / 100.0


def _side(stored: Sequence[str], actual: Sequence[str]) -> float:
    """How well the lines beside a candidate match the stored context on one side, nearest line first,
    position by position (a shifted context does not match): each line's similarity cubed, so only
    equal or lightly edited lines count, weighted 3-2-1 from the nearest. The farthest stored line may
    be cut by the character cap, so a line that ends (before) or starts (after) with it is equal."""
    total = weight_sum = 0.0
    for i, want in enumerate(stored):
        weight = CONTEXT_LINES - i if i < CONTEXT_LINES else 1
        have = actual[i] if i < len(actual) else None
        if have is None:
            sim = 0.0
        elif have == want or (i == len(stored) - 1 and want and (have.endswith(want) or have.startswith(want))):
            sim = 1.0
        else:
            sim = _similarity(have, want) ** 3
        total += weight * sim
        weight_sum += weight
    return total / weight_sum


@dataclass(frozen=True)
class _Candidate:
    start: int  # 1-based
    end: int
    quote: float  # similarity of the window to the quote
    context: float  # how well its surroundings match the stored context

    @property
    def score(self) -> float:
        return 0.6 * self.quote + 0.4 * self.context

    def overlaps(self, other: _Candidate) -> bool:
        return self.start <= other.end and other.start <= self.end


class Matcher:
    """The evidence about one anchor in one text."""

    def __init__(self, anchor: Anchor, text: str) -> None:
        self.anchor = anchor
        self.lines, self.norm = _lines_of(text)
        self.quote = anchor.selected_text.split("\n")
        self.quote_norm = [_norm(line) for line in self.quote]
        self.quote_text = "\n".join(self.quote_norm)
        self.k = len(self.quote)
        self.spread = min(max(2, self.k // 5), MAX_SPREAD)  # lines of slack when aligning a window
        self.big = self.k > BIG_QUOTE_LINES or len(self.quote_text) > BIG_QUOTE_CHARS
        # nearest line first on both sides
        self.before = [_norm(x) for x in reversed(anchor.context_before.split("\n"))] if anchor.start_line > 1 else []
        self.after = [_norm(x) for x in anchor.context_after.split("\n")] if anchor.context_after else []
        self.chars = sum(len(line.replace(" ", "")) for line in self.quote_norm)
        self.distinctive = self.chars >= DISTINCTIVE_CHARS

    def candidate(self, start: int, end: int, quote: float | None = None) -> _Candidate:
        return _Candidate(start, end, self.quote_score(start, end) if quote is None else quote,
                          self.context_score(start, end))

    def context_score(self, start: int, end: int) -> float:
        above = self.norm[max(0, start - 1 - CONTEXT_LINES) : start - 1][::-1]
        below = self.norm[end : end + CONTEXT_LINES]
        # a side with no stored context (the block was at the start or end of the file) is no evidence:
        # lines appended at the end of a file are too common an edit to count against a candidate
        # (one side alone is worth a little less than both: a perfect one-sided match scores ONE_SIDED)
        sides = [_side(stored, actual) for stored, actual in ((self.before, above), (self.after, below)) if stored]
        if len(sides) == 2:
            return (sides[0] + sides[1]) / 2
        return sides[0] * ONE_SIDED if sides else 0.5

    def kept_words(self, window: str) -> float:
        """The share of the quote's words still in the window, or of the window's words from the quote,
        whichever is larger (an edit, an added or a removed line keep most; a rewrite keeps few)."""
        want = Counter(_WORD.findall(self.quote_text))
        have = Counter(_WORD.findall(window))
        shared = sum((want & have).values())
        return shared / max(1, min(sum(want.values()), sum(have.values())))

    def quote_score(self, start: int, end: int) -> float:
        if self.big:  # the exact ratio is quadratic in the characters: for a big quote, line by line
            return _lines_similarity(self.norm[start - 1 : end], self.quote_norm)
        return _similarity("\n".join(self.norm[start - 1 : end]), self.quote_text)

    def verbatim(self, starts: list[int], exact: bool) -> AnchorResult:
        """Pick among verbatim occurrences: a single one, or the one whose context clearly matches best."""
        a = self.anchor
        what = "selected text" if exact else "selected text (whitespace changed)"
        # copies when captured: counted verbatim; with whitespace collapsed there may have been more
        copies = a.occurrences if exact else max(2, a.occurrences)
        cands = sorted((self.candidate(s, s + self.k - 1, 1.0) for s in starts), key=lambda c: -c.context)
        best = cands[0]
        same_place = best.start == a.start_line
        if len(cands) == 1:
            if not same_place and copies > 1 and best.context < self.disambiguates(copies):
                # it had copies when captured: the one left may be another, ours edited or deleted
                return orphaned(f"ambiguous: the {what} may have had copies and one is left, at line "
                                f"{best.start}, without the annotated one's context")
            if not self.distinctive and best.context < CONTEXT_AGREES:  # even at the same line number
                if copies != 1 or self.chars < SHORT_UNIQUE_CHARS:
                    return orphaned(f"a short {what} found elsewhere without its context")
                in_place = self.fuzzy()  # or was it edited where it was, and a copy typed elsewhere?
                lo, hi = in_place.start_line or 0, in_place.end_line or 0
                if in_place.found and (hi < best.start or lo > best.end) and self.clearly_in_place(lo, hi):
                    return orphaned(f"ambiguous: the {what} is at line {best.start}, and an edited copy in its "
                                     f"old context at line {lo}")
        elif (not (self.before and self.after) or best.context < self.disambiguates(copies)
              or best.context - cands[1].context < MARGIN):  # copies are told apart by context on both sides
            return orphaned(f"ambiguous: the {what} occurs {len(cands)} times and the context does not single "
                             "one out")
        if best.context < 1.0 and (self.in_run() or any(abs(c.start - best.start) == self.k for c in cands[1:])):
            # one of a run of identical blocks, and the run changed: which one went is unknowable
            return orphaned(f"ambiguous: the {what} repeats in a run of identical lines that changed")
        lines = self.norm
        doubled = (best.start > 1 and lines[best.start - 2] == self.quote_norm[0]) or (
            best.end < len(lines) and lines[best.end] == self.quote_norm[-1])
        if doubled and best.context < IN_PLACE_CONTEXT:
            # its first (last) line is also the line before (after) it: the block may begin (end) there
            return orphaned(f"the {what} is at line {best.start}, but where it begins or ends is unclear")
        status: Status = ("exact" if same_place else "moved") if exact else "fuzzy"
        where = "at the same lines" if same_place else f"moved from line {a.start_line} to {best.start}"
        confidence = 1.0 if exact else 0.95
        if len(cands) > 1:
            confidence = round(confidence * (0.9 + 0.1 * best.context), 3)
        return AnchorResult(status, best.start, best.end, confidence, f"{what} {where}")

    def clearly_in_place(self, start: int, end: int) -> bool:
        """As many lines as the quote, where it was (context matching on both sides), and the quote
        lightly edited: very close, or with something appended or cut."""
        if end - start + 1 != self.k or self.context_score(start, end) < BOTH_SIDES:
            return False
        window = "\n".join(self.norm[start - 1 : end])
        contained = bool(window.strip()) and (self.quote_text in window or window in self.quote_text)
        return contained or self.quote_score(start, end) >= SURE_QUOTE

    def disambiguates(self, copies: int) -> float:
        """The context a copy needs to be taken for the annotated one: a quote that already had copies
        when it was captured (whose context might have been as close) needs its own context intact."""
        return 1.0 if copies > 1 else CONTEXT_DISAMBIGUATES

    def in_run(self) -> bool:
        """The quote was captured in a run of copies of itself (its context repeats it)."""
        return self.before[: self.k][::-1] == self.quote_norm or self.after[: self.k] == self.quote_norm

    def fuzzy(self) -> AnchorResult:
        """Windows close to the quote, and windows bracketed by the stored context, bounds aligned."""
        n = len(self.lines)
        lengths = [m for m in range(self.k - WINDOW_SLACK, self.k + WINDOW_SLACK + 1) if 1 <= m <= n]
        if not lengths:
            return orphaned("the file is now too short to hold the annotated lines")
        cutoff = 100 * (FUZZY_THRESHOLD - 0.15)
        scored: list[tuple[float, int, int]] = []
        starts, lengths = (self._shared_starts(5), [self.k]) if self.big else (self._starts(lengths), lengths)
        for start in starts:
            for m in lengths:
                if start + m - 1 <= n and self.big:
                    sim = self.quote_score(start, start + m - 1) * 100
                    sim = sim if sim >= cutoff else 0
                elif start + m - 1 <= n:
                    sim = fuzz.ratio("\n".join(self.norm[start - 1 : start - 1 + m]), self.quote_text,
                                     score_cutoff=cutoff)
                    if sim:
                        scored.append((sim / 100, start, start + m - 1))
        scored.sort(key=lambda t: -t[0])
        top = scored[: 5 if self.big else 30]
        spans = {span for _, s, e in top for span in self.align(s, e)} | self.bracketed()
        raw = {(s, e) for _, s, e in top if e - s + 1 == self.k} - spans  # as found: only ever rivals
        if not spans:
            return orphaned("the annotated text is gone (no similar lines, context not found)")
        cands = sorted((self.candidate(s, e) for s, e in spans),
                       key=lambda c: -(c.score - LENGTH_PENALTY * abs(c.end - c.start + 1 - self.k)))
        best = next((c for c in cands if self.acceptable(c, cands)), None)
        if best is None:
            closest = cands[0]
            return orphaned(f"the closest text (lines {closest.start}-{closest.end}) is {closest.quote:.0%} similar "
                            f"and its context {closest.context:.0%}: not enough to be sure")
        if self.doubtful_edge(best):
            return orphaned(f"the text is at lines {best.start}-{best.end}, but where it begins or ends is unclear")
        rivals = cands + [self.candidate(s, e) for s, e in raw]
        rival = next((c for c in rivals if not c.overlaps(best) and c.score > best.score - FUZZY_MARGIN), None)
        if rival is None and best.context < CONTEXT_AGREES:  # taken on its text alone: no close second text
            rival = next((c for c in rivals if not c.overlaps(best) and c.quote > best.quote - QUOTE_MARGIN), None)
        if rival is not None:
            return orphaned(f"ambiguous: similar text at lines {best.start} and {rival.start}")
        return AnchorResult("fuzzy", best.start, best.end, round(best.score, 3),
                            f"text {best.quote:.0%} similar at lines {best.start}-{best.end}, "
                            f"context {best.context:.0%}")

    def acceptable(self, c: _Candidate, cands: list[_Candidate]) -> bool:
        if self.shifted(c):
            return False
        if c.context >= IN_PLACE_CONTEXT:  # bracketed by its own context: edited in place...
            if any(o.context >= IN_PLACE_CONTEXT and not o.overlaps(c) for o in cands):
                return False  # ...unless the same context is found elsewhere too (siblings, boilerplate)
            window = "\n".join(self.norm[c.start - 1 : c.end])
            same_lines = c.end - c.start + 1 == self.k
            if c.quote >= IN_PLACE_QUOTE and (c.quote >= SURE_QUOTE or self.kept_words(window) >= KEPT_WORDS):
                return True
            return (same_lines and bool(window.strip()) and (
                self.quote_text in window or window in self.quote_text))
        # moved and edited: a new context, so only a long quote, very close, with no close second, and
        # not over the place its old context still marks (then it was edited there beyond recognition)
        return (c.quote >= MOVED_QUOTE and self.k >= 2 and self.chars >= LONG_QUOTE_CHARS
                and not any(o.context >= IN_PLACE_CONTEXT and o.overlaps(c) for o in cands))

    def doubtful_edge(self, c: _Candidate) -> bool:
        """A window longer than the quote whose first (last) two lines both look like the quote's first
        (last) line, which the quote's next (previous) line does not: either could be the edge. Or one
        not as long as the quote whose blank first (last) line is not confirmed by the context beyond it:
        blank lines say nothing of where a block begins or ends."""
        q = self.quote_norm
        size = c.end - c.start + 1
        if size != self.k:
            above = self.norm[max(0, c.start - 1 - CONTEXT_LINES) : c.start - 1][::-1]
            below = self.norm[c.end : c.end + CONTEXT_LINES]
            if not q[0] and not (self.before and _side(self.before, above) >= IN_PLACE_CONTEXT):
                return True
            if not q[-1] and not (self.after and _side(self.after, below) >= IN_PLACE_CONTEXT):
                return True
        if size <= self.k or self.k < 2:
            return False
        w = self.norm[c.start - 1 : c.end]
        def twice(edge: str, near: str, inner: str, other: str) -> bool:
            return (_line_similarity(near, edge) >= DOUBLE_EDGE and _line_similarity(inner, edge) >= DOUBLE_EDGE
                    and _line_similarity(other, edge) < DOUBLE_EDGE)
        return twice(q[0], w[0], w[1], q[1]) or twice(q[-1], w[-1], w[-2], q[-2])

    def bracketed(self) -> set[tuple[int, int]]:
        """Windows whose surroundings match the stored context line for line on at least one side."""
        spans: set[tuple[int, int]] = set()
        n = len(self.lines)
        if self.before:
            for i in self._near(self.before[0], offset=1, cut=str.endswith):  # the block would start at line i
                if _side(self.before, self.norm[max(0, i - 1 - CONTEXT_LINES) : i - 1][::-1]) >= IN_PLACE_CONTEXT:
                    spans.update((i, i + m - 1) for m in (self.k - 1, self.k, self.k + 1) if m >= 1 and i + m - 1 <= n)
        if self.after:
            for j in self._near(self.after[0], offset=-1, cut=str.startswith):  # the block would end at line j
                if _side(self.after, self.norm[j : j + CONTEXT_LINES]) >= IN_PLACE_CONTEXT:
                    spans.update((j - m + 1, j) for m in (self.k - 1, self.k, self.k + 1) if m >= 1 and j - m + 1 >= 1)
        if len(spans) > (6 if self.big else 60):
            return set()
        return {span for s, e in spans for span in self.align(s, e)}

    def _near(self, nearest: str, offset: int, cut: Callable[[str, str], bool]) -> list[int]:
        """1-based lines `offset` away from each line close enough to `nearest` (the stored context line
        next to the block) for the context on that side to match (its weight needs similarity^3 >= 0.4),
        or of which it is the part kept under the character cap."""
        hits = process.extract(nearest, self.norm, scorer=fuzz.ratio, score_cutoff=NEAREST_LINE * 100, limit=None)
        found = {i for _, _, i in hits}
        if nearest:
            found.update(i for i, line in enumerate(self.norm) if cut(line, nearest))
        return sorted(i + 1 + offset for i in found if 1 <= i + 1 + offset <= len(self.lines))

    def align(self, start: int, end: int) -> set[tuple[int, int]]:
        """Exact bounds near a candidate window: align the quote, with and without its context, to the
        lines around the window, line by line, and map the quote's first and last lines through each
        alignment (an edited first or last line maps to the line that replaced it; lines inserted
        inside the quote stay inside). Both are kept: a context line equal to a quote line can
        mislead the one, an edited first line with new neighbours the other."""
        return {self._align(start, end, self.before[::-1], self.after), self._align(start, end, [], [])}

    def _align(self, start: int, end: int, before: list[str], after: list[str]) -> tuple[int, int]:
        wanted = before + self.quote_norm + after
        lo = max(1, start - len(self.before) - self.spread)
        hi = min(len(self.lines), end + len(self.after) + self.spread)
        region = self.norm[lo - 1 : hi]
        first, last = len(before), len(before) + self.k - 1
        new_first = new_last = None
        ops = SequenceMatcher(None, wanted, region, autojunk=False).get_opcodes()
        for i, op in enumerate(ops):
            prev_equal = i > 0 and ops[i - 1][0] == "equal"
            next_equal = i + 1 < len(ops) and ops[i + 1][0] == "equal"
            if op[1] <= first < op[2]:
                new_first = _map(op, first, wanted, region, "first", prev_equal, next_equal)
            if op[1] <= last < op[2]:
                new_last = _map(op, last, wanted, region, "last", prev_equal, next_equal)
        if new_first is None or new_last is None or new_last < new_first:
            return start, end
        return self.trim(lo + new_first, lo + new_last)

    def trim(self, start: int, end: int) -> tuple[int, int]:
        """A window longer than the quote loses lines at its ends when that makes it clearly closer; a
        shorter one takes in a neighbour equal to the quote's first (last) line that it left out."""
        extra = end - start + 1 - self.k
        if extra > (WINDOW_SLACK if self.big else MAX_TRIM):  # each try compares the whole window
            return start, end
        first, last = self.quote_norm[0], self.quote_norm[-1]
        if extra <= 0:  # reach (a line further when short) for the quote's own first and last lines
            reach = 1 if extra == 0 else WINDOW_SLACK
            if self.norm[start - 1] != first:
                start = next((start - j for j in range(1, reach + 1)
                              if start - j >= 1 and self.norm[start - 1 - j] == first), start)
            if self.norm[end - 1] != last:
                end = next((end + j for j in range(1, reach + 1)
                            if end + j <= len(self.norm) and self.norm[end - 1 + j] == last), end)
            return start, end
        base = self.quote_score(start, end)
        # an end that is the quote's own first (last) line moves only to another line equal to it
        starts = [s for s in range(start, start + extra + 1)
                  if s == start or self.norm[start - 1] != first or self.norm[s - 1] == first]
        ends = [e for e in range(end - extra, end + 1)
                if e == end or self.norm[end - 1] != last or self.norm[e - 1] == last]
        best = max(((self.quote_score(s, e), s, e) for s in starts for e in ends if e - s + 1 >= self.k),
                   default=(base, start, end))
        return (best[1], best[2]) if best[0] >= base + TRIM_GAIN else (start, end)

    def shifted(self, c: _Candidate) -> bool:
        """The window begins or ends inside the old context (the block was deleted and a neighbour of it
        looks like it): the stored context matches better one line further in than beside the window."""
        above_in = self.norm[max(0, c.start - CONTEXT_LINES) : c.start][::-1]
        below_in = self.norm[c.end - 1 : c.end - 1 + CONTEXT_LINES]
        above = self.norm[max(0, c.start - 1 - CONTEXT_LINES) : c.start - 1][::-1]
        below = self.norm[c.end : c.end + CONTEXT_LINES]
        if bool(self.before and _side(self.before, above_in) > _side(self.before, above) + SHIFT_MARGIN) or bool(
                self.after and _side(self.after, below_in) > _side(self.after, below) + SHIFT_MARGIN):
            return True
        # or the window is the old context itself, moved into the block's place (the block went away)
        window = self.norm[c.start - 1 : c.end]
        head = min(len(self.after), len(window))
        tail = min(len(self.before), len(window))
        return (head > 0 and all(_line_similarity(window[i], self.after[i]) >= SAME_LINE for i in range(head))) or (
            tail > 0 and all(_line_similarity(window[-1 - i], self.before[i]) >= SAME_LINE for i in range(tail)))

    def _starts(self, lengths: list[int]) -> list[int]:
        """Every start when that is cheap; else around the starts whose windows share the most lines with
        the quote."""
        n = len(self.lines)
        if n * len(lengths) * max(1, self.k) <= BRUTE_FORCE_WINDOWS * 8:
            return list(range(1, n + 1))
        starts: set[int] = set()
        for s in self._shared_starts(20):
            starts.update(range(max(1, s - 3), min(n, s + 3) + 1))
        return sorted(starts)

    def _shared_starts(self, count: int) -> list[int]:
        """The `count` starts whose quote-long windows share the most lines with the quote (a sliding
        multiset count, linear in the file), best first."""
        want = Counter(line for line in self.quote_norm if line)
        window: Counter[str] = Counter()
        shared, scores = 0, []
        for i, line in enumerate(self.norm):
            if window[line] < want.get(line, 0):
                shared += 1
            window[line] += 1
            if i >= self.k:
                old = self.norm[i - self.k]
                window[old] -= 1
                if window[old] < want.get(old, 0):
                    shared -= 1
            if i >= self.k - 1:
                scores.append((shared, i - self.k + 2))
        scores.sort(key=lambda t: -t[0])
        return [s for shared, s in scores[:count] if shared]


def _lines_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """The Indel similarity of the texts `"\\n".join(a)` and `"\\n".join(b)`, in time about the lines squared
    over 64 plus the characters times a line's length, where the exact ratio takes the characters squared
    over 64 (a 1 000-line quote: 0.2 s a comparison, a dozen per search). Lines are matched whole first (a
    diff over lines), then characters only within each changed stretch (a big one line i against line i).
    That is a common subsequence, so the result is never above the exact ratio, and equal to it when the
    texts align line by line (lines edited, added, removed or replaced): a big quote is at worst found less
    often, never more."""
    total = sum(map(len, a)) + sum(map(len, b)) + max(0, len(a) - 1) + max(0, len(b) - 1)
    if total == 0:
        return 1.0
    common, i, j = 0, 0, 0
    for op in Indel.opcodes(list(a), list(b)):
        if op.tag != "equal":
            continue
        a1, a2, b1, b2 = op.src_start, op.src_end, op.dest_start, op.dest_end  # unpacked, an Opcode types as str | int
        common += _paired(a[i:a1], b[j:b1]) + sum(len(line) + 1 for line in a[a1:a2])
        i, j = a2, b2
    common += _paired(a[i:], b[j:])
    # each line was counted with a newline after it; the last ones have none (take one off: a lower bound)
    return max(0.0, min(1.0, 2 * (common - 1) / total))


def _paired(a: Sequence[str], b: Sequence[str]) -> int:
    """Common characters of two changed stretches (each line with its newline): exact when the stretches are
    small (their product at most STRETCH_PAIRS characters), else line i against line i."""
    if not a or not b:
        return 0
    x, y = "".join(line + "\n" for line in a), "".join(line + "\n" for line in b)
    if len(x) * len(y) <= STRETCH_PAIRS:
        return int(LCSseq.similarity(x, y))
    return sum(LCSseq.similarity(p + "\n", q + "\n") for p, q in zip(a, b, strict=False))


def _line_similarity(a: str, b: str) -> float:
    if a == b:
        return 1.0
    if min(len(a), len(b)) >= 3 and (a in b or b in a):  # a comment appended, an argument dropped
        return 0.9
    return _similarity(a, b)


def _map(op: tuple[str, int, int, int, int], a: int, wanted: Sequence[str], region: Sequence[str], edge: str,
         prev_equal: bool, next_equal: bool) -> int:
    """Where line `a` of the wanted lines (context + quote) lands in the region, through one opcode."""
    tag, a1, a2, b1, b2 = op
    offset, size = a - a1, a2 - a1
    if tag == "equal" or (tag == "replace" and size == b2 - b1):
        return b1 + offset
    if tag == "delete":  # the line is gone: the range now starts at the next line, ends at the one before
        return b1 if edge == "first" else b1 - 1
    # replaced by a different number of lines: the most similar of them, if one is close enough...
    sim, b = max((_line_similarity(wanted[a], region[b]), b) for b in range(b1, b2))
    if sim >= REPLACED_LINE:
        return b
    # ...else counted from the matched block it borders (the one before for a first line)
    from_prev, from_next = min(b2 - 1, b1 + offset), max(b1, b2 - (size - offset))
    if edge == "first":
        return from_prev if prev_equal or not next_equal else from_next
    return from_next if next_equal or not prev_equal else from_prev


