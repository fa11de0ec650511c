"""The event store: an eventsourcing Application on SQLite (default) or PostgreSQL, chosen by settings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import unquote, urlparse
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError

A = TypeVar("A", bound=Aggregate)


class EventStore(Application):
    """Every aggregate of Code3 in one log, so one notification sequence orders every fact."""

    name = "Code3"

    def get(self, cls: type[A], aggregate_id: UUID) -> A | None:
        try:
            aggregate = self.repository.get(aggregate_id)
        except AggregateNotFoundError:
            return None
        if not isinstance(aggregate, cls):
            raise TypeError(f"{aggregate_id} is a {type(aggregate).__name__}, not a {cls.__name__}")
        return aggregate

    def update(self, cls: type[A], aggregate_id: UUID, change: Callable[[A | None], A | None],
               attempts: int = 8) -> A | None:
        """Load, change, save; when another writer saved first (optimistic concurrency), reload and redo.

        `change` gets the current aggregate (or None) and returns the aggregate to save (or None to
        save nothing); it must be safe to run again on the newer state.
        """
        for attempt in range(attempts):
            current = self.get(cls, aggregate_id)
            result = change(current)
            if result is None:
                return current
            try:
                self.save(result)
                return result
            except IntegrityError:
                if attempt == attempts - 1:
                    raise
        return None


def store_env(project: Path, database_url: str | None) -> dict[str, str]:
    """eventsourcing's persistence settings: the project's SQLite file, or PostgreSQL from a URL."""
    if not database_url:
        (project / ".code3").mkdir(parents=True, exist_ok=True)
        return {
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": str(project / ".code3" / "events.sqlite"),
            "SQLITE_LOCK_TIMEOUT": "30",
        }
    url = urlparse(database_url)
    if url.scheme not in ("postgres", "postgresql"):
        raise ValueError(f"CODE3_DATABASE_URL must be a postgresql:// URL, not {url.scheme}://")
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": url.path.lstrip("/") or "postgres",
        "POSTGRES_HOST": url.hostname or "127.0.0.1",
        "POSTGRES_PORT": str(url.port or 5432),
        "POSTGRES_USER": unquote(url.username or "postgres"),
        "POSTGRES_PASSWORD": unquote(url.password or ""),
    }
    for part in url.query.split("&"):
        if part.startswith("schema="):
            env["POSTGRES_SCHEMA"] = part.split("=", 1)[1]
    return env


def open_store(project: Path, database_url: str | None = None) -> EventStore:
    return EventStore(env=store_env(project, database_url))
