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
from domain.generated_spec import GeneratedSpec
from domain.issue import Issue
from domain.metadata import IssueMetadata
from domain.spec import FEATURE_ID, Spec
from mcp_tools.lifecycle.chain_record import lookup
from mcp_tools.services import Services
from projections import audit_log, board
from projections.board import BountyBoard
from projections.replay import replay_aggregates, state_of
from projections.runner import Runner, dead_letters


def resolve(s: Services, key: str) -> UUID:
    """A bounty id, a task id (owner/repo#N), a feature id or a reverse-spec spec path, to the aggregate it names."""
    if key.isdigit():
        return Bounty.create_id(key)
    if "#" in key:
        issue_hash = lookup(s, "task", key)
        if issue_hash is None:
            raise Code3Error(Code.NOT_FOUND, f"no published task {key}", "check the task id (owner/repo#N)")
        return Issue.create_id(issue_hash)
    if FEATURE_ID.match(key):
        return Spec.create_id(key)
    if key.endswith(".spec.md"):
        return GeneratedSpec.create_id(key.removeprefix("./"))
    raise Code3Error(Code.VALIDATION, f"{key!r} is not a bounty id, task id, feature id or spec path",
                     "pass e.g. 3, owner/repo#12, 001-login or specs/src-auth.spec.md")


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
    issues = [state for state in replayed.values() if isinstance(state, Issue)]
    for state in replayed.values():
        if isinstance(state, Bounty):
            verdict.bounties_checked += 1
            verdict.problems += _disagreements(s, state)
    verdict.problems += _orphan_issues(s, issues)
    verdict.problems += [f"projection {d['projection']} could not apply notification {d['position']} "
                         f"({d['event']}: {d['error']})" for d in dead_letters(s.views)]
    return verdict


def _disagreements(s: Services, bounty: Bounty) -> list[str]:
    """The chain against the mirror, and every PR the chain says was submitted must lead back to its bounty
    (or a merge webhook for it would be ignored: a stranded bounty)."""
    chain = s.chain.get_bounty(bounty.bounty_id)
    if chain is None:
        return [f"bounty {bounty.bounty_id} is in the log but not on chain"]
    problems = [] if chain.comparable() == bounty.comparable() else [
        f"bounty {bounty.bounty_id} disagrees with the chain"]
    return problems + [f"bounty {bounty.bounty_id} is stranded: its submitted PR {sub['pr_url']} leads to no "
                       "bounty (run the worker or any tool on this bounty: chain sync records the lookup)"
                       for sub in chain.submissions.values() if lookup(s, "pr", sub["pr_url"]) is None]


def _orphan_issues(s: Services, issues: list[Issue]) -> list[str]:
    """Bounty issues on the forge that no publish of the log owns (a second issue of a raced publish)."""
    owned = {(i.repo, i.number) for i in issues if i.number is not None}
    problems = []
    for repo in sorted({i.repo for i in issues}):
        for found in s.forge.list_issues(repo):
            meta = IssueMetadata.from_body(found.body)
            if meta is not None and (repo, found.number) not in owned:
                problems.append(f"issue {repo}#{found.number} carries code3 metadata but no publish owns it "
                                f"(issue_hash {meta.issue_hash[:12]}…): an orphan")
    return problems
