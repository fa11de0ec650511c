"""Linear scans for the markers Code3 embeds in text that others can write (specs, issue bodies, comments).

A lazy regular expression such as `<!-- m: (\\{.*?\\}) -->` restarts its scan to the end of the text at
every opener that has no closer, so n openers cost n² steps (300 KB of repeated openers held the GIL for
seconds). These helpers find each opener and its closer with `str.find`, each position of the text looked at
a bounded number of times, and remember where a closer is known to be missing so later openers do not look
again. The callers keep the regular expressions' meaning (first closer after the opener, matches taken left
to right without overlapping).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple


class Span(NamedTuple):
    """One marked region: `start`..`end` is the whole of it (opener to closer), `inner_start`..`inner_end`
    what lies between."""

    start: int
    inner_start: int
    inner_end: int
    end: int

    def inner(self, text: str) -> str:
        return text[self.inner_start : self.inner_end]


def delimited(text: str, opener: str, closer: str, *, keep_open: int = 0, keep_close: int = 0,
              start: int = 0) -> Iterator[Span]:
    """Each `opener … closer` region from `start`, left to right, without overlap: as the lazy pattern
    `opener(.*?)closer` (DOTALL) finds them. The last `keep_open` characters of the opener and the first
    `keep_close` of the closer (a JSON object's braces, say) belong to the inner text. Linear: once a
    closer is missing after some point, no later opener has one, so the scan stops."""
    if not opener or not closer:
        raise ValueError("opener and closer must not be empty")
    pos = start
    while True:
        found = text.find(opener, pos)
        if found < 0:
            return
        close = text.find(closer, found + len(opener))
        if close < 0:
            return
        yield Span(found, found + len(opener) - keep_open, close + keep_close, close + len(closer))
        pos = close + len(closer)


def first(spans: Iterator[Span]) -> Span | None:
    return next(spans, None)


def remove(text: str, spans: Iterator[Span], replacement: str = "") -> str:
    """The text with the given (ordered, non-overlapping) spans replaced."""
    parts, pos = [], 0
    for span in spans:
        parts.append(text[pos : span.start])
        parts.append(replacement)
        pos = span.end
    parts.append(text[pos:])
    return "".join(parts)
