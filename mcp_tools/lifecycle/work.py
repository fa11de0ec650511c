"""The worker's side: accept a task, prepare a fork, open a PR, comment, submit the PR on chain."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from adapters.files import locked
from adapters.git import commit_all, configured_author, current_branch, git
from adapters.local_forge import check_repo, parse_url
from adapters.private_files import private_dir
from domain.bounties import contract
from domain.bounties.amounts import display
from domain.bounties.contract import STATUS_LABELS, Status
from domain.bounties.metadata import strip_block
from domain.bounties.spec import branch_name
from domain.errors import Code, Code3Error, present
from domain.values import parse_amount, parse_branch
from mcp_tools.declare import tool
from mcp_tools.lifecycle.answers import (
    AcceptAnswer,
    AcceptBestAnswer,
    CommentAnswer,
    ForkAnswer,
    LinkState,
    OpenPrAnswer,
    SubmitAnswer,
    WithdrawAnswer,
)
from mcp_tools.lifecycle.bounty_view import TITLE_CAP, cap, issue_for_bounty, issue_for_task, next_fork
from mcp_tools.lifecycle.chain_record import chain_read, raise_for, record, refuse_doomed, require_bounty
from mcp_tools.lifecycle.specs import check_feature_id
from mcp_tools.services import Services
from projections.bounties import board
from projections.bounties.board import BountyBoard
from projections.runner import follow

SHA = re.compile(r"^[0-9a-f]{7,64}$")
BEST_PAGE = 50  # accept_best_task's candidates read from the board at a time
BEST_ATTEMPTS = 16  # accept_best_task's acceptances tried at most: each lost race moves on to the next task


@tool("server_mcp.accept_task", profiles=("server",))
def accept_task(s: Services, task_id: Annotated[str, Field(description="owner/repo#123")]) -> AcceptAnswer:
    """Accept a task: accept_bounty on chain and mark the issue in-progress.

    The answer says what the next step needs (repository, issue, feature id, amount, deadline) and names that step."""
    issue = issue_for_task(s, task_id)
    bounty_id = present(issue.bounty_id, "the task's bounty id")
    bounty = require_bounty(s, bounty_id)
    me, now = s.signer.address, _chain_now(s)
    _refuse_unpayable_repo(s, bounty)
    if _held_by_other(bounty, me, now):
        raise Code3Error(Code.INVALID_STATE, f"task {task_id} is held by another worker until {bounty.hold_until}",
                         "choose another task (server_mcp.accept_best_task), or accept this one again after "
                         f"hold_until={bounty.hold_until}")
    if me not in bounty.workers or (bounty.exclusive and not (bounty.hold_until or 0) > now):
        entered = s.chain.is_entrant(bounty_id, me)
        refuse_doomed(s, bounty_id, lambda state, now: contract.accept(state, me, now, entered), f"bounty {bounty_id}")
        raise_for(s.chain.accept_bounty(s.signer, bounty_id), f"bounty {bounty_id} is "
                  f"{Status(bounty.status).name.lower()}")
    bounty, labels = record(s, bounty_id, bounty, issue=issue)
    number = present(issue.number, "the issue's number")
    title, _ = cap(s.forge.get_issue(issue.repo, number).title, TITLE_CAP)
    # the issue's state label, as seed 001 answers (["in-progress"]); its other labels stay on the forge
    return {"success": True, "bounty_id": bounty_id, "labels": [x for x in labels if x in STATUS_LABELS],
            "repo": issue.repo, "issue_url": present(issue.url, "the issue's URL"), "issue_number": number,
            "feature_id": issue.feature_id, "title": title, "amount": str(bounty.amount), "asset": bounty.asset,
            "amount_display": display(bounty.amount, bounty.asset), "deadline": bounty.deadline,
            "next": next_fork(bounty_id)}


@tool("server_mcp.accept_best_task", profiles=("server",), idempotent=False)
def accept_best_task(
    s: Services,
    min_amount: Annotated[str, Field(description="smallest amount to consider, in the asset's smallest unit: "
                                                 "\"1000000\" is 1 USDT")] = "0",
    strategy: Annotated[Literal["max_amount", "max_amount_per_effort"], Field(description="how to rank")]
    = "max_amount",
) -> AcceptBestAnswer:
    """Choose the best open task (largest amount by default) and accept it.

    Racing callers rank the same tasks first: one that loses a task to another worker (E_INVALID_STATE) tries
    the next one, up to BEST_ATTEMPTS, and answers E_INVALID_STATE only when every one it tried was lost."""
    floor = parse_amount(min_amount, allow_zero=True, what="min_amount")  # digits within u64, as every amount
    if strategy not in ("max_amount", "max_amount_per_effort"):
        raise Code3Error(Code.VALIDATION, f"unknown strategy {strategy!r}",
                         "use max_amount or max_amount_per_effort")
    follow(s.store, s.views, BountyBoard())  # read our own writes, whoever else is catching up
    # ranked and filtered by the board's database a page at a time: the work grows with the bounties looked at,
    # not with the store
    now: int | None = None
    offset, matched = 0, False
    lost: Code3Error | None = None  # the last race lost: answered when no task is left to try
    attempts = 0
    while attempts < BEST_ATTEMPTS and (page := board.best_open(
            s.views, floor, s.signer.address, strategy == "max_amount_per_effort", BEST_PAGE, offset)):
        offset += len(page)
        for row in page:
            if s.signer.address in row["workers"]:
                continue
            matched = True
            now = _chain_now(s) if now is None else now
            if _held_by_other(require_bounty(s, row["bounty_id"]), s.signer.address, now):
                continue  # an exclusive task another worker holds
            attempts += 1
            try:
                return {**accept_task(s, row["task_id"]), "selected_task_id": row["task_id"]}
            except Code3Error as exc:
                if exc.code is not Code.INVALID_STATE or attempts >= BEST_ATTEMPTS:
                    raise
                lost = exc  # another worker took it between our read and our acceptance: the next one
    if lost is not None:
        raise lost
    if not matched:
        return {"success": True, "selected_task_id": None, "bounty_id": None, "labels": [],
                "message": "no open bounty matches", "hint": "lower min_amount or try again later"}
    return {"success": True, "selected_task_id": None, "bounty_id": None, "labels": [],
            "message": "every matching bounty is held by another worker", "hint": "try again later"}


def _refuse_unpayable_repo(s: Services, bounty: Any) -> None:
    """A bounty whose recorded repository id is not the forge's repository of its name could never pay a PR there:
    say so before anyone works on it."""
    if bounty.repo_id and s.forge.get_repo(bounty.repo).id != bounty.repo_id:
        raise Code3Error(Code.PRECONDITION, f"bounty {bounty.bounty_id} names repository id {bounty.repo_id}, but "
                         f"{bounty.repo} on this forge has another id: no PR there could be paid",
                         "choose another task; the sponsor publishes it again on the right repository")


def _chain_now(s: Services) -> int:
    with chain_read():
        return s.chain.now()


def _held_by_other(bounty: Any, worker: str, now: int) -> bool:
    """Exclusive: another worker's hold is running."""
    return bool(bounty.exclusive and bounty.holder not in (None, worker) and (bounty.hold_until or 0) > now)


