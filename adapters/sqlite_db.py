"""One SQLite connection per embedded adapter, shared safely across the server's worker threads.

Opening a connection (and setting WAL) per call cost more than the queries themselves. Writes take
`BEGIN IMMEDIATE`, so several processes sharing the file still serialise their transactions.
`synchronous=NORMAL` in WAL mode keeps every commit across a process crash (only an OS crash can
lose the last commits), as for any embedded default.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class SqliteDb:
    def __init__(self, path: Path, schema: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        self._lock = threading.RLock()
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=30000")
        with self._lock:
            self._conn.executescript(schema)

    @contextmanager
    def statement(self) -> Iterator[sqlite3.Connection]:
        """For reads and single-statement writes: each statement is its own transaction (autocommit)."""
        with self._lock:
            yield self._conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed when the block ends, rolled back if it raises."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._conn.close()
