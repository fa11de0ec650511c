"""What a failure while following the log means: a transient one (try the same event again next round) or a
permanent one (the event becomes a dead letter), and how long a projection has been failing.

Transient: the database or the forge is away or asks us to wait — a lost connection, a timeout, HTTP 429 or
5xx, GitHub's primary or secondary rate limit (the forge adapter answers E_GH_RATE_LIMIT once its retry
budget is spent), a locked SQLite file, or `NotYet` (a dependency not recorded yet). Waiting fixes them, so
they never cost an event: the position stays where it is. Anything else — a 4xx other than 429 (E_NOT_FOUND,
E_VALIDATION, E_UNAUTHORIZED, E_EXISTS), a bug in the projector — would fail the same way again, so it is
recorded as a dead letter and passed over. A transient failure that persists is not silent: its consecutive
count and since when are kept in `projection_health` (read by `code3 doctor` and /metrics from any process).
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from adapters.db_outage import unreachable
from adapters.scrub import scrub
from adapters.sql import Cursor, SqlDb
from adapters.tracking import db_now, ensure_tracking
from domain.errors import Code, Code3Error

log = logging.getLogger("code3.projections")

TRANSIENT_CODES = frozenset({Code.GH_RATE_LIMIT})  # the forge's "try again after ..." once its budget is spent


class NotYet(Exception):
    """The projector cannot handle this event yet (a dependency is missing); try again next round."""


def transient(exc: BaseException) -> bool:
    """True when trying the same event again later may succeed (see the module's docstring)."""
    if isinstance(exc, NotYet):
        return True
    if isinstance(exc, Code3Error):
        return exc.code in TRANSIENT_CODES
    if isinstance(exc, ConnectionError | TimeoutError):
        return True
    if isinstance(exc, sqlite3.OperationalError):
        return "locked" in str(exc) or "busy" in str(exc)
    if unreachable(exc):
        return True
    module = type(exc).__module__.split(".")[0]
    if module == "githubkit":  # a raw GitHub failure that did not go through the forge's boundary
        from adapters.github_errors import is_transient

        return is_transient(exc)
    if module in ("httpx", "httpcore"):  # a transport failure of a client used without the forge's wrapper
        import httpx

        return isinstance(exc, httpx.TransportError)
    return False


def describe(exc: BaseException) -> str:
    """One line for a log, a dead letter or the health row: the error code or type and its scrubbed text."""
    if isinstance(exc, Code3Error):
        return scrub(f"{exc.code.value}: {exc.message}")[:500]
    return scrub(f"{type(exc).__name__}: {exc}")[:500]


def failed(views: SqlDb, name: str, exc: BaseException) -> int:
    """Count one more consecutive transient failure of `name`; the count (1 for the first of a streak)."""
    ensure_tracking(views)
    with views.transaction() as cur:
        now = db_now(views, cur)
        cur.execute("INSERT INTO projection_health (name, failures, failing_since, error) VALUES (?, 1, ?, ?) "
                    "ON CONFLICT (name) DO UPDATE SET failures = projection_health.failures + 1, "
                    "failing_since = COALESCE(projection_health.failing_since, excluded.failing_since), "
                    "error = excluded.error", (name, now, describe(exc)))
        return int(cur.execute("SELECT failures FROM projection_health WHERE name = ?", (name,)).fetchone()[0])


def recovered(views: SqlDb, name: str) -> int:
    """A round of `name` went through: the streak ends; how many failures it had (0: there was none)."""
    ensure_tracking(views)
    rows = views.query("SELECT failures FROM projection_health WHERE name = ? AND failures > 0", (name,))
    if not rows:
        return 0
    with views.transaction() as cur:
        cur.execute("UPDATE projection_health SET failures = 0, failing_since = NULL, error = NULL WHERE name = ?",
                    (name,))
    return int(rows[0][0])


def health(cur: Cursor) -> dict[str, dict[str, Any]]:
    """Projections failing now: name -> {failures, failing_since (database clock, s), error}."""
    rows = cur.execute("SELECT name, failures, failing_since, error FROM projection_health WHERE failures > 0 "
                       "ORDER BY name").fetchall()
    return {str(n): {"failures": int(f), "failing_since": None if s is None else float(s), "error": e or ""}
            for n, f, s, e in rows}
