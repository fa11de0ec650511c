"""`audit verify` for one bounty, as its page shows it: its events replayed against the repository, its board row
against one rebuilt in a scratch database from the same events, and the mirror against the chain
(`mcp_tools.lifecycle.audit.chain_disagreements`, the whole-log verify's own check). A chain that cannot be
read is said, not failed on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from domain.bounties.bounty import Bounty
from domain.bounties.issue import Issue


@dataclass
class Checked:
    problems: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_bounty(s: Any, bounty: Bounty, issue: Issue | None, events: list[Any]) -> Checked:
    """`audit verify` for one bounty: replay against the repository, its board row against one rebuilt from the same
    events, and the mirror against the chain (`audit.chain_disagreements`, the whole-log verify's own check)."""
    from adapters.sql import SqlDb
    from mcp_tools.lifecycle.audit import chain_disagreements
    from projections.bounties import board
    from projections.bounties.board import BountyBoard
    from projections.versions import ready

    result = Checked()
    for aggregate in (bounty, issue):
        if aggregate is None:
            continue
        state = None
        for event in s.store.repository.event_store.get(aggregate.id):
            state = event.mutate(state)
        if _comparable(state) != _comparable(aggregate):
            result.problems.append(f"{type(aggregate).__name__} {aggregate.id} differs between replay and repository")
    result.checks.append("replayed events = repository")
    fresh = SqlDb.sqlite(Path(":memory:"))
    try:
        projector = BountyBoard()
        ready(fresh, projector)  # the tables at this code's version (else the first read would empty them)
        with fresh.transaction() as cur:
            for event in events:
                projector.apply(event, cur)
        rebuilt = board.rows(fresh, "WHERE bounty_id = ?", (bounty.bounty_id,))
    finally:
        fresh.close()
    live = board.rows(s.views, "WHERE bounty_id = ?", (bounty.bounty_id,))
    if rebuilt != live:
        result.problems.append("the board row differs from one rebuilt from this bounty's events"
                               + ("" if live else " (the board has no row for it yet)"))
    result.checks.append("board row = rebuilt from the events")
    try:
        result.problems += chain_disagreements(s, bounty)
        result.checks.append("mirror = chain")
    except Exception as exc:  # the chain is away: say so, do not fail the page
        result.problems.append(f"the chain could not be read ({type(exc).__name__}): not compared")
    return result


def _comparable(aggregate: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(aggregate).items() if k != "_pending_events"}
