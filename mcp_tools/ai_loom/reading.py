"""How much re-anchoring a read may do, so a read answers within a second whatever the files.

A read (list_contexts, get_context, stitch) shows each annotation's current best anchor without recording
it. The cheap cases are always settled (domain/knowledge/anchor.py `quick`: file gone, digest unchanged, the quote
and its context verbatim at the same lines). A full search costs about the file's size plus twenty times
the quote's (`search_cost`); a read spends at most SEARCH_CHARS of that, and starts no search after
SEARCH_SECONDS; after READ_SECONDS it opens no more files. An anchor left over is answered `stale`, at the
lines where it was last found, and the worker's pass (scheduler/worker.py, `verify_changed`) searches for it
and records the result.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from domain.knowledge.anchor import Anchor, AnchorResult, file_digest, quick, reanchor, search_cost, split_lines, stale

SEARCH_CHARS = 2_000_000
"""Search work per read, in characters of file (about 0.3 s on the benchmark machine: one 60 000-line file)."""
SEARCH_SECONDS = 0.4
"""No search starts once a read has spent this long searching."""
READ_SECONDS = 0.6
"""After this long a read opens no more files and settles nothing more (200 files of 5 MB would take seconds
to read and digest)."""


class Unread(str):
    """The text of a file a read had no time left to open (told apart by its type, never by its value)."""


UNREAD = Unread()


class ReadBudget:
    """The search allowance of one read; `find` is what the read locates each anchor with."""

    def __init__(self, chars: int | None = None, seconds: float | None = None, read_seconds: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.chars = SEARCH_CHARS if chars is None else chars
        self.seconds = SEARCH_SECONDS if seconds is None else seconds
        self.read_seconds = READ_SECONDS if read_seconds is None else read_seconds
        self.clock = clock
        self.started = clock()
        self.spent = 0.0
        self.deferred = 0
        self._seen: tuple[str, str, list[str]] | None = None  # the last text read: its digest and lines

    def _known(self, text: str | None) -> tuple[str | None, list[str] | None]:
        """The digest and lines of `text`, computed once for the anchors of one file (a read meets them in a
        row: sorted by file, or stitched file by file)."""
        if text is None:
            return None, None
        if self._seen is None or self._seen[0] is not text:
            self._seen = (text, file_digest(text), split_lines(text))
        return self._seen[1], self._seen[2]

    def expired(self) -> bool:
        """The read has run READ_SECONDS: open no more files (pass UNREAD for their text)."""
        return self.clock() - self.started >= self.read_seconds

    def find(self, anchor: Anchor, text: str | None) -> AnchorResult:
        if isinstance(text, Unread) or self.expired():
            self.deferred += 1
            return stale(anchor)
        settled = quick(anchor, text, *self._known(text))
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
