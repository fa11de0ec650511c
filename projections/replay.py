"""Rebuild every aggregate by folding the whole notification log, in log order.

The basis of audit: what the log says must equal what the repository (and the chain) say.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.application import Application

from adapters.event_store import iter_log


def replay_aggregates(app: Application) -> dict[UUID, Any]:
    states: dict[UUID, Any] = {}
    for _, event in iter_log(app):
        states[event.originator_id] = event.mutate(states.get(event.originator_id))
    return states


def state_of(aggregate: Any) -> dict[str, Any]:
    """The comparable state of an aggregate: its attributes, without the library's bookkeeping."""
    return {k: v for k, v in vars(aggregate).items() if k not in ("_pending_events",)}