@tool("server_mcp.withdraw_task", profiles=("server",))
def withdraw_task(s: Services, task_id: Annotated[str, Field(description="owner/repo#123")]) -> WithdrawAnswer:
    """Give an accepted task back before submitting a PR: releases an exclusive hold, or leaves a contest."""
    issue = issue_for_task(s, task_id)
    bounty_id = present(issue.bounty_id, "the task's bounty id")
    bounty = require_bounty(s, bounty_id)
    if s.signer.address in bounty.workers:
        entered = s.chain.is_entrant(bounty_id, s.signer.address)
        refuse_doomed(s, bounty_id, lambda state, _now: contract.withdraw(state, s.signer.address, entered),
                      f"bounty {bounty_id}")
        raise_for(s.chain.withdraw_task(s.signer, bounty_id), f"bounty {bounty_id}")
    _, labels = record(s, bounty_id, bounty, issue=issue)
    return {"success": True, "bounty_id": bounty_id, "labels": [x for x in labels if x in STATUS_LABELS]}


@dataclass(frozen=True)
class Target:
    """What fork_and_prepare works on: the upstream repository, the feature (its branch), the issue (its spec)."""

    repo: str
    feature_id: str
    number: Any


@tool("server_mcp.fork_and_prepare", profiles=("server",))
def fork_and_prepare(
    s: Services,
    repo: Annotated[str | None, Field(description="owner/repo (with issue_json; taken from the bounty otherwise)")]
    = None,
    issue_json: Annotated[dict[str, Any] | None, Field(description="the issue's code3/v1 metadata (at least "
                                                                   "feature_id and issue_number)")] = None,
    bounty_id: Annotated[str | None, Field(description="the bounty accept_task answered (instead of issue_json)")]
    = None,
    task_id: Annotated[str | None, Field(description="owner/repo#123 (instead of issue_json)")] = None,
) -> ForkAnswer:
    """Fork, clone, create branch feat/NNN-slug from upstream's default branch, generate missing spec artifacts,
    push the branch. Pass one of bounty_id, task_id, or repo with issue_json."""
    target = _target(s, repo, issue_json, bounty_id, task_id)
    fork = s.forge.fork(target.repo)
    workdir = s.workspace / fork.replace("/", "__")
    with working_copy(workdir):
        return _prepare(s, target, fork, workdir)


