"""`code3 audit history|verify`: an aggregate's history by its bounty, task or feature id, and verify by
replay: aggregates, a freshly rebuilt board and the chain must all agree with what is live.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from adapters.sql import SqlDb
from domain.bounty import Bounty
from domain.errors import Code, Code3Error
from domain.issue import Issue
from domain.spec import FEATURE_ID, Spec
from mcp_tools.lifecycle.chain_record import lookup
from mcp_tools.services import Services
from projections import audit_log, board
from projections.board import BountyBoard
from projections.replay import replay_aggregates, state_of
from projections.runner import Runner


def resolve(s: Services, key: str) -> UUID:
    """A bounty id, a task id (owner/repo#N) or a feature id, to the aggregate it names."""
    if key.isdigit():
        return Bounty.create_id(key)
    if "#" in key:
        issue_hash = lookup(s, "task", key)
        if issue_hash is None:
            raise Code3Error(Code.NOT_FOUND, f"no published task {key}", "check the task id (owner/repo#N)")
        return Issue.create_id(issue_hash)
    if FEATURE_ID.match(key):
        return Spec.create_id(key)
    raise Code3Error(Code.VALIDATION, f"{key!r} is not a bounty id, task id or feature id",
                     "pass e.g. 3, owner/repo#12 or 001-login")


def history(s: Services, key: str) -> list[dict[str, Any]]:
    records = audit_log.history(s.store, resolve(s, key))
    if not records:
        raise Code3Error(Code.NOT_FOUND, f"nothing recorded for {key}", "check the id")
    return records


@dataclass
class Verdict:
    aggregates: int = 0
    board_rows: int = 0
    bounties_checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(s: Services) -> Verdict:
    """Replay the whole log: aggregates, a fresh board, and the chain must all agree with what is live."""
    verdict = Verdict()
    replayed = replay_aggregates(s.store)
    verdict.aggregates = len(replayed)
    for aggregate_id, state in replayed.items():
        live = s.store.repository.get(aggregate_id)
        if state_of(state) != state_of(live):
            verdict.problems.append(f"aggregate {aggregate_id} differs between replay and repository")
    Runner(s.store, s.views).catch_up(BountyBoard(), keep_lease=False)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = SqlDb.sqlite(Path(tmp) / "verify.sqlite")
        try:
            Runner(s.store, fresh).catch_up(BountyBoard())
            rebuilt, live_rows = board.rows(fresh), board.rows(s.views)
        finally:
            fresh.close()
    verdict.board_rows = len(live_rows)
    if rebuilt != live_rows:
        verdict.problems.append(
            f"bounty board differs from its rebuild ({len(live_rows)} live, {len(rebuilt)} rebuilt)")
    for state in replayed.values():
        if isinstance(state, Bounty):
            verdict.bounties_checked += 1
            chain = s.chain.get_bounty(state.bounty_id)
            if chain is None or chain.comparable() != state.comparable():
                verdict.problems.append(f"bounty {state.bounty_id} disagrees with the chain")
    return verdict
