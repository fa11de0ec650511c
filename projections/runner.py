"""One way to follow the event log, in two modes, with tracking in the same transaction as the view change.

Polling the notification log works on SQLite and PostgreSQL alike (eventsourcing's own `ProjectionRunner`
needs store subscriptions, which SQLite lacks). Every projector follows the `Projector` protocol; how it is
followed depends on whether it has side effects:

- **Pure projectors** (the bounty board, the annotation store, the CodeNexus index) are caught up by
  `follow`, by any process, at any time, with no lease: each page of events is applied in one transaction
  that first locks the projection's tracking row (`SELECT ... FOR UPDATE` on PostgreSQL; SQLite's
  `BEGIN IMMEDIATE` serialises), so two catch-ups never apply an event twice, and a tool that calls `follow`
  after its own write reads that write whoever else is catching up. The page is read and decoded before the
  lock is taken; the lock is held only while the page is applied, and blocks only other catch-ups of the
  same projection (not the writers of events, on PostgreSQL). A follower that is current reads its
  position without any lock. A page that fails is applied again one event at a time to find the bad event,
  which becomes a dead letter. Each pure projector carries a `version`; the tracking row remembers the
  version its read model was built with, and a newer version empties the model (drops and recreates
  `tables` from `schema`) and rebuilds it from the log by itself, once, under the same row lock
  (`projections.versions`). A process whose code is older than the stored version leaves the model alone.
- **Projectors with effects** (the forge mirror) are driven by `Runner` under a lease timed by the database's
  clock (adapters/tracking.py: a dead holder is taken over within 10 s), so a side effect is never raced by a
  second process. Effects run before the tracking transaction and must be idempotent: a crash between the
  two repeats the effect, never skips it. A transient failure (projections.failures: the forge or the
  database away, a rate limit, `NotYet`) stops the round at that event, is logged once per streak, counted
  in `projection_health` (doctor and /metrics show it) and tried again next round; only a permanent one
  makes the event a dead letter.

An event a projector can never apply is a dead letter: recorded, reported (`code3 doctor`, `audit verify`),
and passed over, so one bad event never stops a follower.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Protocol

from eventsourcing.application import Application

from adapters.event_store import read_log
from adapters.sql import Cursor, SqlDb
from adapters.tracking import LEASE_S, Leases, default_owner, lock_position, track, tracking
from projections.failures import NotYet, describe, failed, recovered, transient
from projections.versions import DEAD_LETTERS, ReadModel, ensure_base, upgrade

__all__ = ["DEAD_LETTERS", "PAGE", "NotYet", "Projector", "Runner", "dead_letters", "follow"]

log = logging.getLogger("code3.projections")
PAGE = 500  # events per transaction: the most a catch-up holds its projection's row lock for


class Projector(ReadModel, Protocol):
    """What the runner calls: a read model's name, version, schema and tables (projections.versions), whether it
    has effects, and its `effect` and `apply`. The attributes are only read: class attributes will do."""

    @property
    def has_effects(self) -> bool: ...

    def effect(self, event: Any) -> None:
        """Idempotent side effects outside the transaction (forge writes); may raise NotYet."""

    def apply(self, event: Any, cur: Cursor) -> None:
        """The view change, inside the tracking transaction."""


def follow(app: Application, views: SqlDb, projector: Projector, limit: int = PAGE, pages: int | None = None) -> int:
    """Catch the pure `projector` up with the log (at most `pages` pages); how many events were passed.
    Read-your-own-writes: whatever was in the log when this was called is applied when it returns."""
    if projector.has_effects:
        raise ValueError(f"{projector.name} has side effects: it runs under a lease (Runner)")
    ensure_base(views)
    passed = 0
    while pages is None or pages > 0:
        head = app.recorder.max_notification_id() or 0
        with views.statement() as cur:  # no lock: a follower that is current pays one indexed read
            start, version = tracking(cur, projector.name)
        if version != projector.version:
            moved = upgrade(views, projector, start, version)
            if moved is False:  # a newer version of the code owns this read model
                return passed
            continue
        views.ensure(projector.schema)
        if start >= head:
            return passed
        events = read_log(app, start + 1, limit)  # read and decoded before the lock is taken
        if not events:
            return passed
        applied = _apply_page(views, projector, start, events)
        passed += applied
        if applied and pages is not None:  # a page another catch-up had applied first is no page of ours
            pages -= 1
    return passed


def _apply_page(views: SqlDb, projector: Projector, start: int, events: list[tuple[int, Any]]) -> int:
    """Apply what of `events` is beyond the locked position, in one transaction; 0 when another catch-up
    got there first (the caller reads the position again)."""
    try:
        with views.transaction() as cur:
            todo = _todo(views, cur, projector, start, events)
            for _, event in todo:
                projector.apply(event, cur)
            if todo:
                track(cur, projector.name, todo[-1][0])
            return len(todo)
    except Exception as exc:
        if transient(exc):  # the database is away: nothing is wrong with the events
            raise
        log.info("%s: a page failed (%s); applying its events one by one", projector.name, type(exc).__name__)
    passed = 0
    for position, event in events:
        try:
            with views.transaction() as cur:
                if not _todo(views, cur, projector, start, [(position, event)]):
                    continue
                projector.apply(event, cur)
                track(cur, projector.name, position)
        except Exception as exc:
            if transient(exc):
                raise
            _dead_letter(views, projector, position, event, exc, start)
        passed += 1
    return passed


def _todo(views: SqlDb, cur: Cursor, projector: Projector, start: int, events: list[tuple[int, Any]]
          ) -> list[tuple[int, Any]]:
    """Lock the tracking row; the events of `events` not applied yet (none when the model was rebuilt since
    `start` was read: the page no longer follows on)."""
    position, version = lock_position(views, cur, projector.name)
    if version != projector.version or position < start:
        return []
    return [(n, event) for n, event in events if n > position]


def _dead_letter(views: SqlDb, projector: Projector, position: int, event: Any, exc: Exception,
                 start: int | None = None) -> None:
    """Record the event the projector could not apply and move past it (the log cannot be edited)."""
    with views.transaction() as cur:
        at, version = lock_position(views, cur, projector.name)
        if at >= position or (start is not None and (at < start or version != projector.version)):
            return  # applied, or the model was rebuilt, meanwhile
        log.error("%s cannot apply notification %s (%s): %s; recorded as a dead letter", projector.name, position,
                  type(event).__qualname__, describe(exc))
        cur.execute("INSERT INTO projection_dead_letters (name, position, event, error) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (name, position) DO NOTHING",
                    (projector.name, position, type(event).__qualname__, describe(exc)))
        track(cur, projector.name, position)


class Runner:
    """The worker's follower: pure projectors through `follow` (no lease), projectors with side effects
    under a lease held by `owner`."""

    def __init__(self, app: Application, views: SqlDb, owner: str | None = None, lease_s: float = LEASE_S) -> None:
        self.app = app
        self.views = views
        ensure_base(views)
        self.leases = Leases(views, owner or default_owner(self), lease_s)

    @property
    def owner(self) -> str:
        return self.leases.owner

    def position(self, name: str) -> int:
        with self.views.statement() as cur:
            return tracking(cur, name)[0]

    def acquire(self, name: str) -> bool:
        return self.leases.acquire(name)

    def release(self, name: str) -> None:
        self.leases.release(name)

    def run_once(self, projector: Projector, limit: int = PAGE) -> int:
        """One page; how many events were passed (0 when caught up, not leased, or stopped by a transient
        failure at the first event)."""
        if not projector.has_effects:
            return follow(self.app, self.views, projector, limit, pages=1)
        return self._effects(projector, limit)[0]

    def catch_up(self, projector: Projector, limit: int = PAGE, keep_lease: bool | None = None,
                 budget_s: float | None = None) -> int:
        """Apply events until none are left (or, with effects, until a transient failure stops the round, or
        `budget_s` seconds have passed: a backlog of forge calls then goes on next round instead of holding up the
        round's other steps). `keep_lease` is ignored: pure projectors take no lease any more (call `follow`)."""
        if not projector.has_effects:
            return follow(self.app, self.views, projector, limit)
        deadline = None if budget_s is None else time.monotonic() + budget_s
        total = 0
        while True:
            passed, stopped = self._effects(projector, limit, deadline)
            total += passed
            if stopped or passed == 0 or (deadline is not None and time.monotonic() >= deadline):
                return total

    def _effects(self, projector: Projector, limit: int, deadline: float | None = None) -> tuple[int, bool]:
        """A page of a projector with side effects, under its lease, ended early at `deadline` (monotonic):
        (events passed, stopped by a transient failure)."""
        if not self.acquire(projector.name):
            return 0, False
        if projector.schema:
            self.views.ensure(projector.schema)
        events = read_log(self.app, self.position(projector.name) + 1, limit)
        passed = 0
        for position, event in events:
            if passed and deadline is not None and time.monotonic() >= deadline:
                break  # the rest of the page next round: at least one event a round, so a round always moves
            try:
                projector.effect(event)
                with self.views.transaction() as cur:
                    if lock_position(self.views, cur, projector.name)[0] < position:
                        projector.apply(event, cur)
                        track(cur, projector.name, position)
            except Exception as exc:
                if transient(exc):
                    if passed:  # this round got further than the last: a new streak starts here
                        recovered(self.views, projector.name)
                    self._stopped(projector, position, exc)
                    return passed, True
                _dead_letter(self.views, projector, position, exc=exc, event=event)
            passed += 1
        if passed and (streak := recovered(self.views, projector.name)):
            log.warning("%s goes on after %d round(s) stopped by transient failures", projector.name, streak)
        return passed, False

    def _stopped(self, projector: Projector, position: int, exc: Exception) -> None:
        """A transient failure: the round ends at `position`, tried again next round; logged once a streak."""
        streak = failed(self.views, projector.name, exc)
        if isinstance(exc, NotYet):
            log.info("%s waits at notification %s: %s", projector.name, position, exc)
        elif streak == 1:
            log.warning("%s stops at notification %s, to try again next round: %s", projector.name, position,
                        describe(exc))
        else:
            log.debug("%s still stopped at notification %s (%d rounds): %s", projector.name, position, streak,
                      describe(exc))


def dead_letters(views: SqlDb) -> list[dict[str, Any]]:
    """Events a projector could not apply (reported by `code3 doctor` and `code3 audit verify`)."""
    views.ensure(DEAD_LETTERS)
    rows = views.query("SELECT name, position, event, error FROM projection_dead_letters ORDER BY name, position")
    return [{"projection": r[0], "position": r[1], "event": r[2], "error": r[3]} for r in rows]
