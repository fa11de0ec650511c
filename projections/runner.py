"""Follows the event log for each projector: tracking in the same transaction as the view change.

Polling the notification log works on SQLite and PostgreSQL alike (eventsourcing's own
`ProjectionRunner` needs store subscriptions, which SQLite lacks). One runner at a time holds a
projector's lease, so side effects (forge writes) are not raced by a second process; the lease is timed by
the database's clock and renewed by its holder's heartbeat (adapters/tracking.py). Side effects run
before the tracking transaction and must be idempotent: a crash between the two repeats the effect,
never skips it. An event a projector cannot apply at all is a dead letter: recorded, reported, and
passed over, so one bad event never stops the worker.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from eventsourcing.application import Application

from adapters.event_store import read_log
from adapters.sql import Cursor, SqlDb
from adapters.tracking import LEASE_S, Leases, default_owner, track, tracked

log = logging.getLogger("code3.projections")

DEAD_LETTERS = """
CREATE TABLE IF NOT EXISTS projection_dead_letters (name TEXT NOT NULL, position BIGINT NOT NULL,
    event TEXT NOT NULL, error TEXT NOT NULL, PRIMARY KEY (name, position));
"""


class NotYet(Exception):
    """The projector cannot handle this event yet (a dependency is missing); try again next round."""


class Projector(Protocol):
    name: str
    has_effects: bool
    schema: str  # DDL of the projector's tables ("" when it has none)

    def effect(self, event: Any) -> None:
        """Idempotent side effects outside the transaction (forge writes); may raise NotYet."""

    def apply(self, event: Any, cur: Cursor) -> None:
        """The view change, inside the tracking transaction."""


class Runner:
    def __init__(self, app: Application, views: SqlDb, owner: str | None = None, lease_s: float = LEASE_S) -> None:
        self.app = app
        self.views = views
        views.ensure(DEAD_LETTERS)
        self.leases = Leases(views, owner or default_owner(self), lease_s)

    @property
    def owner(self) -> str:
        return self.leases.owner

    def position(self, name: str) -> int:
        with self.views.statement() as cur:
            return tracked(cur, name)

    def acquire(self, name: str) -> bool:
        return self.leases.acquire(name)

    def release(self, name: str) -> None:
        self.leases.release(name)

    def run_once(self, projector: Projector, limit: int = 500) -> int:
        """Apply the next page of events; returns how many were passed (0 when caught up or not leased)."""
        if not self.acquire(projector.name):
            return 0
        if projector.schema:
            self.views.ensure(projector.schema)
        events = read_log(self.app, self.position(projector.name) + 1, limit)
        if not events:
            return 0
        if not projector.has_effects:
            try:
                with self.views.transaction() as cur:
                    if tracked(cur, projector.name) >= events[-1][0]:
                        return 0
                    for _, event in events:
                        projector.apply(event, cur)
                    track(cur, projector.name, events[-1][0])
                return len(events)
            except Exception:  # one event spoils the page: apply them one at a time to find it
                log.info("%s: a page failed; applying its events one by one", projector.name)
        passed = 0
        for position, event in events:
            try:
                projector.effect(event)
            except NotYet as why:
                log.info("%s waits at notification %s: %s", projector.name, position, why)
                break
            except Exception as exc:
                self._dead_letter(projector, position, event, exc)
                passed += 1
                continue
            try:
                with self.views.transaction() as cur:
                    if tracked(cur, projector.name) >= position:
                        continue
                    projector.apply(event, cur)
                    track(cur, projector.name, position)
            except Exception as exc:
                self._dead_letter(projector, position, event, exc)
            passed += 1
        return passed

    def _dead_letter(self, projector: Projector, position: int, event: Any, exc: Exception) -> None:
        """Record the event the projector could not apply and move past it (the log cannot be edited)."""
        log.error("%s cannot apply notification %s (%s): %s; recorded as a dead letter", projector.name, position,
                  type(event).__qualname__, type(exc).__name__)
        with self.views.transaction() as cur:
            cur.execute("INSERT INTO projection_dead_letters (name, position, event, error) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT (name, position) DO NOTHING",
                        (projector.name, position, type(event).__qualname__, f"{type(exc).__name__}: {exc}"[:500]))
            track(cur, projector.name, max(position, tracked(cur, projector.name)))

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


def dead_letters(views: SqlDb) -> list[dict[str, Any]]:
    """Events a projector could not apply (reported by `code3 doctor` and `code3 audit verify`)."""
    views.ensure(DEAD_LETTERS)
    rows = views.query("SELECT name, position, event, error FROM projection_dead_letters ORDER BY name, position")
    return [{"projection": r[0], "position": r[1], "event": r[2], "error": r[3]} for r in rows]
