"""Rebuild aggregates from their events: one by folding its own events (what `audit verify` does for each
aggregate in turn, so it never holds more than one), or all by folding the whole notification log in log order.

The basis of audit: what the log says must equal what the repository (and the chain) say. The repository may
answer from its cache or a snapshot; a replay never does.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.domain import BaseAggregate, CanMutateAggregate

from adapters.event_store import iter_log


def replay_aggregates(app: Application) -> dict[UUID, Any]:
    states: dict[UUID, Any] = {}
    for _, event in iter_log(app):
        states[event.originator_id] = event.mutate(states.get(event.originator_id))
    return states


def replay_one(app: Application, aggregate_id: UUID) -> tuple[Any, int]:
    """The aggregate folded from every one of its stored events (no cache, no snapshot), and how many there were."""
    state: BaseAggregate[Any] | None = None
    count = 0
    for event in app.repository.event_store.get(aggregate_id):
        if not isinstance(event, CanMutateAggregate):  # an aggregate's stream holds its events (snapshots are apart)
            raise TypeError(f"a {type(event).__qualname__} in the stream of {aggregate_id} is no aggregate event")
        state = event.mutate(state)
        count += 1
    return state, count


def state_of(aggregate: Any) -> dict[str, Any]:
    """The comparable state of an aggregate: its attributes, without the library's bookkeeping."""
    return {k: v for k, v in vars(aggregate).items() if k not in ("_pending_events",)}
