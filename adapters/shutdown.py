"""A stop that cannot hang: after SIGTERM a process has a grace period to finish what is in flight, then it
exits at once.

A supervisor's restart waits for the old process; one whose threads wait on a database that answers nothing
(a silent network), or on a forge's retry budget, would never end by itself. Exiting past the grace loses
nothing: every step is idempotent and recorded in one transaction, so an interrupted one is taken up again by
the next process, as after a crash.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading

log = logging.getLogger("code3.shutdown")
_armed = threading.Event()


def exit_after(grace_s: float, code: int = 0) -> None:
    """Arm (once) a timer that ends the process with `code` after `grace_s` seconds unless it ended before."""
    if _armed.is_set():
        return
    _armed.set()

    def expire() -> None:
        log.warning("still stopping %.0f s after the signal (work in flight is waiting); exiting now", grace_s)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)

    timer = threading.Timer(grace_s, expire)
    timer.daemon = True
    timer.start()
