"""How much re-anchoring a read may do, so a read answers within a second whatever the files.

A read (list_contexts, get_context, stitch) shows each annotation's current best anchor without recording
it. The cheap cases are always settled (domain/anchor.py `quick`: file gone, digest unchanged, the quote
and its context verbatim at the same lines). A full search costs about the file's size plus the square of
the quote's (`search_cost`); a read spends at most SEARCH_CHARS of that, and starts no search after
SEARCH_SECONDS. An anchor left over is answered `stale`, at the lines where it was last found, and the
worker's pass (scheduler/worker.py, `verify_changed`) searches for it and records the result.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from domain.anchor import Anchor, AnchorResult, quick, reanchor, search_cost, stale

SEARCH_CHARS = 2_000_000
"""Search work per read, in characters of file (about 0.3 s on the benchmark machine: one 60 000-line file)."""
SEARCH_SECONDS = 0.4
"""No search starts once a read has spent this long searching."""


class ReadBudget:
    """The search allowance of one read; `find` is what the read locates each anchor with."""

    def __init__(self, chars: int | None = None, seconds: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.chars = SEARCH_CHARS if chars is None else chars
        self.seconds = SEARCH_SECONDS if seconds is None else seconds
        self.clock = clock
        self.spent = 0.0
        self.deferred = 0

    def find(self, anchor: Anchor, text: str | None) -> AnchorResult:
        settled = quick(anchor, text)
        if settled is not None:
            return settled
        assert text is not None  # quick settles a missing file
        cost = search_cost(anchor, text)
        if cost > self.chars or self.spent >= self.seconds:
            self.deferred += 1
            return stale(anchor)
        self.chars -= cost
        started = self.clock()
        try:
            return reanchor(anchor, text)
        finally:
            self.spent += self.clock() - started
