"""Durable positions beside the events: how far each projection has applied the log, who holds its
lease, and named cursors over other sequences (the chain's versions).

A position is written in the same transaction as the view change it tracks, so a projection resumes
exactly where it stopped and never applies an event twice. A lease lets one runner at a time drive a
projection with side effects; a lease held by a dead process on this host is free at once.
"""

from __future__ import annotations

import os
import socket
import time
import uuid

from adapters.sql import Cursor, SqlDb

SCHEMA = """
CREATE TABLE IF NOT EXISTS projection_tracking (name TEXT PRIMARY KEY, position BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS projection_leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS cursors (name TEXT PRIMARY KEY, position BIGINT NOT NULL);
"""


def tracked(cur: Cursor, name: str) -> int:
    row = cur.execute("SELECT position FROM projection_tracking WHERE name = ?", (name,)).fetchone()
    return int(row[0]) if row else 0


def track(cur: Cursor, name: str, position: int) -> None:
    cur.execute("INSERT INTO projection_tracking (name, position) VALUES (?, ?) ON CONFLICT (name) "
                "DO UPDATE SET position = excluded.position", (name, position))


class Leases:
    def __init__(self, db: SqlDb, owner: str, lease_s: float) -> None:
        db.ensure(SCHEMA)
        self.db, self.owner, self.lease_s = db, owner, lease_s

    def acquire(self, name: str) -> bool:
        now = time.time()
        with self.db.transaction() as cur:
            row = cur.execute("SELECT owner, expires_at FROM projection_leases WHERE name = ?", (name,)).fetchone()
            if row is not None and row[0] != self.owner and row[1] > now and alive(row[0]):
                return False
            cur.execute("INSERT INTO projection_leases (name, owner, expires_at) VALUES (?, ?, ?) ON CONFLICT (name) "
                        "DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at",
                        (name, self.owner, now + self.lease_s))
        return True

    def release(self, name: str) -> None:
        with self.db.transaction() as cur:
            cur.execute("DELETE FROM projection_leases WHERE name = ? AND owner = ?", (name, self.owner))


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
