"""Durable positions beside the events: how far each projection has applied the log (and with which version
of its projector), who holds its lease, how its side effects fare, and named cursors over other sequences
(the chain's versions).

A position is written in the same transaction as the view change it tracks, so a projection resumes
exactly where it stopped and never applies an event twice. A pure projection is caught up under a lock on
its tracking row (`lock_position`: `SELECT ... FOR UPDATE` on PostgreSQL; SQLite's `BEGIN IMMEDIATE`
serialises every writer already), so any process may catch it up at any time. A lease lets one runner at a
time drive a projection with side effects (and a claim lets one worker run one payout); a lease held by a
dead process on this host is free at once.

Leases span hosts, so their time is the database's (PostgreSQL's `clock_timestamp()`, SQLite's own clock):
two hosts whose clocks disagree still agree on when a lease ends. A lease is short (`LEASE_S`, 8 s) and a
heartbeat thread of the holder's process renews every lease it holds every `RENEW_S` (2 s): a holder that
dies stops renewing, and another process takes over at its next round after the 8 s have run out (within
10 s with the worker's 2 s tick). Renewing from a thread rather than at each step keeps a live holder's
lease while one of its calls blocks longer than the lease (a forge's retry budget runs to minutes), so a
slow holder is never raced by a second one; a holder that cannot reach the database for the lease's length
loses it, and finds that out at its next acquire.
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import threading
import uuid
import weakref

from adapters.db_outage import unreachable
from adapters.sql import DDL_LOCK, Cursor, SqlDb

log = logging.getLogger("code3.leases")

SCHEMA = """
CREATE TABLE IF NOT EXISTS projection_tracking (name TEXT PRIMARY KEY, position BIGINT NOT NULL, version INTEGER);
CREATE TABLE IF NOT EXISTS projection_health (name TEXT PRIMARY KEY, failures INTEGER NOT NULL,
    failing_since DOUBLE PRECISION, error TEXT);
