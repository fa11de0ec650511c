"""One SQL helper for every table beside the events (views, tracking, leases, cursors, inbox) and for
the embedded adapters' own files, on SQLite and PostgreSQL.

SQL is written once with `?` placeholders; on PostgreSQL they become `%s`. One connection per
instance, guarded by a lock, shared by the server's worker threads: opening a connection (and
setting WAL) per call cost more than the queries. SQLite writes take `BEGIN IMMEDIATE`, so several
processes sharing a file serialise their transactions; `synchronous=NORMAL` in WAL mode keeps every
commit across a process crash. Each table's owner declares its DDL and calls `ensure` once.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlparse

DDL_LOCK = 0x0C0DE3  # the advisory lock key under which every process creates the tables beside the events


class Cursor(Protocol):
    """What a transaction yields: `execute` returns the cursor, so `cur.execute(...).fetchone()` works."""

    rowcount: int
    lastrowid: Any

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Cursor: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


@dataclass(frozen=True)
class PostgresUrl:
    """`postgresql://user:pass@host:port/db[?schema=s]`, parsed once for the event store and the views."""

    dbname: str
    host: str
    port: int
    user: str
    password: str
    schema: str | None
    dsn: str  # the URL without its query, as libpq takes it

    @classmethod
    def parse(cls, url: str) -> PostgresUrl:
        parsed = urlparse(url)
        if parsed.scheme not in ("postgres", "postgresql"):
            raise ValueError(f"CODE3_DATABASE_URL must be a postgresql:// URL, not {parsed.scheme}://")
        return cls(dbname=parsed.path.lstrip("/") or "postgres", host=parsed.hostname or "127.0.0.1",
                   port=parsed.port or 5432, user=unquote(parsed.username or "postgres"),
                   password=unquote(parsed.password or ""),
                   schema=parse_qs(parsed.query).get("schema", [None])[0], dsn=parsed._replace(query="").geturl())


class SqlDb:
    def __init__(self, conn: Any, postgres: bool) -> None:
        self._conn = conn
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
        import psycopg

        params = PostgresUrl.parse(url)
        conn = psycopg.connect(params.dsn, autocommit=True)
        if params.schema:
            conn.execute(f'SET search_path TO "{params.schema}"')
        db = cls(conn, postgres=True)
        if schema:
            db.ensure(schema)
        return db

    def ensure(self, ddl: str) -> None:
        """Create the tables of `ddl` (statements separated by `;`) once per connection."""
        if ddl in self._ensured:
            return
        with self._lock:
            if self.postgres:
                with self.transaction() as cur:
                    # processes starting at once would race their CREATE ... IF NOT EXISTS ("tuple concurrently
                    # updated"): one at a time, by a transaction-scoped advisory lock
                    cur.execute("SELECT pg_advisory_xact_lock(?)", (DDL_LOCK,))
                    for statement in filter(str.strip, ddl.split(";")):
                        cur.execute(statement)
            else:
                self._conn.executescript(ddl)
            self._ensured.add(ddl)

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        """A write transaction: committed when the block ends, rolled back if it raises."""
        with self._lock:
            if self.postgres:
                with self._conn.transaction(), self._conn.cursor() as raw:
                    yield _PgCursor(raw)
                return
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
        with self._lock:
            if self.postgres:
                with self._conn.cursor() as raw:
                    yield _PgCursor(raw)
                return
            yield self._conn.cursor()

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self.statement() as cur:
            return list(cur.execute(sql, params).fetchall())

    def close(self) -> None:
        with self._lock:
            self._conn.close()


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
