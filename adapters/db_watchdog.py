"""The outage watchdog: a serve or a worker cut off from its database for longer than CODE3_DB_OUTAGE_EXIT ends
itself (exit status 3, logged), so a supervisor restarts it rather than leave it up answering nothing.

`outage_limit` reads and checks the setting; `watchdog` probes the database on a thread of its own (by default
every PostgreSQL pool of the process, adapters/pg_pool.py `probe`) and keeps the outage clock
(adapters/db_outage.py) with what it finds. A module of its own: the pools and the SQL helper only feed the clock,
the decision to end the process is taken here alone.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable

from adapters.db_outage import OUTAGE
from adapters.pg_pool import probe

log = logging.getLogger("code3.db")


def outage_limit(env: dict[str, str] | None = None) -> float:
    """CODE3_DB_OUTAGE_EXIT: seconds a process stays up while its database is out of reach (default 300, 0: for
    ever)."""
    from domain.errors import Code, Code3Error

    raw = (os.environ if env is None else env).get("CODE3_DB_OUTAGE_EXIT", "").strip() or "300"
    try:
        limit = float(raw)
    except ValueError:
        limit = -1.0
    if not 0 <= limit < float("inf"):
        raise Code3Error(Code.VALIDATION, f"CODE3_DB_OUTAGE_EXIT={raw!r} is not a number of seconds",
                         "set CODE3_DB_OUTAGE_EXIT=300 (seconds without the database before exiting; 0: never)")
    return limit


def watchdog(limit_s: float, check: Callable[[], str | None] | None = None,
             every_s: float | None = None) -> threading.Thread | None:
    """End this process (exit status 3, logged) once its database has been out of reach for more than `limit_s`,
    so a supervisor restarts it. `check` answers None when the database answers, else why not (default: `probe`,
    a process without a PostgreSQL pool passing). None (no thread) for a limit of 0."""
    if limit_s <= 0:
        return None
    interval = every_s if every_s is not None else max(0.2, min(5.0, limit_s / 5))
    test = check or (lambda: probe(timeout=min(interval, 3.0)))
    pending: list[threading.Thread] = []
    answers: list[str | None] = []

    def ask() -> None:
        try:
            answers.append(test())
        except Exception as exc:  # a check that raises reports its class, as a failed probe does
            answers.append(type(exc).__name__)

    def timed() -> str | None:
        """The check's answer, or "Timeout" when it has not answered in time: a network that drops packets
        silently holds a query for ever, and the watchdog must not wait with it (nor start a second one)."""
        if not pending or not pending[0].is_alive():
            pending[:] = [threading.Thread(target=ask, name="code3-db-probe", daemon=True)]
            answers.clear()
            pending[0].start()
        pending[0].join(max(interval, 1.0) + 1.0)
        return answers[0] if answers else "Timeout"

    def watch() -> None:
        while True:
            time.sleep(interval)
            error = timed()
            if error is None:
                OUTAGE.ok()
                continue
            OUTAGE.failed()
            if OUTAGE.seconds() > limit_s:
                log.critical("the database has been unreachable for %.0f s (over CODE3_DB_OUTAGE_EXIT=%g s, last "
                             "error %s): exiting so a supervisor restarts this process", OUTAGE.seconds(), limit_s,
                             error)
                for handler in logging.getLogger().handlers:
                    handler.flush()
                sys.stderr.flush()
                os._exit(3)

    thread = threading.Thread(target=watch, name="code3-db-watchdog", daemon=True)
    thread.start()
    return thread
