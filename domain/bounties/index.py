"""Lookup aggregates: a natural key (a task id, a PR url) pointing at another aggregate's key.

They are events like everything else, so a lookup is rebuilt by replay and two writers racing to
register the same key collide on the deterministic id instead of both succeeding. A key moves to another
target only by `Repointed`, from the one target the caller names (an unfunded publish giving its feature and task
to the publish that corrects it), so two movers racing cannot both win.
"""

from __future__ import annotations

from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.canonical import natural_id
from domain.errors import Code, Code3Error


class Index(Aggregate):

    class Registered(Aggregate.Created):
        kind: str
        key: str
        target: str

    class Repointed(Aggregate.Event):
        target: str
        previous: str

    @staticmethod
    def create_id(kind: str, key: str) -> UUID:
        return natural_id(f"index:{kind}", key)

    @event(Registered)
    def __init__(self, kind: str, key: str, target: str) -> None:
        self.kind, self.key, self.target = kind, key, target

    def repoint_once(self, target: str, previous: str) -> bool:
        """Point the key at `target` if it points at `previous` (False: it points at `target` already); any other
        target is the caller's to refuse."""
        if self.target == target:
            return False
        if self.target != previous:
            raise Code3Error(Code.IDEMPOTENT_REJECTED, f"{self.kind} {self.key} already belongs to {self.target}",
                             "reuse the existing one")
        self.repoint(target=target, previous=previous)
        return True

    @event(Repointed)
    def repoint(self, target: str, previous: str) -> None:
        self.target = target
