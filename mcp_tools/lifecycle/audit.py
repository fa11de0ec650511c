"""`code3 audit history|verify`: an aggregate's history by its bounty, task or feature id, and verify by
replay: aggregates, a freshly rebuilt board and the chain must all agree with what is live.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from adapters.event_store import iter_log
from adapters.sql import SqlDb
from domain.bounties.amounts import display
from domain.bounties.bounty import Bounty
from domain.bounties.issue import Issue
from domain.bounties.metadata import IssueMetadata
from domain.bounties.spec import FEATURE_ID, Spec
from domain.errors import Code, Code3Error
from domain.knowledge.generated_spec import GeneratedSpec
from mcp_tools.lifecycle.chain_record import lookup
from mcp_tools.services import Services
from projections import audit_log
from projections.bounties import board
from projections.bounties.board import BountyBoard
from projections.replay import state_of
from projections.runner import dead_letters, follow


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


# progress(phase, done, total): how far verify is (total None when unknown); the front shows it on stderr
Progress = Callable[[str, int, int | None], None]
PAGE = 500  # log notifications, board rows: what verify holds at a time


@dataclass
class Verdict:
    aggregates: int = 0
    board_rows: int = 0
    bounties_checked: int = 0
    events: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _quiet(phase: str, done: int, total: int | None) -> None:
    return None


def verify(s: Services, progress: Progress = _quiet) -> Verdict:
    """Replay the whole log: aggregates, a fresh board, and the chain must all agree with what is live.

    By pages, so memory does not grow with the store: the log is folded a page of notifications at a time, and
    an aggregate is held only while it is in flight — from its first event to the version the repository gave
    when that first event was read — then compared (and a bounty with the chain) and let go. The board is rebuilt
    in a scratch database and compared with the live one a page of rows at a time. What stays to the end is one
    (repository, number) per published issue, for the forge's orphans."""
    verdict = Verdict()
    owned: set[tuple[str, int]] = set()
    repos: set[str] = set()
    flight: dict[UUID, tuple[Any, Any]] = {}  # aggregate id -> (replayed so far, the repository's)
    strays: list[tuple[UUID, int]] = []  # events of no aggregate in flight: written after it was compared?
    head = s.store.recorder.max_notification_id() or 0
    for position, event in iter_log(s.store, page=PAGE):
        verdict.events += 1
        if verdict.events % PAGE == 0:
            progress("replay", min(position, head), head)
        aggregate_id = event.originator_id
        if event.originator_version == 1:
            flight[aggregate_id] = (None, s.store.repository.get(aggregate_id, deepcopy_from_cache=False))  # read only
        if aggregate_id not in flight:
            strays.append((aggregate_id, event.originator_version))
            continue
        replayed, live = flight[aggregate_id]
        replayed = event.mutate(replayed)
        if replayed.version < live.version:
            flight[aggregate_id] = (replayed, live)
            continue
        del flight[aggregate_id]
        _compare(s, replayed, live, verdict, owned, repos)
    progress("replay", head, head)
    for replayed, live in flight.values():
        verdict.problems.append(f"aggregate {live.id}: the log replays to version {replayed.version}, the "
                                f"repository holds version {live.version} (events missing from the log)")
    verdict.problems += _strays(s, strays)
    verdict.problems += _board_problems(s, verdict, progress)
    verdict.problems += _orphan_issues(s, owned, repos, progress)
    verdict.problems += [f"projection {d['projection']} could not apply notification {d['position']} "
                         f"({d['event']}: {d['error']})" for d in dead_letters(s.views)]
    return verdict


def _compare(s: Services, replayed: Any, live: Any, verdict: Verdict, owned: set[tuple[str, int]],
             repos: set[str]) -> None:
    """One aggregate replayed from the log against the repository's; a bounty against the chain too."""
    verdict.aggregates += 1
    if state_of(replayed) != state_of(live):
        verdict.problems.append(f"aggregate {replayed.id} differs between replay and repository")
    if isinstance(replayed, Bounty):
        verdict.bounties_checked += 1
        verdict.problems += chain_disagreements(s, replayed)
    elif isinstance(replayed, Issue):
        repos.add(replayed.repo)
        if replayed.number is not None:
            owned.add((replayed.repo, replayed.number))
        if replayed.unfunded:
            verdict.problems.append(unfunded_problem(replayed))


