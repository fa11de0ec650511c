"""The read-model database: tables beside the events (same SQLite file or PostgreSQL schema).

Views and their tracking rows are written in one transaction, so a projection resumes exactly where
it stopped and never applies an event twice. SQL is written once with `?` placeholders; the
PostgreSQL side translates them.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, urlparse

SCHEMA = """
CREATE TABLE IF NOT EXISTS projection_tracking (name TEXT PRIMARY KEY, position BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS projection_leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS bounty_board (bounty_id TEXT PRIMARY KEY, repo TEXT NOT NULL, issue_hash TEXT NOT NULL,
    task_id TEXT, amount BIGINT NOT NULL, asset TEXT NOT NULL, state TEXT NOT NULL, workers TEXT NOT NULL,
    winner TEXT, cooling_until BIGINT, effort INTEGER NOT NULL DEFAULT 1, sponsor TEXT NOT NULL,
    claimable INTEGER NOT NULL DEFAULT 0, deadline BIGINT);
CREATE TABLE IF NOT EXISTS board_issues (issue_hash TEXT PRIMARY KEY, task_id TEXT, effort INTEGER NOT NULL,
    deadline BIGINT);
CREATE TABLE IF NOT EXISTS board_originators (originator_id TEXT PRIMARY KEY, issue_hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS board_bounty_ids (originator_id TEXT PRIMARY KEY, bounty_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chain_cursor (name TEXT PRIMARY KEY, version BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS webhook_deliveries (delivery_id TEXT PRIMARY KEY, event TEXT NOT NULL,
    payload TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL, last_error TEXT,
    next_attempt_at DOUBLE PRECISION NOT NULL, received_at DOUBLE PRECISION NOT NULL);
"""


class Cursor(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


class ViewDB:
    """One connection, guarded by a lock; `transaction()` yields a cursor taking `?` placeholders."""

    def __init__(self, sqlite_path: Path | None = None, postgres_url: str | None = None) -> None:
        self._lock = threading.RLock()
        self.postgres = postgres_url is not None
        if postgres_url is not None:
            import psycopg

            url = urlparse(postgres_url)
            schema = parse_qs(url.query).get("schema", [None])[0]
            self._conn: Any = psycopg.connect(url._replace(query="").geturl(), autocommit=True)
            if schema:
                self._conn.execute(f'SET search_path TO "{schema}"')
        else:
            assert sqlite_path is not None
            sqlite_path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(sqlite_path, timeout=30, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA busy_timeout=30000")
        with self.transaction() as cur:
            for statement in filter(str.strip, SCHEMA.split(";")):
                cur.execute(statement)

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        with self._lock:
            if self.postgres:
                with self._conn.transaction(), self._conn.cursor() as raw:
                    yield _PgCursor(raw)
                return
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn.cursor()
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self.transaction() as cur:
            cur.execute(sql, params)
            return list(cur.fetchall())

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class _PgCursor:
    def __init__(self, raw: Any) -> None:
        self._raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._raw.execute(sql.replace("?", "%s"), params)

    def fetchone(self) -> Any:
        return self._raw.fetchone()

    def fetchall(self) -> list[Any]:
        return self._raw.fetchall()


def open_views(project: Path, database_url: str | None) -> ViewDB:
    if database_url:
        return ViewDB(postgres_url=database_url)
    return ViewDB(sqlite_path=project / ".code3" / "events.sqlite")