CREATE TABLE IF NOT EXISTS projection_leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS payout_claims (name TEXT PRIMARY KEY, owner TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS cursors (name TEXT PRIMARY KEY, position BIGINT NOT NULL);
"""
LEASE_S = 8.0  # a dead holder's lease is free this long after its last renewal
RENEW_S = 2.0  # how often a live holder's heartbeat renews what it holds
TABLES = ("projection_leases", "payout_claims")


_MIGRATED: weakref.WeakSet[SqlDb] = weakref.WeakSet()


def ensure_tracking(db: SqlDb) -> None:
    """The tables, and on a database whose `projection_tracking` predates projector versions, its `version`
    column added (NULL: built before versions existed); every position is kept."""
    db.ensure(SCHEMA)
    if db in _MIGRATED:
        return
    if db.postgres:  # looked up first: an ALTER would wait for every catch-up in flight, even as a no-op
        missing = not db.query("SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
                               "AND table_name = 'projection_tracking' AND column_name = 'version'")
        if missing:
            with db.transaction() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(?)", (DDL_LOCK,))
                cur.execute("ALTER TABLE projection_tracking ADD COLUMN IF NOT EXISTS version INTEGER")
    else:
        with db.statement() as cur:
            columns = {row[1] for row in cur.execute("PRAGMA table_info(projection_tracking)").fetchall()}
            if "version" not in columns:
                try:
                    cur.execute("ALTER TABLE projection_tracking ADD COLUMN version INTEGER")
                except sqlite3.OperationalError as exc:  # another process added it a moment ago
                    if "duplicate column" not in str(exc):
                        raise
    _MIGRATED.add(db)


def tracked(cur: Cursor, name: str) -> int:
    row = cur.execute("SELECT position FROM projection_tracking WHERE name = ?", (name,)).fetchone()
    return int(row[0]) if row else 0


def tracking(cur: Cursor, name: str) -> tuple[int, int | None]:
    """The position and the projector version of `name`, unlocked (0 and None when it was never tracked)."""
    row = cur.execute("SELECT position, version FROM projection_tracking WHERE name = ?", (name,)).fetchone()
    return (int(row[0]), None if row[1] is None else int(row[1])) if row else (0, None)


def lock_position(db: SqlDb, cur: Cursor, name: str) -> tuple[int, int | None]:
    """`tracking`, with the row locked until the transaction ends: catch-ups of one projection run one at a
    time (other projections and the writers of events are not held up on PostgreSQL)."""
    cur.execute("INSERT INTO projection_tracking (name, position) VALUES (?, 0) ON CONFLICT (name) DO NOTHING",
                (name,))
    lock = " FOR UPDATE" if db.postgres else ""  # SQLite's BEGIN IMMEDIATE already serialises writers
    row = cur.execute(f"SELECT position, version FROM projection_tracking WHERE name = ?{lock}", (name,)).fetchone()
    return int(row[0]), None if row[1] is None else int(row[1])


def track(cur: Cursor, name: str, position: int, version: int | None = None) -> None:
    """Record `position` (and, given, the projector version the read model is now built with)."""
    if version is None:
        cur.execute("INSERT INTO projection_tracking (name, position) VALUES (?, ?) ON CONFLICT (name) "
                    "DO UPDATE SET position = excluded.position", (name, position))
        return
    cur.execute("INSERT INTO projection_tracking (name, position, version) VALUES (?, ?, ?) ON CONFLICT (name) "
                "DO UPDATE SET position = excluded.position, version = excluded.version", (name, position, version))


def db_now(db: SqlDb, cur: Cursor) -> float:
    """The database's clock in seconds since the epoch (the one clock every host shares)."""
    sql = ("SELECT EXTRACT(EPOCH FROM clock_timestamp())" if db.postgres
           else "SELECT (julianday('now') - 2440587.5) * 86400.0")
    return float(cur.execute(sql).fetchone()[0])


class Leases:
    """Named leases in `table` held by `owner` (a runner's projections, or a worker's payout claims)."""

    def __init__(self, db: SqlDb, owner: str, lease_s: float = LEASE_S, table: str = "projection_leases") -> None:
        if table not in TABLES:
            raise ValueError(f"no lease table {table!r}")
        db.ensure(SCHEMA)
        self.db, self.owner, self.lease_s, self.table = db, owner, lease_s, table
        self._held: set[str] = set()
        self._mu = threading.Lock()

    def acquire(self, name: str) -> bool:
        """Take or renew the lease `name`: True when this owner holds it until the database's now + lease."""
        t = self.table
        with self.db.transaction() as cur:
            now = db_now(self.db, cur)
            lock = " FOR UPDATE" if self.db.postgres else ""  # SQLite's BEGIN IMMEDIATE already serializes
            row = cur.execute(f"SELECT owner, expires_at FROM {t} WHERE name = ?{lock}", (name,)).fetchone()
            if row is not None and row[0] != self.owner and row[1] > now and alive(row[0]):
                return False
            if row is None:  # a first holder: racing inserts are judged by the primary key
                taken = cur.execute(f"INSERT INTO {t} (name, owner, expires_at) VALUES (?, ?, ?) "
                                    "ON CONFLICT (name) DO NOTHING", (name, self.owner, now + self.lease_s))
                if taken.rowcount != 1:
                    return False
            else:
                cur.execute(f"UPDATE {t} SET owner = ?, expires_at = ? WHERE name = ?",
                            (self.owner, now + self.lease_s, name))
        with self._mu:
            self._held.add(name)
        _heartbeat(self)
        return True

    def release(self, name: str) -> None:
        with self._mu:
            self._held.discard(name)
        with self.db.transaction() as cur:
            cur.execute(f"DELETE FROM {self.table} WHERE name = ? AND owner = ?", (name, self.owner))

    def renew(self) -> int:
        """Push back the end of every lease this owner still holds (one it lost is not taken back)."""
        with self._mu:
            names = sorted(self._held)
        if not names:
            return 0
        marks = ", ".join("?" * len(names))
        with self.db.transaction() as cur:
            now = db_now(self.db, cur)
            renewed = cur.execute(f"UPDATE {self.table} SET expires_at = ? WHERE owner = ? AND name IN ({marks})",
                                  (now + self.lease_s, self.owner, *names))
            return int(renewed.rowcount)

    def forget(self) -> None:
        """Stop renewing (the process is closing; its leases run out or are released)."""
        with self._mu:
            self._held.clear()


_holders: weakref.WeakSet[Leases] = weakref.WeakSet()
_beating: list[threading.Thread] = []
_beat_lock = threading.Lock()


def _heartbeat(leases: Leases) -> None:
    """Register `leases` with this process's one heartbeat thread (started on the first lease taken); held
    weakly, so a `Leases` nobody keeps any more is no longer renewed and its leases run out."""
    with _beat_lock:
        _holders.add(leases)
        if _beating and _beating[0].is_alive():
            return
        thread = threading.Thread(target=_beat, name="code3-lease-heartbeat", daemon=True)
        _beating[:] = [thread]
        thread.start()


def _beat() -> None:
    stop = threading.Event()
    while not stop.wait(RENEW_S):
        with _beat_lock:
            holders = list(_holders)
        for leases in holders:
            try:
                leases.renew()
            except Exception as exc:
                if not unreachable(exc):  # its database was closed: nothing of it is held any more
                    leases.forget()
                    continue
                # the database is away: the next beat tries again; past the lease's length it may be taken over
                log.warning("lease heartbeat of %s: %s", leases.owner, type(exc).__name__)


def default_owner(tag: object) -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{id(tag)}"


# This process, as a claim's owner: host and pid tell whether the owner still lives (see `alive`).
PROCESS_OWNER = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def alive(owner: str) -> bool:
    """A lease held by a dead process on this host is free at once (a killed worker restarts at once)."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class NamedCursor:
    """A position over another sequence (the chain's versions) that only moves forward."""

    def __init__(self, db: SqlDb, name: str) -> None:
        db.ensure(SCHEMA)
        self.db, self.name = db, name

    def get(self) -> int:
        rows = self.db.query("SELECT position FROM cursors WHERE name = ?", (self.name,))
        return int(rows[0][0]) if rows else 0

    def advance(self, position: int) -> None:
        with self.db.transaction() as cur:
            cur.execute("INSERT INTO cursors (name, position) VALUES (?, ?) ON CONFLICT (name) "
                        "DO UPDATE SET position = excluded.position WHERE cursors.position < excluded.position",
                        (self.name, position))