def unfunded_problem(issue: Issue) -> str:
    """An issue that announces an amount nothing escrows: the chain refused its bounty after it was opened."""
    return (f"issue {issue.url or issue.issue_hash} of feature {issue.feature_id} is unfunded: it announces "
            f"{display(issue.amount, issue.asset)} but the chain refused its bounty ({issue.unfunded_reason}); "
            "publish the feature again with an amount the sponsor holds (the same issue is reused), or close it")


def _strays(s: Services, strays: list[tuple[UUID, int]]) -> list[str]:
    """An event of an aggregate not in flight was written after that aggregate was compared (fine: a process
    worked meanwhile), unless the aggregate has no first event at all."""
    problems = []
    for aggregate_id in dict.fromkeys(a for a, _ in strays):
        if not list(s.store.repository.event_store.get(aggregate_id, lte=1)):
            problems.append(f"aggregate {aggregate_id} has events in the log but no first event")
    return problems


def _board_problems(s: Services, verdict: Verdict, progress: Progress) -> list[str]:
    """Rebuild the board from the log in a scratch database, then compare it with the live one by pages."""
    follow(s.store, s.views, BountyBoard())
    head = s.store.recorder.max_notification_id() or 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = SqlDb.sqlite(Path(tmp) / "verify.sqlite")
        try:
            projector, done = BountyBoard(), 0
            while passed := follow(s.store, fresh, projector, PAGE, pages=1):
                done += passed
                progress("board rebuild", min(done, head), head)
            return _compare_boards(s.views, fresh, verdict, progress)
        finally:
            fresh.close()


def _compare_boards(live: SqlDb, rebuilt: SqlDb, verdict: Verdict, progress: Progress) -> list[str]:
    """Both boards in bounty-id order, a page of each at a time: the first difference is named."""
    total = board.count(live)
    counts, first, after = [0, 0], None, None
    while True:
        pages = [board.query(db, limit=PAGE, after=after) for db in (live, rebuilt)]
        counts = [counts[k] + len(pages[k]) for k in (0, 1)]
        if first is None and pages[0] != pages[1]:
            first = next((a["bounty_id"] if a else b["bounty_id"] for a, b in _pairs(*pages) if a != b), None)
        progress("board compare", counts[0], total)
        if not pages[0] and not pages[1]:
            break
        after = max(p[-1]["bounty_id"] for p in pages if p)
    verdict.board_rows = counts[0]
    if first is None and counts[0] == counts[1]:
        return []
    return [f"bounty board differs from its rebuild ({counts[0]} live, {counts[1]} rebuilt; first at bounty {first})"]


def _pairs(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
    return [(a[k] if k < len(a) else None, b[k] if k < len(b) else None) for k in range(max(len(a), len(b)))]


def chain_disagreements(s: Services, bounty: Bounty) -> list[str]:
    """The chain against the mirror for one bounty: its state must be the chain's, and every live submission on
    chain must be live in the log too (or a merge webhook for its PR would find no bounty: a stranded submission,
    until a sync records it). One line per problem, none when they agree. Reads the chain (raises when it cannot).
    The whole-log verify asks it of every bounty; the web page's bounty check (`mcp_tools.web.bounty_check`) of one."""
    chain = s.chain.get_bounty(bounty.bounty_id)
    if chain is None:
        return [f"bounty {bounty.bounty_id} is in the log but not on chain"]
    problems = [] if chain.comparable() == bounty.comparable() else [
        f"bounty {bounty.bounty_id} disagrees with the chain"]
    return problems + [f"bounty {bounty.bounty_id} is stranded: its submitted PR {sub['pr_url']} is not in the log "
                       "(run the worker or any tool on this bounty: chain sync records it)"
                       for worker in chain.submissions.keys() - bounty.submissions.keys()
                       for sub in [chain.submissions[worker]]]


def _orphan_issues(s: Services, owned: set[tuple[str, int]], repos: set[str], progress: Progress) -> list[str]:
    """Bounty issues on the forge that no publish of the log owns (a second issue of a raced publish)."""
    problems = []
    seen = 0
    for repo in sorted(repos):
        for found in s.forge.list_issues(repo):
            seen += 1
            meta = IssueMetadata.from_body(found.body)
            if meta is not None and (repo, found.number) not in owned:
                problems.append(f"issue {repo}#{found.number} carries code3 metadata but no publish owns it "
                                f"(issue_hash {meta.issue_hash[:12]}…): an orphan")
            if seen % PAGE == 0:
                progress("forge issues", seen, None)
    progress("forge issues", seen, seen)
    return problems
