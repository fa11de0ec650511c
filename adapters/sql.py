"""One SQL helper for every table beside the events (views, tracking, leases, cursors, inbox) and for
the embedded adapters' own files, on SQLite and PostgreSQL: `SqlDb`, its transactions and its `ensure`.

SQL is written once with `?` placeholders; on PostgreSQL they become `%s`. On SQLite, one connection per
instance, guarded by a lock, shared by the server's worker threads: opening a connection (and
setting WAL) per call cost more than the queries. SQLite writes take `BEGIN IMMEDIATE`, so several
processes sharing a file serialise their transactions; `synchronous=NORMAL` in WAL mode keeps every
commit across a process crash. Each table's owner declares its DDL and calls `ensure` once.

On PostgreSQL, connections come from the process-wide pool of the URL (adapters/pg_pool.py), which replaces
broken ones; how long the database has been out of reach is adapters/db_outage.py's, and ending a process cut off
for too long is adapters/db_watchdog.py's.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from adapters.db_outage import unreachable
from adapters.pg_pool import PgPool

DDL_LOCK = 0x0C0DE3  # the advisory lock key under which every process creates the tables beside the events
ENSURE_ATTEMPTS = 6  # tries of one table creation whose connection was lost midway (0.25 s to 2 s apart)
log = logging.getLogger("code3.db")


class Cursor(Protocol):
    """What a transaction yields: `execute` returns the cursor, so `cur.execute(...).fetchone()` works. Rows are
    read with `fetchone`/`fetchall` (the PostgreSQL cursor is not iterable); the counts are only read."""

    @property
    def rowcount(self) -> int: ...
    @property
    def lastrowid(self) -> Any: ...

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Cursor: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


class SqlDb:
    def __init__(self, conn: Any, postgres: bool, pool: PgPool | None = None) -> None:
        self._conn = conn  # SQLite's connection (None on PostgreSQL: connections come from `pool`)
        self._pool = pool
        self._lock = threading.RLock()
        self.postgres = postgres
        self._ensured: set[str] = set()

    @classmethod
    def sqlite(cls, path: Path, schema: str = "") -> SqlDb:
        from adapters.private_files import private_file

        if str(path) != ":memory:":  # an in-memory database (the unit suite's) is no file to create
            private_file(path)  # 0600 in a 0700 directory; SQLite gives its -wal and -shm files the same mode
        conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        _wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        db = cls(conn, postgres=False)
        if schema:
            db.ensure(schema)
        return db

    @classmethod
    def postgres_url(cls, url: str, schema: str = "") -> SqlDb:
        db = cls(None, postgres=True, pool=PgPool.shared(url))
        if schema:
            db.ensure(schema)
        return db

    def ensure(self, ddl: str) -> None:
        """Create the tables of `ddl` (statements separated by `;`) once per connection."""
        if ddl in self._ensured:
            return
        if self.postgres:
            for attempt in range(ENSURE_ATTEMPTS):
                try:
                    with self.transaction() as cur:
                        # processes starting at once would race their CREATE ... IF NOT EXISTS ("tuple concurrently
                        # updated"): one at a time, by a transaction-scoped advisory lock
                        cur.execute("SELECT pg_advisory_xact_lock(?)", (DDL_LOCK,))
                        for statement in filter(str.strip, ddl.split(";")):
                            cur.execute(statement)
                    break
                except Exception as exc:
                    # a backend terminated while a process starts (a failover, pg_terminate_backend) took the
                    # whole transaction with it: the DDL is idempotent, so run it again on a new connection
                    # rather than end the start-up of a serve or a worker (the soak campaign found it)
                    if not unreachable(exc) or attempt == ENSURE_ATTEMPTS - 1:
                        raise
                    log.warning("creating tables failed (%s); trying again", type(exc).__name__)
                    time.sleep(min(0.25 * 2 ** attempt, 2.0))
            self._ensured.add(ddl)
            return
        with self._lock:
            self._conn.executescript(ddl)
            self._ensured.add(ddl)

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        """A write transaction: committed when the block ends, rolled back if it raises."""
        if self._pool is not None:
            with self._pool.connection() as conn, conn.transaction(), conn.cursor() as raw:
                yield _PgCursor(raw)
            return
        with self._lock:
            cur = self._conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def statement(self) -> Iterator[Cursor]:
        """For reads and single-statement writes: each statement is its own transaction (autocommit)."""
        if self._pool is not None:
            with self._pool.connection() as conn, conn.cursor() as raw:
                yield _PgCursor(raw)
            return
        with self._lock:
            yield self._conn.cursor()

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self.statement() as cur:
            return list(cur.execute(sql, params).fetchall())

    def close(self) -> None:
        if self.postgres:
            pool, self._pool = self._pool, None
            if pool is not None:
                pool.release()
            return
        with self._lock:
            self._conn.close()

    def __del__(self) -> None:
        # an instance dropped unclosed gives its share of the process's pool back, as its connection of old
        # was closed with it (the shared pool would otherwise outlive every user)
        if getattr(self, "postgres", False):
            with contextlib.suppress(Exception):
                self.close()


def _wal(conn: sqlite3.Connection, attempts: int = 100) -> None:
    """WAL mode, which the file keeps once set. Switching takes an exclusive lock for which SQLite may answer
    "database is locked" at once, without waiting its busy timeout, when processes open a new file together:
    those try again a moment later (by then another has usually switched it)."""
    for attempt in range(attempts):
        try:
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.01 * (1 + attempt % 10))


class _PgCursor:
    def __init__(self, raw: Any) -> None:
        self._raw = raw

    @property
    def rowcount(self) -> int:
        return int(self._raw.rowcount)

    @property
    def lastrowid(self) -> Any:
        return None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _PgCursor:
        self._raw.execute(sql.replace("?", "%s"), params)
        return self

    def fetchone(self) -> Any:
        return self._raw.fetchone()

    def fetchall(self) -> list[Any]:
        return list(self._raw.fetchall())


def open_db(project: Path, database_url: str | None) -> SqlDb:
    """The database beside the events: the project's SQLite file, or the PostgreSQL schema of the store."""
    if database_url:
        return SqlDb.postgres_url(database_url)
    return SqlDb.sqlite(project / ".code3" / "events.sqlite")
