"""The process-wide PostgreSQL connection pools, and how their connections are made and re-made.

Every `SqlDb` on one URL shares one small pool (`PgPool`): a connection is checked before it is handed out and
replaced when its backend was terminated or the server restarted, with bounded back-off, so a failover costs at
most the calls in flight, never a restart. The event store's own pool (adapters/event_store.py) takes the same
URL parsing, connection options and reconnection bound from here, and registers in `STATS_POOLS` so /metrics
counts its connections too (`connection_stats`). `probe` answers whether every pool reaches its database (for
/readyz and the outage watchdog). A failed or successful checkout moves the outage clock (adapters/db_outage.py).
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import parse_qs, unquote, urlparse

from adapters.db_outage import OUTAGE, unreachable

VIEWS_POOL_SIZE = 1  # PostgreSQL connections per process for the views (the event store's pool holds 2 more)
RECONNECT_S = 10.0  # a pool gives up a reconnection attempt after this long; the next request starts anew,
# so its back-off (1, 2, 4 s ... ) never grows past a few seconds, however long the outage lasted
CONNECT_TIMEOUT_S = 5


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
