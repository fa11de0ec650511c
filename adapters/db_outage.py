"""How long this process has been cut off from its database, and which failures count as being cut off.

One clock per process (`OUTAGE`): the PostgreSQL pools (adapters/pg_pool.py) start it when a connection cannot
be had and stop it when one can, the watchdog (adapters/db_watchdog.py) does the same with its probes, and
/readyz and the worker read it. `unreachable` tells a lost server (refused, terminated backend, restart) from a
fault of the SQL or a conflict, for every caller that retries or waits out an outage rather than failing.
Kept apart from the pool, so the pool, the watchdog and the SQL helper all read one clock without importing
each other.
"""

from __future__ import annotations

import time


class Outage:
    """Since when this process has failed to reach its database (None: the last attempt worked)."""

    def __init__(self) -> None:
        self._since: float | None = None

    def ok(self) -> None:
        self._since = None

    def failed(self) -> None:
        if self._since is None:
            self._since = time.monotonic()

    def seconds(self) -> float:
        since = self._since
        return 0.0 if since is None else time.monotonic() - since


OUTAGE = Outage()


def unreachable(exc: BaseException) -> bool:
    """A failure to reach the server (refused, terminated backend, restart, pool timeout), not a fault of the SQL
    or a conflict (a deadlock or a lock timeout is an OperationalError too, with a SQLSTATE of its own)."""
    import psycopg

    if not isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        cause = exc.__cause__  # eventsourcing wraps psycopg's errors in its own
        return cause is not None and cause is not exc and unreachable(cause)
    state = getattr(exc, "sqlstate", None)
    return state is None or state.startswith(("08", "57P"))  # connection exceptions, shutdowns, not accepting
