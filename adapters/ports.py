"""The ports the handlers talk to. The embedded adapters implement them now; the real ones later."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from domain.chain_events import ChainEvent
from domain.contract import BountyState, ChainConfig


@dataclass(frozen=True)
class Signer:
    """The acting account: a named key. Its private key never leaves the adapter that signs."""

    name: str
    address: str
    private_key_hex: str = field(repr=False)


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
    """`author`: the login that wrote it, as the forge says; it decides whose text counts (remote_artifacts)."""

    id: int
    body: str
    author: str


@dataclass(frozen=True)
class PullRequest:
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


class Chain(Protocol):
    """The bounty contract on a ledger. Writes return the receipt with the events they emitted.

    Amounts, deadlines and durations are u64 integers (a value outside that range is refused with
    E_VALIDATION before anything is signed); a Move abort is a receipt with `abort_code`.
    """

    network: str

    def create_bounty(
        self, signer: Signer, repo: str, issue_hash: str, asset: str, amount: int,
        deadline: int | None = None, mode: str | int = "contest", hold_seconds: int = 0,
    ) -> Receipt:
        """`deadline`: absolute unix seconds, at most a year ahead (None: now + 30 days); `mode`:
        "exclusive" (needs 0 < hold_seconds <= 30 days) or "contest" (hold_seconds 0)."""
        ...
    def accept_bounty(self, signer: Signer, bounty_id: str) -> Receipt: ...
    def withdraw_task(self, signer: Signer, bounty_id: str) -> Receipt: ...
    def submit_pr(self, signer: Signer, bounty_id: str, pr_url: str, commit_sha: str) -> Receipt: ...
    def mark_merged(self, signer: Signer, bounty_id: str, pr_url: str, winner: str | None = None) -> Receipt:
        """Resolver only. `winner`: the PR's author's address (None: the PR's submitter on chain)."""
        ...
    def claim_payout(self, signer: Signer, bounty_id: str) -> Receipt:
        """Anyone, once cooling is over; the escrow goes to the winner."""
        ...
    def cancel_bounty(self, signer: Signer, bounty_id: str) -> Receipt: ...
    def set_resolver(self, signer: Signer, resolver: str) -> Receipt: ...
    def set_cooling_period(self, signer: Signer, cooling_period: int) -> Receipt: ...

    def config(self) -> ChainConfig:
        """The registry: admin, resolver, escrowed asset, escrow account, cooling period of new bounties."""
        ...
    def get_bounty(self, bounty_id: str) -> BountyState | None: ...
    def find_bounty_by_issue_hash(self, sponsor: str, issue_hash: str) -> BountyState | None:
        """Issue hashes are keyed by sponsor on chain: only `sponsor`'s own bounty is found."""
        ...
    def list_bounties(self) -> list[BountyState]: ...
    def bounty_events(self, bounty_id: str) -> list[ChainEvent]: ...
    def events_since(self, version: int, limit: int = 1000) -> list[ChainEvent]:
        """Every bounty event with a version above `version`, in chain order (what chain sync follows)."""
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

    def create_issue(self, repo: str, title: str, body: str, labels: list[str], assignees: list[str]) -> IssueRef: ...
    def find_issue(self, repo: str, marker: str) -> IssueRef | None: ...
    def list_issues(self, repo: str) -> list[IssueRef]:
        """The repository's issues labelled `code3` (what audit verify checks for orphans)."""
        ...
    def get_issue(self, repo: str, number: int) -> IssueRef: ...
    def update_issue_body(self, repo: str, number: int, body: str) -> None: ...
    def set_labels(self, repo: str, number: int, labels: list[str]) -> list[str]: ...
    def create_comment(self, repo: str, number: int, body: str) -> int: ...
    def list_comments(self, repo: str, number: int) -> list[Comment]:
        """Oldest first, each with the login that wrote it."""
        ...
    def edit_comment(self, repo: str, comment_id: int, body: str) -> None: ...
    def fork(self, repo: str) -> str: ...
    def clone(self, repo: str, dest: Path) -> None: ...
    def push(self, workdir: Path, branch: str) -> str: ...
    def open_pr(self, repo: str, head: str, base: str, title: str, body: str) -> PullRequest: ...
    def get_pr(self, url: str) -> PullRequest | None: ...
    def repo_url(self, repo: str) -> str: ...


class SpecWriter(Protocol):
    """Fills the spec-kit templates: offline and deterministic by default, an LLM later."""

    def spec(self, feature_id: str, description: str) -> str: ...
    def plan(self, feature_id: str, spec_md: str, tech_constraints: str | None) -> dict[str, str]: ...
    def tasks(self, feature_id: str, artifacts: dict[str, str]) -> str: ...
