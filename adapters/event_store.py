"""The event store: an eventsourcing Application on SQLite (default) or PostgreSQL, chosen by settings.

On PostgreSQL every store of a process on one database shares one library datastore (`SharedPostgresFactory`):
a pool of at most `STORE_POOL_SIZE` connections, each pinged before use (POSTGRES_PRE_PING) and replaced when
its backend was terminated, with the same bounded reconnection as the views' pool (adapters.pg_pool).
"""

from __future__ import annotations

import importlib
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError
from eventsourcing.postgres import PostgresDatastore, PostgresFactory
from eventsourcing.utils import register_topic

from adapters.pg_pool import RECONNECT_S, STATS_POOLS, PostgresUrl, connection_options
from domain.bounties.bounty import Bounty
from domain.bounties.issue import Issue
from domain.errors import present
from domain.knowledge.file_meta import FileMeta

STORE_POOL_SIZE = 2  # with the views' 1: at most 3 PostgreSQL connections per process
# A stored event names its class by topic, `module:Aggregate.Event`, as it was when it was written. The aggregates
# moved when domain/ was split by bounded context; each old module is registered as its new one, so a log written
# before resolves unchanged (tests/integration/test_legacy_store.py reads one).
MOVED_MODULES = {
    "domain.bounty": "domain.bounties.bounty",
    "domain.issue": "domain.bounties.issue",
    "domain.spec": "domain.bounties.spec",
    "domain.index": "domain.bounties.index",
    "domain.identity_link": "domain.bounties.identity_link",
    "domain.file_meta": "domain.knowledge.file_meta",
    "domain.annotation": "domain.knowledge.annotation",
    "domain.generated_spec": "domain.knowledge.generated_spec",
}
for _old, _new in MOVED_MODULES.items():
    register_topic(_old, importlib.import_module(_new))

A = TypeVar("A", bound=Aggregate)


@dataclass(frozen=True)
class Change(Generic[A]):
    """One aggregate's part of a unit of work.

    `apply` gets the current aggregate (or None) and returns the aggregate to save (or None to save
    nothing); it must be safe to run again on newer state. `known`, an aggregate the caller loaded a
    moment ago, saves the first load; if it is stale, the save fails and everything is reloaded.
    `new`: the aggregate most likely does not exist yet, so the first attempt skips loading it (a
    deterministic id makes a wrong guess fail the save, and the retry loads it).
    """

    cls: type[A]
    aggregate_id: UUID
    apply: Callable[[A | None], A | None]
    known: A | None = None
    new: bool = False
    decided: list[bool] = field(default_factory=list, compare=False, repr=False)  # a step's last outcome

    @property
    def recorded(self) -> bool:
        """After the save: whether a `step` recorded anything (its rule, or `create`) on the attempt that was saved."""
        return bool(self.decided and self.decided[-1])

    @staticmethod
    def step(cls: type[A], aggregate_id: UUID, rule: Callable[[A], bool], known: A | None = None, *,
             create: Callable[[], A] | None = None, if_present: bool = False, what: str | None = None) -> Change[A]:
        """A change made by one of an existing aggregate's rules: `rule(aggregate)` records what it decides and
        says whether it recorded anything (False: nothing to save, e.g. a retry finding the step done).

        An aggregate not there yet is made by `create()` when given (its creation is what is saved; the rule
        decides on existing ones only), skipped when `if_present` (nothing to do), and otherwise a broken
        invariant naming `what` (by default the aggregate's class)."""
        decided: list[bool] = []

        def apply(current: A | None) -> A | None:
            decided.clear()  # a redo on newer state decides afresh
            if current is None and create is not None:
                decided.append(True)
                return create()
            if current is None and if_present:
                return None
            aggregate = present(current, what or f"the {cls.__name__}")
            decided.append(rule(aggregate))
            return aggregate if decided[-1] else None

        return Change(cls, aggregate_id, apply, known, decided=decided)


