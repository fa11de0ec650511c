"""What an anchor is and what looking for it answers: the `Anchor` captured from a file's text (the quoted
lines, their context, the file's digest, how often the quote occurred), the `AnchorResult` of a search, and the
line primitives both the capture and the search stand on (lines as an editor numbers them, the context of a
range, the verbatim occurrences of a quote). Pure computation, no I/O.

domain/knowledge/anchor.py runs the re-anchoring steps and is the public face (it re-exports these names);
domain/knowledge/anchor_match.py weighs the evidence. Both import this module, and neither imports the other back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from domain.canonical import sha256_hex
from domain.errors import Code, Code3Error

CONTEXT_LINES = 3
CONTEXT_CHARS = 200
Status = Literal["exact", "moved", "fuzzy", "orphaned", "stale"]
"""`stale`: not searched yet (a read's budget was spent); the lines are where the anchor was last found."""


def split_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: split on LF only; a final newline does not start a new line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def context_of(lines: Sequence[str], start: int, end: int) -> tuple[str, str]:
    """The (at most) CONTEXT_LINES lines before and after lines start..end (1-based), each capped to
    the CONTEXT_CHARS characters nearest the range."""
    before = "\n".join(lines[max(0, start - 1 - CONTEXT_LINES) : start - 1])[-CONTEXT_CHARS:]
    after = "\n".join(lines[end : end + CONTEXT_LINES])[:CONTEXT_CHARS]
    return before, after


def occurrences(lines: Sequence[str], quote: Sequence[str]) -> list[int]:
    """1-based starts of every verbatim occurrence of the quote's lines (Knuth-Morris-Pratt over lines,
    linear even in a file of identical lines)."""
    k = len(quote)
    fail = [0] * k
    j = 0
    for i in range(1, k):
        while j and quote[i] != quote[j]:
            j = fail[j - 1]
        if quote[i] == quote[j]:
            j += 1
        fail[i] = j
    found, j = [], 0
    for i, line in enumerate(lines):
        while j and line != quote[j]:
            j = fail[j - 1]
        if line == quote[j]:
            j += 1
            if j == k:
                found.append(i - k + 2)
                j = fail[j - 1]
    return found


def file_digest(text: str) -> str:
    return sha256_hex(text)


@dataclass(frozen=True)
class Anchor:
    start_line: int
    end_line: int
    selected_text: str
    context_before: str
    context_after: str
    file_digest: str
    occurrences: int = 1
    """How many times the selected lines occurred verbatim in the file when captured."""

    @classmethod
    def capture(cls, text: str, start_line: int, end_line: int) -> Anchor:
        """The anchor of lines start_line..end_line (1-based, inclusive) of a file's current text."""
        lines = split_lines(text)
        if not 1 <= start_line <= end_line:
            raise Code3Error(Code.VALIDATION, f"invalid line range {start_line}-{end_line}",
                             "use 1 <= startLine <= endLine")
        if end_line > len(lines):
            raise Code3Error(Code.VALIDATION, f"endLine {end_line} is past the end of the file ({len(lines)} lines)",
                             "choose lines that exist in the file's current text")
        before, after = context_of(lines, start_line, end_line)
        quote = lines[start_line - 1 : end_line]
        return cls(start_line, end_line, "\n".join(quote), before, after, file_digest(text),
                   len(occurrences(lines, quote)))


@dataclass(frozen=True)
class AnchorResult:
    status: Status
    start_line: int | None
    end_line: int | None
    confidence: float
    reason: str

    @property
    def found(self) -> bool:
        """Found in the current text (a stale result is not: its lines are from an older one)."""
        return self.status not in ("orphaned", "stale")


def orphaned(reason: str) -> AnchorResult:
    return AnchorResult("orphaned", None, None, 0.0, reason)
