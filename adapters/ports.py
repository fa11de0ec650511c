"""The ports the handlers talk to. The embedded adapters implement them now; the real ones later."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from domain.bounties.chain_events import ChainEvent
from domain.bounties.contract import BountyState, ChainConfig


@dataclass(frozen=True)
class Key:
    """A named account key as the keystore holds it. Its private key never leaves the adapter that signs."""

    name: str
    address: str
    private_key_hex: str = field(repr=False)


class Signer(Protocol):
    """The acting account as the chain adapters need it: a `Key`, or one loaded on first use (code3.wiring)."""

    @property
    def name(self) -> str: ...

    @property
    def address(self) -> str: ...

    @property
    def private_key_hex(self) -> str: ...


@dataclass(frozen=True)
class Receipt:
    tx_hash: str
    version: int
    success: bool
    events: list[ChainEvent]
    abort_code: int | None = None
    vm_status: str = "Executed successfully"


@dataclass(frozen=True)
class IssueRef:
    repo: str
    number: int
    url: str
    title: str
    body: str
    labels: list[str]
    state: str = "open"
    author: str = ""  # the login that opened it (a bounty issue's sponsor on the forge)


@dataclass(frozen=True)
class Comment:
    """`author`: the login that wrote it, as the forge says; it decides whose text counts (remote_artifacts).
    `author_id`: the forge's numeric id of that account (stable across renames; 0 when unknown); `edited`: the
    text was changed after it was posted (on GitHub, people with push access may edit anyone's comment)."""

    id: int
    body: str
    author: str
    author_id: int = 0
    edited: bool = False
    url: str = ""


@dataclass(frozen=True)
class PullRequest:
    """A pull request as the forge shows it. `repo` / `repo_id`: the repository it belongs to (its base), by name
    and by the forge's id; `base`: the branch it targets; `default_branch`: that repository's default branch;
    `author_id`: the forge's numeric id of the account that opened it (who a bounty pays, through its link)."""

    repo: str
    number: int
    url: str
    head: str
    base: str
    author: str
    title: str
    state: str
    merged: bool
    head_sha: str
    merge_sha: str | None = None
    repo_id: int = 0
    default_branch: str = "main"
    author_id: int = 0


@dataclass(frozen=True)
class RepoInfo:
    """A repository by the forge's own id (stable across renames) and its default branch."""

    full_name: str
    id: int
    default_branch: str


class Chain(Protocol):
    """The bounty contract (v2) on a ledger. Writes return the receipt with the events they emitted; each write's
    parameters are the Move entry function's, by name and in order (tests/unit/test_move_abi.py).

    Amounts, deadlines, ids and durations are u64 integers (a value outside that range is refused with
    E_VALIDATION before anything is signed); a Move abort is a receipt with `abort_code`.
    """

    network: str

    def create_bounty(
        self, signer: Signer, repo: str, issue_hash: str, asset: str, amount: int,
        deadline: int | None = None, mode: str | int = "contest", hold_seconds: int = 0, repo_id: int = 0,
    ) -> Receipt:
        """`deadline`: absolute unix seconds, at most a year ahead (None: now + 30 days); `mode`:
        "exclusive" (needs 0 < hold_seconds <= 30 days) or "contest" (hold_seconds 0); `repo_id`: the forge's id
        of `repo`."""
        ...
    def fund_bounty(self, signer: Signer, bounty_id: str, amount: int, nonce: int) -> Receipt: ...
    def accept_bounty(self, signer: Signer, bounty_id: str) -> Receipt: ...
    def accept_for(self, signer: Signer, bounty_id: str, forge_user_id: int) -> Receipt: ...
    def withdraw_task(self, signer: Signer, bounty_id: str) -> Receipt: ...
    def withdraw_for(self, signer: Signer, bounty_id: str, forge_user_id: int) -> Receipt: ...
    def submit_pr(self, signer: Signer, bounty_id: str, pr_url: str, commit_sha: str) -> Receipt: ...
    def submit_pr_for(self, signer: Signer, bounty_id: str, forge_user_id: int, pr_url: str,
                      commit_sha: str) -> Receipt: ...
    def reject_submission(self, signer: Signer, bounty_id: str, worker: str, reason: int) -> Receipt:
        """Resolver only: a live submission the forge shows is junk (removed) or closed unmerged (kept, closed)."""
        ...
    def mark_merged(self, signer: Signer, bounty_id: str, pr_url: str, author_id: int, repo_id: int,
                    pr_number: int) -> Receipt:
        """Resolver only: the PR merged, as the forge shows it; the winner is the address linked to `author_id`."""
        ...
    def set_split(self, signer: Signer, bounty_id: str, recipients: list[str], shares: list[int]) -> Receipt: ...
    def set_split_for(self, signer: Signer, bounty_id: str, forge_user_id: int, recipients: list[str],
                      shares: list[int]) -> Receipt: ...
    def claim_payout(self, signer: Signer, bounty_id: str) -> Receipt:
        """Anyone, once cooling (and any dispute's time) is over; the pool goes to the winner or their split."""
        ...
    def cancel_bounty(self, signer: Signer, bounty_id: str) -> Receipt: ...
    def withdraw_refund(self, signer: Signer, bounty_id: str) -> Receipt: ...
    def dispute(self, signer: Signer, bounty_id: str, reason: str) -> Receipt: ...
    def dispute_for(self, signer: Signer, bounty_id: str, forge_user_id: int, reason: str) -> Receipt: ...
    def rule(self, signer: Signer, bounty_id: str, share_bps: int) -> Receipt: ...
    def tip(self, signer: Signer, bounty_id: str, to: str, amount: int, nonce: int) -> Receipt: ...
    def link_account(self, signer: Signer, forge_user_id: int, login: str, account: str, public_key: bytes,
                     signature: bytes) -> Receipt: ...
    def set_resolver(self, signer: Signer, resolver: str) -> Receipt: ...
    def set_cooling_period(self, signer: Signer, cooling_period: int) -> Receipt: ...
    def set_dispute_period(self, signer: Signer, dispute_period: int) -> Receipt: ...

    def config(self) -> ChainConfig:
        """The registry: admin, resolver of new bounties, escrowed asset, escrow account, periods of new bounties."""
        ...
    def get_bounty(self, bounty_id: str) -> BountyState | None: ...
    def find_bounty_by_issue_hash(self, sponsor: str, issue_hash: str) -> BountyState | None:
        """Issue hashes are keyed by sponsor on chain: only `sponsor`'s own bounty is found."""
        ...
    def list_bounty_ids(self, start: int = 1, limit: int = 100) -> list[str]:
        """A page of bounty ids from `start` on (at most 100: the view's bound)."""
        ...
    def list_bounties(self) -> list[BountyState]: ...
    def is_entrant(self, bounty_id: str, worker: str) -> bool: ...
    def contribution(self, bounty_id: str, funder: str) -> int:
        """What `funder` put into the bounty and has not withdrawn."""
        ...
    def nonce_used(self, account: str, nonce: int) -> bool: ...
    def linked_account(self, resolver: str, forge_user_id: int) -> str | None:
        """The address linked to a forge account under `resolver` (links are kept per resolver)."""
        ...
    def linked_forge_id(self, resolver: str, account: str) -> int | None: ...
    def settled_by(self, repo_id: int, pr_number: int) -> str | None:
        """The bounty a merged PR settled, if any (one merged PR settles one bounty)."""
        ...
    def bounty_events(self, bounty_id: str) -> list[ChainEvent]: ...
    def events_since(self, version: int, limit: int = 1000) -> list[ChainEvent]:
        """Every event with a version above `version`, in chain order (what chain sync follows): the bounty events
        and the links (`AccountLinked`, which carries no bounty id)."""
        ...
    def balance(self, address: str, asset: str) -> int: ...
    def now(self) -> int: ...


class Forge(Protocol):
    """Where issues, labels, comments, forks, branches and PRs live (GitHub or the embedded forge).

    It acts as one user (`actor`), as a GitHub token does.
    """

    @property
    def actor(self) -> str:
        """The login the forge acts as (the token's user on GitHub)."""
        ...

    @property
    def actor_id(self) -> int:
        """The forge's numeric id of that account (what an identity link names)."""
        ...

    def get_repo(self, repo: str) -> RepoInfo:
        """The repository's id and default branch (E_NOT_FOUND when it does not exist)."""
        ...

    def create_issue(self, repo: str, title: str, body: str, labels: list[str], assignees: list[str]) -> IssueRef: ...
    def find_issue(self, repo: str, marker: str) -> IssueRef | None: ...
    def list_issues(self, repo: str) -> list[IssueRef]:
        """The repository's issues labelled `code3` (what audit verify checks for orphans)."""
        ...
    def get_issue(self, repo: str, number: int) -> IssueRef: ...
    def update_issue_body(self, repo: str, number: int, body: str) -> None: ...
    def close_issue(self, repo: str, number: int) -> None:
        """Close the issue (its bounty is paid); closing a closed issue changes nothing."""
        ...
    def set_labels(self, repo: str, number: int, labels: list[str]) -> list[str]: ...
    def create_comment(self, repo: str, number: int, body: str) -> int: ...
    def list_comments(self, repo: str, number: int) -> list[Comment]:
        """Oldest first, each with the login that wrote it."""
        ...
    def edit_comment(self, repo: str, comment_id: int, body: str) -> None: ...
    def fork(self, repo: str) -> str: ...
    def clone(self, repo: str, dest: Path) -> None: ...
    def push(self, workdir: Path, branch: str) -> str: ...
    def fetch_branch(self, workdir: Path, repo: str, branch: str) -> str:
        """Fetch `repo`'s `branch` (an upstream, not the working copy's origin) into the working copy as
        `refs/remotes/upstream/<branch>`; the commit it points at. A worker's branch starts there."""
        ...
    def open_pr(self, repo: str, head: str, base: str, title: str, body: str) -> PullRequest: ...
    def get_pr(self, url: str) -> PullRequest | None: ...
    def find_pr(self, repo: str, number: int) -> PullRequest | None:
        """PR `number` of `repo` (None when that number is not a PR there)."""
        ...
    def get_comment(self, url: str) -> Comment | None:
        """An issue or PR comment by its URL (`…/issues/N#issuecomment-ID`), or None when there is none."""
        ...
    def repo_url(self, repo: str) -> str: ...


class SpecWriter(Protocol):
    """Fills the spec-kit templates: offline and deterministic by default, an LLM later."""

    def spec(self, feature_id: str, description: str) -> str: ...
    def plan(self, feature_id: str, spec_md: str, tech_constraints: str | None) -> dict[str, str]: ...
    def tasks(self, feature_id: str, artifacts: dict[str, str]) -> str: ...
