"""The bounty contract's rules as pure functions over a bounty's on-chain state.

The embedded ledger executes exactly these rules; the Move module (`move/`) encodes the same ones.
Each rule either mutates the state and returns the events the chain emits, or raises `ContractAbort`
with the abort code the chain would return.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import IntEnum
from typing import Any

from domain.errors import Code

DEFAULT_COOLING_PERIOD = 604_800  # seconds: seven days, as in the Code3 design


class Status(IntEnum):
    OPEN = 0
    STARTED = 1
    PR_SUBMITTED = 2
    MERGED = 3
    COOLING_DOWN = 4
    PAID = 5
    CANCELLED = 6

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Status.OPEN: "open",
    Status.STARTED: "in-progress",
    Status.PR_SUBMITTED: "in-progress",
    Status.MERGED: "merged",
    Status.COOLING_DOWN: "cooling",
    Status.PAID: "paid",
    Status.CANCELLED: "cancelled",
}
STATUS_LABELS = frozenset(_LABELS.values())


class Abort(IntEnum):
    """Move abort codes of `code3::bounty`, each mapped to the error code a client sees."""

    BOUNTY_NOT_FOUND = 1
    INVALID_STATE = 2
    NOT_SPONSOR = 3
    NOT_WINNER = 4
    COOLING = 5
    NOT_ACCEPTED = 6
    ISSUE_HASH_EXISTS = 7
    INSUFFICIENT_BALANCE = 8
    INVALID_AMOUNT = 9
    PR_NOT_SUBMITTED = 10
    SPONSOR_CANNOT_ACCEPT = 11
    PR_ALREADY_SUBMITTED = 12


ABORT_CODES: dict[Abort, tuple[Code, str]] = {
    Abort.BOUNTY_NOT_FOUND: (Code.NOT_FOUND, "no bounty with that id on chain"),
    Abort.INVALID_STATE: (Code.INVALID_STATE, "the bounty is not in a state that allows this"),
    Abort.NOT_SPONSOR: (Code.UNAUTHORIZED, "only the bounty's sponsor may do this"),
    Abort.NOT_WINNER: (Code.UNAUTHORIZED, "only the winner (the worker whose PR merged) may claim"),
    Abort.COOLING: (Code.COOLING, "the cooling period has not ended"),
    Abort.NOT_ACCEPTED: (Code.INVALID_STATE, "the worker has not accepted this bounty"),
    Abort.ISSUE_HASH_EXISTS: (Code.EXISTS, "a bounty for this issue hash already exists"),
    Abort.INSUFFICIENT_BALANCE: (Code.PRECONDITION, "the sponsor's balance cannot cover the bounty"),
    Abort.INVALID_AMOUNT: (Code.VALIDATION, "the amount must be a positive integer"),
    Abort.PR_NOT_SUBMITTED: (Code.NOT_FOUND, "no submission of that PR for this bounty"),
    Abort.SPONSOR_CANNOT_ACCEPT: (Code.UNAUTHORIZED, "a sponsor cannot accept their own bounty"),
    Abort.PR_ALREADY_SUBMITTED: (Code.IDEMPOTENT_REJECTED, "this worker already submitted another PR"),
}


class ContractAbort(Exception):
    def __init__(self, abort: Abort) -> None:
        super().__init__(f"Move abort {int(abort)} ({abort.name})")
        self.abort = abort


@dataclass
class BountyState:
    """A bounty as the contract stores it."""

    bounty_id: str
    sponsor: str
    repo: str
    issue_hash: str
    asset: str
    amount: int
    created_at: int
    cooling_period: int = DEFAULT_COOLING_PERIOD
    status: Status = Status.OPEN
    workers: list[str] = field(default_factory=list)
    submissions: dict[str, dict[str, str]] = field(default_factory=dict)
    winner: str | None = None
    merged_pr: str | None = None
    merged_at: int | None = None
    cooling_until: int | None = None

    def comparable(self) -> dict[str, Any]:
        """What a mirror of this bounty must agree with (see `Bounty.comparable`)."""
        return {"status": int(self.status), "workers": sorted(self.workers), "winner": self.winner,
                "cooling_until": self.cooling_until}

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = int(self.status)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BountyState:
        return cls(**{**data, "status": Status(data["status"])})


Emitted = list[tuple[str, dict[str, Any]]]


def create(state: BountyState, sponsor_balance: int) -> Emitted:
    if state.amount <= 0:
        raise ContractAbort(Abort.INVALID_AMOUNT)
    if sponsor_balance < state.amount:
        raise ContractAbort(Abort.INSUFFICIENT_BALANCE)
    return [("BountyCreated", {
        "bounty_id": state.bounty_id, "sponsor": state.sponsor, "repo": state.repo,
        "issue_hash": state.issue_hash, "asset": state.asset, "amount": state.amount,
        "cooling_period": state.cooling_period, "created_at": state.created_at,
    })]


def accept(state: BountyState, worker: str) -> Emitted:
    if worker == state.sponsor:
        raise ContractAbort(Abort.SPONSOR_CANNOT_ACCEPT)
    if state.status not in (Status.OPEN, Status.STARTED, Status.PR_SUBMITTED):
        raise ContractAbort(Abort.INVALID_STATE)
    if worker in state.workers:
        return []
    state.workers.append(worker)
    if state.status is Status.OPEN:
        state.status = Status.STARTED
    return [("BountyAccepted", {"bounty_id": state.bounty_id, "worker": worker})]


def submit_pr(state: BountyState, worker: str, pr_url: str, commit_sha: str) -> Emitted:
    if state.status not in (Status.STARTED, Status.PR_SUBMITTED):
        raise ContractAbort(Abort.INVALID_STATE)
    if worker not in state.workers:
        raise ContractAbort(Abort.NOT_ACCEPTED)
    previous = state.submissions.get(worker)
    if previous is not None:
        if previous["pr_url"] == pr_url:
            return []
        raise ContractAbort(Abort.PR_ALREADY_SUBMITTED)
    state.submissions[worker] = {"pr_url": pr_url, "commit_sha": commit_sha}
    state.status = Status.PR_SUBMITTED
    return [("PRSubmitted", {
        "bounty_id": state.bounty_id, "worker": worker, "pr_url": pr_url, "commit_sha": commit_sha,
    })]


def mark_merged(state: BountyState, signer: str, pr_url: str, now: int) -> Emitted:
    """The first merged PR wins: its worker becomes the winner and cooling starts."""
    if signer != state.sponsor:
        raise ContractAbort(Abort.NOT_SPONSOR)
    if state.status is not Status.PR_SUBMITTED:
        raise ContractAbort(Abort.INVALID_STATE)
    worker = next((w for w, s in state.submissions.items() if s["pr_url"] == pr_url), None)
    if worker is None:
        raise ContractAbort(Abort.PR_NOT_SUBMITTED)
    state.winner, state.merged_pr, state.merged_at = worker, pr_url, now
    state.cooling_until = now + state.cooling_period
    state.status = Status.COOLING_DOWN
    return [
        ("BountyMerged", {"bounty_id": state.bounty_id, "winner": worker, "pr_url": pr_url, "merged_at": now}),
        ("CoolingStarted", {"bounty_id": state.bounty_id, "cooling_until": state.cooling_until}),
    ]


def claim_payout(state: BountyState, signer: str, now: int) -> Emitted:
    if state.status is not Status.COOLING_DOWN:
        raise ContractAbort(Abort.INVALID_STATE)
    if signer != state.winner:
        raise ContractAbort(Abort.NOT_WINNER)
    assert state.cooling_until is not None
    if now < state.cooling_until:
        raise ContractAbort(Abort.COOLING)
    state.status = Status.PAID
    return [("BountyPaid", {
        "bounty_id": state.bounty_id, "winner": signer, "asset": state.asset, "amount": state.amount, "paid_at": now,
    })]


def cancel(state: BountyState, signer: str) -> Emitted:
    """The sponsor cancels an unmerged bounty, or disputes during cooling; the escrow is refunded."""
    if signer != state.sponsor:
        raise ContractAbort(Abort.NOT_SPONSOR)
    if state.status not in (Status.OPEN, Status.STARTED, Status.COOLING_DOWN):
        raise ContractAbort(Abort.INVALID_STATE)
    disputed = state.status is Status.COOLING_DOWN
    state.status = Status.CANCELLED
    return [("BountyCancelled", {
        "bounty_id": state.bounty_id, "refund_to": state.sponsor, "amount": state.amount, "disputed": disputed,
    })]