UPDATE_ATTEMPTS = 24
UPDATE_PATIENCE_S = 5.0  # a save that keeps losing races (a dozen processes syncing one bounty on a loaded
# PostgreSQL, the soak campaign) tries again for this long before the call answers E_PRECONDITION
SNAPSHOT_EVERY = 100  # events between two snapshots of an aggregate that can gather a long history


class EventStore(Application):
    """Every aggregate of Code3 in one log, so one notification sequence orders every fact.

    A cold load (nothing cached) replays an aggregate's whole history: ~1 s for 1 000 events here, 4-7 s for 5 000
    (benchmarks/snapshots.py). The aggregates whose histories can grow without bound (a bounty accepted and
    withdrawn, a file's tags, an issue's labels) are snapshotted every SNAPSHOT_EVERY events, which keeps the load
    flat; `code3 audit verify` compares each load (from its snapshot) with a replay of the log."""

    name = "Code3"
    snapshotting_intervals: ClassVar[dict[type[Any], int]] = {
        Bounty: SNAPSHOT_EVERY, FileMeta: SNAPSHOT_EVERY, Issue: SNAPSHOT_EVERY}

    def get(self, cls: type[A], aggregate_id: UUID) -> A | None:
        try:
            aggregate: object = self.repository.get(aggregate_id)
        except AggregateNotFoundError:
            return None
        if not isinstance(aggregate, cls):
            raise TypeError(f"{aggregate_id} is a {type(aggregate).__name__}, not a {cls.__name__}")
        return aggregate

    def update(self, cls: type[A], aggregate_id: UUID, change: Callable[[A | None], A | None],
               attempts: int = UPDATE_ATTEMPTS, known: A | None = None) -> A | None:
        """Load, change, save one aggregate (see `update_all`)."""
        return self.update_all(Change(cls, aggregate_id, change, known), attempts=attempts)[0]

    def update_all(self, *changes: Change[Any], attempts: int = UPDATE_ATTEMPTS) -> list[Any]:
        """Load, change and save several aggregates in one transaction; when another writer saved first
        (optimistic concurrency), reload all and redo, for at most `attempts` tries and UPDATE_PATIENCE_S.
        Returns each aggregate as it now is (or None)."""
        give_up = time.monotonic() + UPDATE_PATIENCE_S
        for attempt in range(attempts):
            results, dirty = [], []
            for change in changes:
                if attempt == 0 and (change.known is not None or change.new):
                    current = change.known
                else:
                    current = self.get(change.cls, change.aggregate_id)
                changed = change.apply(current)
                results.append(current if changed is None else changed)
                if changed is not None:
                    dirty.append(changed)
            try:
                if dirty:
                    self.save(*dirty)
                return results
            except IntegrityError:
                if attempt == attempts - 1 or time.monotonic() > give_up:
                    raise
                # racing writers (the calls of a serve, other processes syncing the same bounty): a random pause
                # growing with each loss, so they do not collide again in step (the loser's last IntegrityError
                # becomes E_PRECONDITION, "retry", at the front: mcp_tools.conflicts)
                time.sleep(random.uniform(0, min(0.1, 0.002 * 2**attempt)))
        raise AssertionError("unreachable")


# A cached aggregate is fast-forwarded from the store before use (so other processes' events are
# seen) and handed out as a deep copy: replaying whole histories on every read cost more than saving.
CACHE = {"AGGREGATE_CACHE_MAXSIZE": "2000", "AGGREGATE_CACHE_FASTFORWARD": "y"}


def store_env(project: Path, database_url: str | None) -> dict[str, str]:
    """eventsourcing's persistence settings: the project's SQLite file, or PostgreSQL from a URL."""
    return {**CACHE, **_persistence_env(project, database_url)}


