"""Lookup aggregates: a natural key (a task id, a PR url) pointing at another aggregate's key.

They are events like everything else, so a lookup is rebuilt by replay and two writers racing to
register the same key collide on the deterministic id instead of both succeeding.
"""

from __future__ import annotations

from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.canonical import natural_id


class Index(Aggregate):

    class Registered(Aggregate.Created):
        kind: str
        key: str
        target: str
    @staticmethod
    def create_id(kind: str, key: str) -> UUID:
        return natural_id(f"index:{kind}", key)

    @event(Registered)
    def __init__(self, kind: str, key: str, target: str) -> None:
        self.kind, self.key, self.target = kind, key, target