def _target(s: Services, repo: str | None, issue_json: dict[str, Any] | None, bounty_id: str | None,
            task_id: str | None) -> Target:
    """The one way the caller named the work: the bounty's recorded issue (bounty_id, task_id), or the seed's
    issue_json with repo."""
    given = [name for name, value in (("issue_json", issue_json), ("bounty_id", bounty_id), ("task_id", task_id))
             if value is not None]
    if len(given) != 1:
        raise Code3Error(Code.VALIDATION, f"pass exactly one of issue_json, bounty_id and task_id (got "
                         f"{', '.join(given) or 'none'})", "pass bounty_id as server_mcp.accept_task answered it, "
                         "or task_id as owner/repo#123")
    if issue_json is not None:
        if repo is None:
            raise Code3Error(Code.VALIDATION, "issue_json needs repo", "pass repo (owner/repo), or pass bounty_id "
                             "instead of both")
        if not issue_json.get("feature_id"):
            raise Code3Error(Code.VALIDATION, "issue_json has no feature_id",
                             "pass bounty_id (server_mcp.accept_task answers it) or task_id instead, or the issue's "
                             "code3/v1 metadata (server_mcp.show_bounty shows it)")
        return Target(check_repo(repo), check_feature_id(str(issue_json["feature_id"])),
                      issue_json.get("issue_number"))
    if task_id is not None:
        bounty_id = present(issue_for_task(s, task_id).bounty_id, "the task's bounty id")
    issue, _ = issue_for_bounty(s, present(bounty_id, "bounty_id"))
    if repo is not None and check_repo(repo).lower() != issue.repo.lower():
        raise Code3Error(Code.VALIDATION, f"bounty {issue.bounty_id} is for {issue.repo}, not {repo}",
                         "omit repo: the bounty names its repository")
    return Target(issue.repo, issue.feature_id, issue.number)


@contextmanager
def working_copy(workdir: Path) -> Iterator[Path]:
    """One git at a time in a fork's working copy: concurrent calls (of one serve, or serves sharing the
    workspace) on the same fork would clone into it, or checkout, commit and push in it, at once. A lock beside
    it in the workspace (state, 0700), across processes too."""
    lock = private_dir(workdir.parent / f".{workdir.name}.lock")  # 0700 like the rest of the state
    with locked(lock):
        yield workdir


def _prepare(s: Services, target: Target, fork: str, workdir: Path) -> ForkAnswer:
    from mcp_tools.lifecycle import specs  # the generators run against the working copy

    repo, feature_id = target.repo, target.feature_id
    base = parse_branch(s.forge.get_repo(repo).default_branch)  # the forge's, never assumed to be main
    if not (workdir / ".git").exists():
        s.forge.clone(fork, workdir)
    _set_up_working_copy(s, workdir)
    start = s.forge.fetch_branch(workdir, repo, base)  # upstream now, not whatever the working copy holds
    branch = branch_name(feature_id)
    if current_branch(workdir) != branch:
        dirty = git("status", "--porcelain", cwd=workdir)
        if dirty:
            raise Code3Error(Code.PRECONDITION, f"the working copy {workdir} has uncommitted changes on "
                             f"{current_branch(workdir)}", "open their PR first (server_mcp.open_pr commits and "
                             "pushes them), or discard them, then call again")
        remote_branches = git("branch", "-r", "--list", f"origin/{branch}", cwd=workdir)
        # an existing branch of the fork goes on (a repeat keeps the work); a new one starts at upstream's default
        git("checkout", "-q", "-B", branch, f"origin/{branch}" if remote_branches else start, cwd=workdir)

    local = replace(s, project=workdir)
    spec_dir = local.specs_dir / feature_id
    generated = []
    if not (spec_dir / "spec.md").exists():
        spec_text = _spec_from_issue(s, repo, target.number, feature_id)
        spec_dir.mkdir(parents=True, exist_ok=True)
        (spec_dir / "spec.md").write_text(spec_text, encoding="utf-8")
        generated.append("spec.md")
    if not (spec_dir / "plan.md").exists():
        specs.plan(local, feature_id)
        generated.append("plan")
    if not (spec_dir / "tasks.md").exists():
        specs.tasks(local, feature_id)
        generated.append("tasks.md")
    commit_all(workdir, f"chore(specs): prepare {feature_id}", author_of(s, workdir))
    sha = s.forge.push(workdir, branch)
    return {"success": True, "fork_repo_url": s.forge.repo_url(fork), "branch": branch, "prepared": True,
            "workdir": str(workdir), "head_sha": sha, "generated": generated}