def _persistence_env(project: Path, database_url: str | None) -> dict[str, str]:
    if not database_url:
        from adapters.private_files import private_file

        private_file(project / ".code3" / "events.sqlite")  # 0600 in a 0700 state directory
        return {
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": str(project / ".code3" / "events.sqlite"),
            "SQLITE_LOCK_TIMEOUT": "30",
        }
    url = PostgresUrl.parse(database_url)
    env = {
        "PERSISTENCE_MODULE": f"{__name__}:SharedPostgresFactory",
        "POSTGRES_DBNAME": url.dbname,
        "POSTGRES_HOST": url.host,
        "POSTGRES_PORT": str(url.port),
        "POSTGRES_USER": url.user,
        "POSTGRES_PASSWORD": url.password,
        "POSTGRES_PRE_PING": "y",  # a connection whose backend was terminated is replaced before it is used
        "POSTGRES_POOL_SIZE": "1",  # opened at start; one more on demand (the overflow)
        "POSTGRES_MAX_OVERFLOW": str(STORE_POOL_SIZE - 1),
        "POSTGRES_CONNECT_TIMEOUT": "30",  # how long a call waits for a connection of the pool
    }
    if url.schema:
        env["POSTGRES_SCHEMA"] = url.schema
    return env


class SharedPostgresFactory(PostgresFactory):
    """The library's PostgreSQL factory, but one datastore (one pool) per database and schema in a process: a
    worker acting for several identities, or tests' several services, add no connections. The pool gets this
    process's application_name and gives up a reconnection after RECONNECT_S (the next request starts anew),
    so its back-off stays short however long an outage lasts."""

    _shared: dict[tuple[str, ...], tuple[PostgresDatastore, list[int]]] = {}  # noqa: RUF012
    _guard = threading.RLock()  # reentrant: a __del__ run by the GC inside the guard releases too

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        own = self.datastore
        key = tuple(str(self.env.get(k) or "") for k in (self.POSTGRES_HOST, self.POSTGRES_PORT, self.POSTGRES_DBNAME,
                                                        self.POSTGRES_USER, self.POSTGRES_SCHEMA))
        with self._guard:
            shared = self._shared.get(key)
            if shared is None:
                pool_kwargs = own.pool.kwargs
                if not isinstance(pool_kwargs, dict):  # the library's datastore hands its pool a dict
                    raise TypeError(f"unexpected psycopg pool kwargs: {type(pool_kwargs).__name__}")
                pool_kwargs.update(connection_options())
                STATS_POOLS.add(own.pool)
                own.pool.reconnect_timeout = RECONNECT_S
                shared = self._shared[key] = (own, [0])
            shared[1][0] += 1
        self.datastore, self._key, self._closed = shared[0], key, False
        if own is not self.datastore:
            own.close()

    def close(self) -> None:
        with self._guard:  # once per store: the library closes again from __del__
            shared = self._shared.get(self._key)
            if getattr(self, "_closed", True) or shared is None or shared[0] is not self.datastore:
                return
            self._closed = True
            shared[1][0] -= 1
            if shared[1][0] > 0:
                return
            del self._shared[self._key]
        super().close()


def open_store(project: Path, database_url: str | None = None) -> EventStore:
    return _created(lambda: EventStore(env=store_env(project, database_url)))


def _created(build: Callable[[], EventStore], attempts: int = 5) -> EventStore:
    """The store, its tables created if need be. Processes starting at once on a fresh PostgreSQL schema race
    the library's CREATE TABLE IF NOT EXISTS ("tuple concurrently updated", a duplicate type), and on SQLite
    the switch to WAL, which takes the file's lock ("database is locked"): the losers try again a moment later."""
    for attempt in range(attempts):
        try:
            return build()
        except Exception as exc:  # psycopg's InternalError / UniqueViolation, sqlite3's OperationalError
            raced = ("concurrently", "already exists", "database is locked")
            if attempt == attempts - 1 or not any(k in str(exc) for k in raced):
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def read_log(app: Application, start: int = 1, limit: int = 1000) -> list[tuple[int, Any]]:
    """One page of the notification log from `start`: (notification id, domain event) pairs."""
    page = app.recorder.select_notifications(start=start, limit=limit)
    return [(n.id, app.mapper.to_domain_event(n)) for n in page]


def iter_log(app: Application, start: int = 1, page: int = 1000) -> Iterator[tuple[int, Any]]:
    """The whole log from `start`, in order, read page by page."""
    while batch := read_log(app, start, page):
        yield from batch
        if len(batch) < page:
            return
        start = batch[-1][0] + 1
