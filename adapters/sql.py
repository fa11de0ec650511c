"""One SQL helper for every table beside the events (views, tracking, leases, cursors, inbox) and for
the embedded adapters' own files, on SQLite and PostgreSQL.

SQL is written once with `?` placeholders; on PostgreSQL they become `%s`. On SQLite, one connection per
instance, guarded by a lock, shared by the server's worker threads: opening a connection (and
setting WAL) per call cost more than the queries. SQLite writes take `BEGIN IMMEDIATE`, so several
processes sharing a file serialise their transactions; `synchronous=NORMAL` in WAL mode keeps every
commit across a process crash. Each table's owner declares its DDL and calls `ensure` once.

On PostgreSQL, every instance on one URL shares one small process-wide pool (`PgPool`): a connection is
checked before it is handed out and replaced when its backend was terminated or the server restarted,
with bounded back-off, so a failover costs at most the calls in flight, never a restart. `OUTAGE` keeps
how long the database has been unreachable (`watchdog` ends a process cut off for too long).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol
from urllib.parse import parse_qs, unquote, urlparse

DDL_LOCK = 0x0C0DE3  # the advisory lock key under which every process creates the tables beside the events
VIEWS_POOL_SIZE = 1  # PostgreSQL connections per process for the views (the event store's pool holds 2 more)
RECONNECT_S = 10.0  # a pool gives up a reconnection attempt after this long; the next request starts anew,
# so its back-off (1, 2, 4 s ... ) never grows past a few seconds, however long the outage lasted
CONNECT_TIMEOUT_S = 5
ENSURE_ATTEMPTS = 6  # tries of one table creation whose connection was lost midway (0.25 s to 2 s apart)
log = logging.getLogger("code3.db")


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


def application_name() -> str:
    """How this process's connections show in pg_stat_activity: PGAPPNAME when set, else code3-<command>-<pid>
    (serve, worker, mcp, doctor), so an operator or a test terminates only the backends it means to."""
    given = os.environ.get("PGAPPNAME", "").strip()
    if given:
        return given
    command = next((a for a in sys.argv[1:] if not a.startswith("-")), "")
    return f"code3-{command if command in ('serve', 'worker', 'mcp', 'doctor') else 'cli'}-{os.getpid()}"


def connection_options() -> dict[str, Any]:
    """libpq options of every connection: this process's name, a bounded connect, and TCP keepalives and a user
    timeout, so a peer that vanished without a word (a failed-over host) is noticed in about 30 s."""
    return {"application_name": application_name(), "connect_timeout": CONNECT_TIMEOUT_S, "keepalives": 1,
            "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3, "tcp_user_timeout": 30_000}


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


class PgPool:
    """One process-wide psycopg pool per URL, shared by every `SqlDb` on it (a worker acting for several
    identities included). A connection is checked before use (`check_connection`) and a broken one replaced;
    a thread already holding a connection of the pool gets the same one again (a statement inside a
    transaction), as the single connection of old did."""

    _shared: ClassVar[dict[str, PgPool]] = {}
    _guard = threading.RLock()  # reentrant: a __del__ run by the GC inside the guard releases too

    def __init__(self, url: str) -> None:
        from psycopg_pool import ConnectionPool

        params = PostgresUrl.parse(url)

        def configure(conn: Any) -> None:
            if params.schema:
                conn.execute(f'SET search_path TO "{params.schema}"')

        self.url, self.users, self._local = url, 0, threading.local()
        self.pool = ConnectionPool(
            params.dsn, min_size=VIEWS_POOL_SIZE, max_size=VIEWS_POOL_SIZE, open=False, configure=configure,
            check=ConnectionPool.check_connection, reconnect_timeout=RECONNECT_S, timeout=30.0,
            kwargs={"autocommit": True, **connection_options()}, name="code3-views")
        try:
            self.pool.open(wait=True, timeout=2 * CONNECT_TIMEOUT_S)
        except Exception:
            self.pool.close()
            raise

    @classmethod
    def shared(cls, url: str) -> PgPool:
        with cls._guard:
            pool = cls._shared.get(url)
            if pool is None:
                pool = cls._shared[url] = cls(url)
            pool.users += 1
            return pool

    @classmethod
    def all(cls) -> list[PgPool]:
        with cls._guard:
            return list(cls._shared.values())

    def release(self) -> None:
        with self._guard:
            self.users -= 1
            if self.users > 0:
                return
            self._shared.pop(self.url, None)
        self.pool.close()

    @contextmanager
    def connection(self, timeout: float | None = None) -> Iterator[Any]:
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        try:
            with self.pool.connection(timeout=timeout) as conn:
                self._local.conn = conn
                try:
                    yield conn
                finally:
                    self._local.conn = None
        except Exception as exc:
            if unreachable(exc):
                OUTAGE.failed()
            raise
        OUTAGE.ok()

    def probe(self, timeout: float) -> None:
        """SELECT 1 on a checked connection; raises what keeps the database out of reach."""
        with self.connection(timeout=timeout) as conn:
            conn.execute("SELECT 1").fetchone()


def probe(timeout: float = 3.0) -> str | None:
    """None when every PostgreSQL pool of this process reaches its database, else the error's class name.
    A pool whose every connection is busy answers the last outcome seen (busy is not down)."""
    from psycopg_pool import PoolTimeout

    for pool in PgPool.all():
        stats = pool.pool.get_stats()
        try:
            pool.probe(timeout)
        except PoolTimeout as exc:
            if stats.get("pool_size", 0) and not stats.get("pool_available", 0) and not OUTAGE.seconds():
                continue
            return type(exc).__name__
        except Exception as exc:
            return type(exc).__name__
    return None


STATS_POOLS: weakref.WeakSet[Any] = weakref.WeakSet()  # psycopg pools of other adapters (the event store's)


def connection_stats() -> dict[str, int]:
    """This process's PostgreSQL connections, summed over its pools (for /metrics): connections opened
    (`opened` beyond the pools' sizes are reconnections), attempts that failed, connections found broken (a
    terminated backend, a restarted server) and those open now."""
    totals = {"opened": 0, "failed": 0, "lost": 0, "open": 0}
    for pool in {id(p): p for p in [*(p.pool for p in PgPool.all()), *STATS_POOLS]}.values():
        stats = pool.get_stats()
        totals["opened"] += stats.get("connections_num", 0)
        totals["failed"] += stats.get("connections_errors", 0)
        totals["lost"] += stats.get("connections_lost", 0) + stats.get("returns_bad", 0)
        totals["open"] += stats.get("pool_size", 0)
    return totals


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


def open_db(project: Path, database_url: str | None) -> SqlDb:
    """The database beside the events: the project's SQLite file, or the PostgreSQL schema of the store."""
    if database_url:
        return SqlDb.postgres_url(database_url)
    return SqlDb.sqlite(project / ".code3" / "events.sqlite")