# What running or building the code leaves behind: open_pr commits everything pending (`git add -A`), so these stay
# out of the worker's PRs through the working copy's own .git/info/exclude (no tracked .gitignore is changed).
BUILD_DROPPINGS = ("__pycache__/", "*.py[cod]", "node_modules/", ".DS_Store")


def _set_up_working_copy(s: Services, workdir: Path) -> None:
    """Make the working copy ready for a worker committing by hand too: without a git identity of the user's own,
    the identity `author_of` gives is set in its local config (else `git commit` stops at "Author identity
    unknown"); build droppings are excluded. Both idempotent, so a repeat of fork_and_prepare changes nothing."""
    if configured_author(workdir) is None:
        name, email = author_of(s, workdir)
        git("config", "user.name", name, cwd=workdir)
        git("config", "user.email", email, cwd=workdir)
    exclude = workdir / git("rev-parse", "--git-path", "info/exclude", cwd=workdir)
    had = exclude.read_text(encoding="utf-8") if exclude.is_file() else ""
    missing = [p for p in BUILD_DROPPINGS if p not in had.splitlines()]
    if missing:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        lead = "" if not had or had.endswith("\n") else "\n"
        exclude.write_text(f"{had}{lead}# build droppings, kept out of PRs (code3 fork_and_prepare)\n"
                           + "".join(f"{p}\n" for p in missing), encoding="utf-8")


def _spec_from_issue(s: Services, repo: str, number: Any, feature_id: str) -> str:
    if not isinstance(number, int):
        raise Code3Error(Code.PRECONDITION, f"specs/{feature_id}/spec.md is not in the repository",
                         "pass issue_json.issue_number so the spec can be taken from the issue")
    body = s.forge.get_issue(repo, number).body
    return strip_block(body)


def author_of(s: Services, workdir: Path) -> tuple[str, str]:
    """Whose commits the worker's are: the user's own git identity when configured, else the worker identity's
    name with a no-reply address on its forge login (never Code3's placeholder)."""
    return configured_author(workdir) or (s.signer.name, f"{s.forge.actor}@users.noreply.code3.invalid")


@tool("server_mcp.open_pr", profiles=("server",))
def open_pr(s: Services, repo: Annotated[str, Field(description="owner/repo (the upstream)")],
            branch: Annotated[str, Field(description="branch of your fork, e.g. feat/003-web-ai-agent")],
            title: str, body: str) -> OpenPrAnswer:
    """Open a pull request from your fork's branch into upstream's default branch (pending workspace changes are
    committed and pushed)."""
    check_repo(repo)
    parse_branch(branch)  # git's ref rules: a branch name is never a path
    if not title.strip():
        raise Code3Error(Code.VALIDATION, "title is empty", "give the PR a title")
    fork = s.forge.fork(repo)  # an existing fork is returned as it is (its name may differ from the repo's)
    workdir = s.workspace / fork.replace("/", "__")
    with working_copy(workdir):
        if (workdir / ".git").exists() and current_branch(workdir) == branch:
            commit_all(workdir, title, author_of(s, workdir))
            s.forge.push(workdir, branch)
    base = s.forge.get_repo(repo).default_branch  # a bounty pays only for a PR into the default branch
    pr = s.forge.open_pr(repo, f"{s.forge.actor}:{branch}", base, title, body)
    return {"success": True, "pr_url": pr.url, "head_sha": pr.head_sha}


@tool("server_mcp.comment_issue", profiles=("server",), idempotent=False)
def comment_issue(s: Services, issue_url: str, body: str) -> CommentAnswer:
    """Post a comment on an issue (a human-readable status mirror)."""
    repo, _kind, number = parse_url(issue_url)
    if not body.strip():
        raise Code3Error(Code.VALIDATION, "body is empty", "write the comment's text in body")
    comment_id = s.forge.create_comment(repo, number, body)
    return {"success": True, "comment_id": comment_id}


