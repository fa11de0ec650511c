"""Projector versions: a pure projector's read model is rebuilt from the log by itself when its logic changes.

The tracking row (adapters/tracking.py) keeps the version a read model was built with. When the code's
version is the stored one, nothing happens. When it is newer (or nothing was stored: a new read model),
whichever process comes first — under the tracking row's lock, so once — drops the projector's `tables`,
recreates them from its `schema`, forgets its dead letters and sets its position to 0: the catch-up that
follows rebuilds the model from the log. When the stored version is newer than the code, this process runs
older code than the one that built the model (a rolling upgrade) and leaves the model to the newer ones.

A tracking row written before versions existed has none: its model is taken as version 1, or as what the
projector's optional `legacy_version(cur)` says (the CodeNexus index kept a version of its own).
"""

from __future__ import annotations

import logging
import weakref
from typing import Protocol

from adapters.sql import DDL_LOCK, Cursor, SqlDb
from adapters.tracking import ensure_tracking, lock_position, track, tracking

log = logging.getLogger("code3.projections")

DEAD_LETTERS = """
CREATE TABLE IF NOT EXISTS projection_dead_letters (name TEXT NOT NULL, position BIGINT NOT NULL,
    event TEXT NOT NULL, error TEXT NOT NULL, PRIMARY KEY (name, position));
"""


class ReadModel(Protocol):
    """What this module reads of a pure projector, and only reads: so a projector or its class will do (the
    readers of the tables pass the class). `legacy_version(cur)` is optional."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> int:
        """Of the read model's logic; the model is rebuilt when it grows."""

    @property
    def schema(self) -> str:
        """DDL of the projector's tables ("" when it has none)."""

    @property
    def tables(self) -> tuple[str, ...]:
        """The tables a rebuild drops and recreates from `schema`."""


_ready: weakref.WeakKeyDictionary[SqlDb, set[str]] = weakref.WeakKeyDictionary()
_left_alone: set[str] = set()


def ensure_base(views: SqlDb) -> None:
    """Tracking and dead letters: the tables every follower writes."""
    ensure_tracking(views)
    views.ensure(DEAD_LETTERS)


def ready(views: SqlDb, projector: ReadModel) -> None:
    """For readers of a pure projector's tables: the tables exist in the shape of this code's version (a model
    of an older version is emptied here, and rebuilt by the next catch-up). Checked once per connection."""
    ensure_base(views)
    done = _ready.setdefault(views, set())
    if projector.name not in done:
        while True:
            with views.statement() as cur:
                position, version = tracking(cur, projector.name)
            if version == projector.version or upgrade(views, projector, position, version) is not None:
                break  # current, adopted, reset for a rebuild, or a newer version's
        done.add(projector.name)
    views.ensure(projector.schema)


def upgrade(views: SqlDb, projector: ReadModel, position: int, version: int | None) -> bool | None:
    """The model was found at (`position`, `version`) with a version other than the code's: adopt it (a model of
    the same version from before versions were recorded), reset it for a rebuild, or leave it (a newer one).
    False: a newer version owns it; True: the model is now of this version; None: look again (it moved)."""
    stored = _stored(views, projector, position, version)
    if stored > projector.version:
        if projector.name not in _left_alone:
            _left_alone.add(projector.name)
            log.warning("%s was built by a newer Code3 (version %s; this one has %s): left to the newer processes",
                        projector.name, stored, projector.version)
        return False
    with views.transaction() as cur:
        if views.postgres:  # dropping and creating tables: one process at a time, as `SqlDb.ensure` does
            cur.execute("SELECT pg_advisory_xact_lock(?)", (DDL_LOCK,))
        if lock_position(views, cur, projector.name) != (position, version):
            return None  # another process adopted or reset it a moment ago
        if stored == projector.version:
            track(cur, projector.name, position, projector.version)
            return True
        reset(cur, projector)
    if position or version is not None:  # a model that held something (a new one is no news)
        log.warning("%s: read model of version %s emptied, to be rebuilt from the log as version %s",
                    projector.name, stored, projector.version)
    return True


def _stored(views: SqlDb, projector: ReadModel, position: int, version: int | None) -> int:
    if version is not None:
        return version
    if position == 0:
        return 0  # nothing applied yet: the tables are (re)created in this version's shape
    legacy = getattr(projector, "legacy_version", None)
    if legacy is None:
        return 1
    try:
        with views.statement() as cur:
            return int(legacy(cur))
    except Exception:  # its tables are not there or not as expected: rebuild
        return 0


def reset(cur: Cursor, projector: ReadModel) -> None:
    """Drop and recreate the projector's tables, forget its dead letters, start again from the log's beginning
    (inside the caller's transaction, which holds the tracking row's lock)."""
    for table in projector.tables:
        cur.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in filter(str.strip, projector.schema.split(";")):
        cur.execute(statement)
    cur.execute("DELETE FROM projection_dead_letters WHERE name = ?", (projector.name,))
    track(cur, projector.name, 0, projector.version)


def rebuild_from_scratch(views: SqlDb, projector: ReadModel) -> None:
    """Reset the model now, whatever its version (a rebuild the operator or a test asks for)."""
    ensure_base(views)
    with views.transaction() as cur:
        if views.postgres:
            cur.execute("SELECT pg_advisory_xact_lock(?)", (DDL_LOCK,))
        lock_position(views, cur, projector.name)
        reset(cur, projector)
