"""Follows the event log for each projector: tracking in the same transaction as the view change.

Polling the notification log works on SQLite and PostgreSQL alike. One runner at a time holds a
projector's lease, so side effects (forge writes) are not raced by a second process; a runner that
dies loses its lease when it expires. Side effects run before the tracking transaction and must be
idempotent: a crash between the two repeats the effect, never skips it.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from typing import Any, Protocol

from eventsourcing.application import Application

from projections.views import Cursor, ViewDB

log = logging.getLogger("code3.projections")


class NotYet(Exception):
    """The projector cannot handle this event yet (a dependency is missing); try again next round."""


class Projector(Protocol):
    name: str
    has_effects: bool

    def effect(self, event: Any) -> None:
        """Idempotent side effects outside the transaction (forge writes); may raise NotYet."""

    def apply(self, event: Any, cur: Cursor) -> None:
        """The view change, inside the tracking transaction."""


class Runner:
    def __init__(self, app: Application, views: ViewDB, owner: str | None = None, lease_s: float = 30.0) -> None:
        self.app = app
        self.views = views
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{id(self)}"
        self.lease_s = lease_s

    def position(self, name: str) -> int:
        rows = self.views.query("SELECT position FROM projection_tracking WHERE name = ?", (name,))
        return int(rows[0][0]) if rows else 0

    def acquire(self, name: str) -> bool:
        now = time.time()
        with self.views.transaction() as cur:
            cur.execute("SELECT owner, expires_at FROM projection_leases WHERE name = ?", (name,))
            row = cur.fetchone()
            if row is not None and row[0] != self.owner and row[1] > now and _alive(row[0]):
                return False
            cur.execute("INSERT INTO projection_leases (name, owner, expires_at) VALUES (?, ?, ?) ON CONFLICT (name) "
                        "DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at",
                        (name, self.owner, now + self.lease_s))
        return True

    def release(self, name: str) -> None:
        with self.views.transaction() as cur:
            cur.execute("DELETE FROM projection_leases WHERE name = ? AND owner = ?", (name, self.owner))

    def run_once(self, projector: Projector, limit: int = 500) -> int:
        """Apply the next page of events; returns how many were applied (0 when caught up or not leased)."""
        if not self.acquire(projector.name):
            return 0
        start = self.position(projector.name) + 1
        page = self.app.recorder.select_notifications(start=start, limit=limit)
        if not page:
            return 0
        events = [(n.id, self.app.mapper.to_domain_event(n)) for n in page]
        if not projector.has_effects:
            with self.views.transaction() as cur:
                if _tracked(cur, projector.name) >= events[-1][0]:
                    return 0
                for _, event in events:
                    projector.apply(event, cur)
                _track(cur, projector.name, events[-1][0])
            return len(events)
        applied = 0
        for notification_id, event in events:
            try:
                projector.effect(event)
            except NotYet as why:
                log.info("%s waits at notification %s: %s", projector.name, notification_id, why)
                break
            with self.views.transaction() as cur:
                if _tracked(cur, projector.name) >= notification_id:
                    continue
                projector.apply(event, cur)
                _track(cur, projector.name, notification_id)
            applied += 1
        return applied

    def catch_up(self, projector: Projector, limit: int = 500, keep_lease: bool = True) -> int:
        """Apply events until none are left; a one-off catch-up (`keep_lease=False`) hands the lease back."""
        total = 0
        try:
            while (n := self.run_once(projector, limit)) > 0:
                total += n
        finally:
            if not keep_lease:
                self.release(projector.name)
        return total


def _alive(owner: str) -> bool:
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


def _tracked(cur: Cursor, name: str) -> int:
    cur.execute("SELECT position FROM projection_tracking WHERE name = ?", (name,))
    row = cur.fetchone()
    return int(row[0]) if row else 0


def _track(cur: Cursor, name: str, position: int) -> None:
    cur.execute("INSERT INTO projection_tracking (name, position) VALUES (?, ?) ON CONFLICT (name) "
                "DO UPDATE SET position = excluded.position", (name, position))