@tool("server_mcp.submit_pr", profiles=("server",))
def submit_pr(s: Services, bounty_id: str, pr_url: str,
              commit_sha: Annotated[str | None, Field(description="the PR head; read from the PR when omitted")]
              = None) -> SubmitAnswer:
    """Record submit_pr(bounty_id, pr_url, commit_sha) on chain (idempotent on pr_url).

    A merge pays the address linked to the PR's author: unless your forge account is linked already, a link
    statement signed by your key is posted on the PR for the bounty's resolver to record (see `link` in the answer)."""
    bounty = require_bounty(s, bounty_id)
    if commit_sha is not None and not SHA.fullmatch(commit_sha):
        raise Code3Error(Code.VALIDATION, f"commit_sha {commit_sha!r} is not a hex commit id",
                         "pass the PR head's commit id, or omit it")
    mine = bounty.live_submission_of(s.signer.address)
    if mine is not None:
        if mine["pr_url"] == pr_url:
            record(s, bounty_id, bounty)  # a retry after a crash: the label catches up
            return {"success": True, "bounty_id": bounty_id, "tx_hash": mine["tx_hash"],
                    "link": _link_state(s, bounty, pr_url)}
        raise Code3Error(Code.IDEMPOTENT_REJECTED,
                         f"you already submitted {mine['pr_url']} for bounty {bounty_id}",
                         "a worker submits one PR per bounty; push further commits to that PR")
    pr = _payable_pr(s, bounty, pr_url)
    elsewhere = [b for b in _bounties_with(s, pr_url) if b != bounty_id]
    if elsewhere:
        raise Code3Error(Code.IDEMPOTENT_REJECTED, f"{pr_url} is already submitted for bounty {elsewhere[0]}",
                         "a merged pull request settles one bounty: open another one for this bounty")
    sha = commit_sha or pr.head_sha
    entered = s.chain.is_entrant(bounty_id, s.signer.address)
    refuse_doomed(s, bounty_id, lambda state, now: contract.submit_pr(state, s.signer.address, pr_url, sha, now,
                                                                      entered), f"bounty {bounty_id}")
    raise_for(s.chain.submit_pr(s.signer, bounty_id, pr_url, sha))
    bounty, _ = record(s, bounty_id, bounty)
    # the transaction that recorded the submission: the same for racing submitters (a repeat is a no-op on chain)
    tx_hash = present(bounty.live_submission_of(s.signer.address), "the recorded submission")["tx_hash"]
    return {"success": True, "bounty_id": bounty_id, "tx_hash": tx_hash, "link": _link_state(s, bounty, pr_url)}


def _payable_pr(s: Services, bounty: Any, pr_url: str) -> Any:
    """The PR, if a merge of it could pay this worker: the bounty's repository by the forge's id, its default branch,
    opened by this worker's forge account, named by the forge's own URL. The chain accepts any URL; the resolver
    applies these rules again before paying, so this only spares the worker a submission that could never pay."""
    pr = s.forge.get_pr(pr_url)
    if pr is None:
        raise Code3Error(Code.NOT_FOUND, f"no pull request at {pr_url}", "open it first (server_mcp.open_pr)")
    expected = bounty.repo_id or s.forge.get_repo(bounty.repo).id
    if pr.repo_id != expected:
        raise Code3Error(Code.VALIDATION, f"{pr_url} is in {pr.repo}, the bounty is for {bounty.repo}",
                         "submit a PR against the bounty's repository")
    if pr.base != pr.default_branch:
        raise Code3Error(Code.VALIDATION, f"{pr_url} targets {pr.base}, not {pr.repo}'s default branch "
                         f"{pr.default_branch}", f"retarget the PR to {pr.default_branch}: only a merge there pays")
    if pr.author_id != s.forge.actor_id:
        raise Code3Error(Code.UNAUTHORIZED, f"{pr_url} was opened by {pr.author}, not by you ({s.forge.actor})",
                         "submit your own PR: a bounty pays the PR's author")
    if pr.url != pr_url:  # the PR is named by this forge's own URL of it (no other host, no other spelling)
        raise Code3Error(Code.VALIDATION, f"{pr_url} is not this forge's address of that pull request",
                         f"pass {pr.url}")
    return pr


def _bounties_with(s: Services, pr_url: str) -> list[str]:
    follow(s.store, s.views, BountyBoard())
    return board.bounties_with_pr(s.views, pr_url)


def _link_state(s: Services, bounty: Any, pr_url: str) -> LinkState:
    """Whether a merge can reach this worker: the link, or a statement posted on the PR for the resolver."""
    from mcp_tools.lifecycle.identity import ensure_published
    from mcp_tools.lifecycle.resolver import resolver_of

    pr = present(s.forge.get_pr(pr_url), "the submitted PR")
    return ensure_published(s, resolver_of(s, bounty), pr.repo, pr.number)
