"""Progress of a long command on stderr (stdout stays the command's answer): a rich progress display when stderr is
a terminal, plain lines otherwise (a log, a CI job, a pipe), at most one a second per phase and one when a phase
ends, so a redirected run leaves a readable trace instead of a screenful of redraws.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

Progress = Callable[[str, int, int | None], None]  # (phase, done, total or None)
EVERY_S = 1.0


@contextmanager
def reporter(title: str, stream: TextIO | None = None) -> Iterator[Progress]:
    """A progress callback for the duration of the block: `progress(phase, done, total)`."""
    out = stream or sys.stderr
    if out.isatty():
        with _rich(title, out) as progress:
            yield progress
        return
    yield _plain(title, out)


@contextmanager
def _rich(title: str, out: TextIO) -> Iterator[Progress]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    tasks: dict[str, Any] = {}
    with Progress(TextColumn(f"{title}: {{task.description}}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(file=out), transient=False) as bar:

        def progress(phase: str, done: int, total: int | None) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield progress


def _plain(title: str, out: TextIO) -> Progress:
    last: dict[str, float] = {}
    ended: set[str] = set()
    started = time.monotonic()

    def progress(phase: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        finished = total is not None and done >= total
        if phase in ended or (not finished and now - last.get(phase, 0.0) < EVERY_S):
            return
        last[phase] = now
        if finished:
            ended.add(phase)
        of = f"/{total}" if total is not None else ""
        print(f"{title}: {phase} {done}{of}{' done' if finished else ''} ({now - started:.1f} s)", file=out,
              flush=True)

    return progress
