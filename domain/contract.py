"""The bounty contract's rules as pure functions over a bounty's on-chain state.

The embedded ledger executes exactly these rules; the Move module (`move/sources/bounty.move`) encodes
the same ones, check for check and in the same order (so the same call aborts with the same code on
both). Each rule either mutates the state and returns the events the chain emits, or raises
`ContractAbort` with the abort code the chain would return. Everything the mirror (domain.bounty) and
the board derive from the chain's rules is defined here once (`status_after_accept`, `mirror_view`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from enum import IntEnum
from typing import Any

from domain.errors import Code, Code3Error

U64_MAX = 2**64 - 1
DAY = 86_400
DEFAULT_COOLING_PERIOD = 7 * DAY  # seconds: seven days, as in the Code3 design
MAX_COOLING_PERIOD = 90 * DAY  # bounded at initialize and by set_cooling_period (and > 0)
DEFAULT_DEADLINE = 30 * DAY  # what a publish that names no deadline gets
MAX_DEADLINE_AHEAD = 365 * DAY  # a deadline lies in (now, now + this]
MAX_HOLD_SECONDS = 30 * DAY  # exclusive: 0 < hold_seconds <= this; contest: hold_seconds == 0
MAX_WORKERS = 64  # contest: accepted workers per bounty (each with at most one submission)
MAX_REPO_BYTES = 140
MAX_PR_URL_BYTES = 300
ISSUE_HASH_DIGITS = 64  # sha256, lowercase hex
COMMIT_SHA_DIGITS = (40, 64)  # git's sha1 or sha256 object ids, lowercase hex
_HEX = re.compile(r"[0-9a-f]*")


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


class Mode(IntEnum):
    """How workers take a bounty, chosen at publish (u8 on chain)."""

    EXCLUSIVE = 0  # the first accepted worker holds the task for `hold_seconds`; others are refused meanwhile
    CONTEST = 1  # several workers; the first merged PR wins

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: int) -> Mode:
        """The chain's u8; anything but 0 or 1 is INVALID_MODE."""
        if isinstance(value, bool) or int(value) not in cls._value2member_map_:
            raise ContractAbort(Abort.INVALID_MODE)
        return cls(int(value))


class Abort(IntEnum):
    """Move abort codes of `code3::bounty`, each mapped to the error code a client sees.

    The module has never been published, so the numbers were free to choose once; from the first
    publish on they are fixed (the package is immutable).
    """

    BOUNTY_NOT_FOUND = 1
    INVALID_STATE = 2
    NOT_SPONSOR = 3
    NOT_RESOLVER = 4
    COOLING = 5
    NOT_ACCEPTED = 6
    ISSUE_HASH_EXISTS = 7
    INSUFFICIENT_BALANCE = 8
    INVALID_AMOUNT = 9
    PR_NOT_SUBMITTED = 10
    SPONSOR_CANNOT_ACCEPT = 11
    PR_ALREADY_SUBMITTED = 12
    NOT_ADMIN = 13
    WRONG_WINNER = 14
    HELD_BY_OTHER = 15
    HOLD_EXPIRED = 16
    PR_URL_TAKEN = 17
    DEADLINE_NOT_REACHED = 18
    DISPUTE_WINDOW_CLOSED = 19
    TOO_MANY_WORKERS = 20
    INVALID_DEADLINE = 21
    INVALID_MODE = 22
    INVALID_HOLD = 23
    INVALID_COOLING_PERIOD = 24
    INVALID_REPO = 25
    INVALID_ISSUE_HASH = 26
    INVALID_PR_URL = 27
    INVALID_COMMIT_SHA = 28


ABORT_CODES: dict[Abort, tuple[Code, str]] = {
    Abort.BOUNTY_NOT_FOUND: (Code.NOT_FOUND, "no bounty with that id on chain"),
    Abort.INVALID_STATE: (Code.INVALID_STATE, "the bounty is not in a state that allows this"),
    Abort.NOT_SPONSOR: (Code.UNAUTHORIZED, "only the bounty's sponsor may do this"),
    Abort.NOT_RESOLVER: (Code.UNAUTHORIZED, "only the contract's resolver may report a merge"),
    Abort.COOLING: (Code.COOLING, "the cooling period has not ended"),
    Abort.NOT_ACCEPTED: (Code.INVALID_STATE, "the worker has not accepted this bounty"),
    Abort.ISSUE_HASH_EXISTS: (Code.EXISTS, "this sponsor already has a bounty for this issue hash"),
    # seed 001 answers balance problems with E_CHAIN_TX_FAILED ("重试/检查 Gas/余额/网络")
    Abort.INSUFFICIENT_BALANCE: (Code.CHAIN_TX_FAILED, "the sponsor's balance cannot cover the bounty"),
    Abort.INVALID_AMOUNT: (Code.VALIDATION, "the amount must be a positive integer"),
    Abort.PR_NOT_SUBMITTED: (Code.NOT_FOUND, "no submission of that PR for this bounty"),
    Abort.SPONSOR_CANNOT_ACCEPT: (Code.UNAUTHORIZED, "a sponsor cannot accept their own bounty"),
    Abort.PR_ALREADY_SUBMITTED: (Code.IDEMPOTENT_REJECTED, "this worker already submitted another PR"),
    Abort.NOT_ADMIN: (Code.UNAUTHORIZED, "only the contract's admin may do this"),
    Abort.WRONG_WINNER: (Code.PRECONDITION, "the named winner is not the worker who submitted that PR"),
    Abort.HELD_BY_OTHER: (Code.INVALID_STATE, "another worker holds this task"),
    Abort.HOLD_EXPIRED: (Code.INVALID_STATE, "the worker's hold on this task has expired"),
    Abort.PR_URL_TAKEN: (Code.IDEMPOTENT_REJECTED, "another worker already submitted this PR for the bounty"),
    Abort.DEADLINE_NOT_REACHED: (Code.PRECONDITION, "a PR was submitted: the bounty can be cancelled only after "
                                                    "its deadline"),
    Abort.DISPUTE_WINDOW_CLOSED: (Code.PRECONDITION, "the cooling period is over: the payout can no longer be "
                                                     "disputed"),
    Abort.TOO_MANY_WORKERS: (Code.INVALID_STATE, f"the bounty already has {MAX_WORKERS} workers"),
    Abort.INVALID_DEADLINE: (Code.VALIDATION, f"the deadline must lie after now and at most "
                                              f"{MAX_DEADLINE_AHEAD // DAY} days ahead"),
    Abort.INVALID_MODE: (Code.VALIDATION, "the mode must be exclusive (0) or contest (1)"),
    Abort.INVALID_HOLD: (Code.VALIDATION, f"an exclusive bounty holds a task for 1 s to {MAX_HOLD_SECONDS // DAY} "
                                          "days; a contest takes no hold time"),
    Abort.INVALID_COOLING_PERIOD: (Code.VALIDATION, f"the cooling period must be 1 s to {MAX_COOLING_PERIOD // DAY} "
                                                    "days"),
    Abort.INVALID_REPO: (Code.VALIDATION, f"the repository must be 1 to {MAX_REPO_BYTES} bytes"),
    Abort.INVALID_ISSUE_HASH: (Code.VALIDATION, f"the issue hash must be {ISSUE_HASH_DIGITS} lowercase hex digits"),
    Abort.INVALID_PR_URL: (Code.VALIDATION, f"the PR URL must be 1 to {MAX_PR_URL_BYTES} bytes"),
    Abort.INVALID_COMMIT_SHA: (Code.VALIDATION, "the commit must be a full 40- or 64-digit lowercase hex id"),
}


class ContractAbort(Exception):
    def __init__(self, abort: Abort) -> None:
        super().__init__(f"Move abort {int(abort)} ({abort.name})")
        self.abort = abort


@dataclass
class ChainConfig:
    """The registry's settings: who administers, who reports merges, what is escrowed, the cooling period."""

    admin: str | None
    resolver: str | None
    asset: str
    escrow: str
    cooling_period: int


@dataclass(kw_only=True)
class BountyState:
    """A bounty as the contract stores it (field order = the Move struct's, as the ABI test checks)."""

    bounty_id: str
    sponsor: str
    repo: str
    issue_hash: str
    asset: str
    amount: int
    created_at: int
    cooling_period: int = DEFAULT_COOLING_PERIOD
    deadline: int
    mode: Mode = Mode.CONTEST
    hold_seconds: int = 0
    status: Status = Status.OPEN
    workers: list[str] = field(default_factory=list)
    holder: str | None = None
    hold_until: int | None = None
    submissions: dict[str, dict[str, str]] = field(default_factory=dict)
    winner: str | None = None
    merged_pr: str | None = None
    merged_at: int | None = None
    cooling_until: int | None = None

    def comparable(self) -> dict[str, Any]:
        """What a mirror of this bounty must agree with (the mirror's side is `Bounty.comparable`)."""
        return mirror_view(self.status, self.workers, self.winner, self.cooling_until, self.holder, self.hold_until)

    def held_by_other(self, worker: str, now: int) -> bool:
        """Exclusive: another worker's hold is running (accepting now aborts HELD_BY_OTHER)."""
        return self.mode is Mode.EXCLUSIVE and _holds(self.holder, self.hold_until, now) and self.holder != worker

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"], data["mode"] = int(self.status), int(self.mode)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BountyState:
        """The stored form; a bounty stored before modes and deadlines existed reads as a contest with the
        default deadline (what it would get if it were published now)."""
        values = {**data, "status": Status(data["status"]), "mode": Mode(data.get("mode", Mode.CONTEST))}
        values.setdefault("deadline", int(data["created_at"]) + DEFAULT_DEADLINE)
        return cls(**values)


def mirror_view(status: Status | int, workers: list[str], winner: str | None, cooling_until: int | None,
                holder: str | None, hold_until: int | None) -> dict[str, Any]:
    """The part of a bounty that both the chain and its mirror hold, in the chain's terms (one definition)."""
    return {"status": int(status), "workers": sorted(workers), "winner": winner, "cooling_until": cooling_until,
            "holder": holder, "hold_until": hold_until}


def status_after_accept(status: Status) -> Status:
    """The first accepted worker starts an open bounty."""
    return Status.STARTED if status is Status.OPEN else status


def status_after_withdraw(status: Status, workers_left: list[str]) -> Status:
    """The last worker to give the task back (before any PR) reopens it."""
    return Status.OPEN if status is Status.STARTED and not workers_left else status


def _holds(holder: str | None, hold_until: int | None, now: int) -> bool:
    return holder is not None and hold_until is not None and now < hold_until


Emitted = list[tuple[str, dict[str, Any]]]


# --- what a transaction can carry: a value outside its Move type cannot even be encoded -------------

def u64_arg(name: str, value: Any) -> int:
    """An integer argument as the chain's u64 (amounts, deadlines, durations); refused before signing."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U64_MAX:
        raise Code3Error(Code.VALIDATION, f"{name} {value!r} does not fit the contract's u64 (0 to {U64_MAX})",
                         f"pass {name} as a whole number in that range")
    return value


def mode_arg(mode: str | int) -> int:
    """`"exclusive"`/`"contest"` (or the chain's u8) as the u8 create_bounty takes."""
    if isinstance(mode, str):
        if mode.upper() in Mode.__members__:
            return int(Mode[mode.upper()])
    elif not isinstance(mode, bool) and isinstance(mode, int) and 0 <= mode <= 255:
        return mode
    raise Code3Error(Code.VALIDATION, f"unknown bounty mode {mode!r}", "use exclusive or contest")


# --- argument checks, shared with the adapters (which refuse before signing what would abort) ---------

def check_repo(repo: str) -> None:
    if not 0 < len(repo.encode()) <= MAX_REPO_BYTES:
        raise ContractAbort(Abort.INVALID_REPO)


def check_issue_hash(issue_hash: str) -> None:
    if len(issue_hash) != ISSUE_HASH_DIGITS or not _HEX.fullmatch(issue_hash):
        raise ContractAbort(Abort.INVALID_ISSUE_HASH)


def check_pr_url(pr_url: str) -> None:
    if not 0 < len(pr_url.encode()) <= MAX_PR_URL_BYTES:
        raise ContractAbort(Abort.INVALID_PR_URL)


def check_commit_sha(commit_sha: str) -> None:
    if len(commit_sha) not in COMMIT_SHA_DIGITS or not _HEX.fullmatch(commit_sha):
        raise ContractAbort(Abort.INVALID_COMMIT_SHA)


def check_cooling_period(seconds: int) -> None:
    if not 0 < seconds <= MAX_COOLING_PERIOD:
        raise ContractAbort(Abort.INVALID_COOLING_PERIOD)


def check_terms(deadline: int, mode: int, hold_seconds: int, now: int) -> Mode:
    if not now < deadline <= now + MAX_DEADLINE_AHEAD:
        raise ContractAbort(Abort.INVALID_DEADLINE)
    chosen = Mode.parse(mode)
    limit = (1, MAX_HOLD_SECONDS) if chosen is Mode.EXCLUSIVE else (0, 0)
    if not limit[0] <= hold_seconds <= limit[1]:
        raise ContractAbort(Abort.INVALID_HOLD)
    return chosen


# --- the registry (admin) -------------------------------------------------------------------------

def initialize(cooling_period: int) -> None:
    """What `initialize` checks of its arguments (the publisher check is the chain's own)."""
    check_cooling_period(cooling_period)


def set_cooling_period(config: ChainConfig, signer: str, seconds: int) -> None:
    """For bounties created from now on; a bounty keeps the period it was created with."""
    if signer != config.admin:
        raise ContractAbort(Abort.NOT_ADMIN)
    check_cooling_period(seconds)
    config.cooling_period = seconds


def set_resolver(config: ChainConfig, signer: str, resolver: str) -> None:
    if signer != config.admin:
        raise ContractAbort(Abort.NOT_ADMIN)
    config.resolver = resolver


# --- the bounty's rules ---------------------------------------------------------------------------

def create(state: BountyState, sponsor_balance: int, now: int, issue_hash_taken: bool) -> Emitted:
    """`issue_hash_taken`: this sponsor already has a bounty under this hash (hashes are keyed by sponsor,
    so nobody can squat another sponsor's hash)."""
    check_repo(state.repo)
    check_issue_hash(state.issue_hash)
    if state.amount <= 0:
        raise ContractAbort(Abort.INVALID_AMOUNT)
    state.mode = check_terms(state.deadline, state.mode, state.hold_seconds, now)
    if issue_hash_taken:
        raise ContractAbort(Abort.ISSUE_HASH_EXISTS)
    if sponsor_balance < state.amount:
        raise ContractAbort(Abort.INSUFFICIENT_BALANCE)
    return [("BountyCreated", {
        "bounty_id": state.bounty_id, "sponsor": state.sponsor, "repo": state.repo,
        "issue_hash": state.issue_hash, "asset": state.asset, "amount": state.amount,
        "cooling_period": state.cooling_period, "created_at": state.created_at, "deadline": state.deadline,
        "mode": int(state.mode), "hold_seconds": state.hold_seconds,
    })]


def accept(state: BountyState, worker: str, now: int) -> Emitted:
    """Exclusive: the worker becomes the holder unless another's hold runs (a running hold's holder
    accepting again changes nothing; an expired one renews it). Contest: the worker joins."""
    if worker == state.sponsor:
        raise ContractAbort(Abort.SPONSOR_CANNOT_ACCEPT)
    exclusive = state.mode is Mode.EXCLUSIVE
    allowed = (Status.OPEN, Status.STARTED) if exclusive else (Status.OPEN, Status.STARTED, Status.PR_SUBMITTED)
    if state.status not in allowed:
        raise ContractAbort(Abort.INVALID_STATE)
    if exclusive:
        if _holds(state.holder, state.hold_until, now):
            if state.holder == worker:
                return []
            raise ContractAbort(Abort.HELD_BY_OTHER)
        state.holder, state.hold_until, state.workers = worker, now + state.hold_seconds, [worker]
    else:
        if worker in state.workers:
            return []
        if len(state.workers) >= MAX_WORKERS:
            raise ContractAbort(Abort.TOO_MANY_WORKERS)
        state.workers.append(worker)
    state.status = status_after_accept(state.status)
    return [("BountyAccepted", {"bounty_id": state.bounty_id, "worker": worker,
                                "hold_until": state.hold_until if exclusive else 0})]


def withdraw(state: BountyState, worker: str) -> Emitted:
    """A worker gives the task back (exclusive: releases the hold; contest: leaves) before submitting a PR."""
    if state.status not in (Status.STARTED, Status.PR_SUBMITTED):
        raise ContractAbort(Abort.INVALID_STATE)
    if worker not in state.workers:
        raise ContractAbort(Abort.NOT_ACCEPTED)
    if worker in state.submissions:
        raise ContractAbort(Abort.INVALID_STATE)
    state.workers.remove(worker)
    if state.holder == worker:
        state.holder, state.hold_until = None, None
    state.status = status_after_withdraw(state.status, state.workers)
    return [("TaskWithdrawn", {"bounty_id": state.bounty_id, "worker": worker})]


def submit_pr(state: BountyState, worker: str, pr_url: str, commit_sha: str, now: int) -> Emitted:
    """One PR per worker, a PR URL per bounty belongs to its first submitter; exclusive: the holder only,
    while the hold runs. Submitting the same PR again changes nothing."""
    check_pr_url(pr_url)
    check_commit_sha(commit_sha)
    if state.status not in (Status.STARTED, Status.PR_SUBMITTED):
        raise ContractAbort(Abort.INVALID_STATE)
    previous = state.submissions.get(worker)
    if previous is not None:
        if previous["pr_url"] == pr_url:
            return []
        raise ContractAbort(Abort.PR_ALREADY_SUBMITTED)
    if worker not in state.workers:
        raise ContractAbort(Abort.NOT_ACCEPTED)
    if state.mode is Mode.EXCLUSIVE and not _holds(state.holder, state.hold_until, now):
        raise ContractAbort(Abort.HOLD_EXPIRED)
    if submitter_of(state, pr_url) is not None:
        raise ContractAbort(Abort.PR_URL_TAKEN)
    state.submissions[worker] = {"pr_url": pr_url, "commit_sha": commit_sha}
    state.status = Status.PR_SUBMITTED
    return [("PRSubmitted", {
        "bounty_id": state.bounty_id, "worker": worker, "pr_url": pr_url, "commit_sha": commit_sha,
    })]


def submitter_of(state: BountyState, pr_url: str) -> str | None:
    return next((w for w, s in state.submissions.items() if s["pr_url"] == pr_url), None)


def mark_merged(state: BountyState, signer: str, resolver: str | None, pr_url: str, winner: str,
                now: int) -> Emitted:
    """The resolver reports a merged PR naming its author (checked off chain against the forge): the
    winner must be that PR's submitter. The first report wins and the cooling period starts."""
    if resolver is None or signer != resolver:
        raise ContractAbort(Abort.NOT_RESOLVER)
    if state.status is not Status.PR_SUBMITTED:
        raise ContractAbort(Abort.INVALID_STATE)
    submitter = submitter_of(state, pr_url)
    if submitter is None:
        raise ContractAbort(Abort.PR_NOT_SUBMITTED)
    if submitter != winner:
        raise ContractAbort(Abort.WRONG_WINNER)
    # cooling_period <= 90 days and the clock is bounded (see LocalLedger.advance): no u64 overflow
    state.winner, state.merged_pr, state.merged_at = winner, pr_url, now
    state.cooling_until = now + state.cooling_period
    state.status = Status.COOLING_DOWN
    return [
        ("BountyMerged", {"bounty_id": state.bounty_id, "winner": winner, "pr_url": pr_url, "merged_at": now}),
        ("CoolingStarted", {"bounty_id": state.bounty_id, "cooling_until": state.cooling_until}),
    ]


def claim_payout(state: BountyState, now: int) -> Emitted:
    """Once cooling is over anyone may trigger the payout (a scheduler needs no winner's key); the escrow
    always goes to the winner."""
    if state.status is not Status.COOLING_DOWN:
        raise ContractAbort(Abort.INVALID_STATE)
    assert state.cooling_until is not None and state.winner is not None
    if now < state.cooling_until:
        raise ContractAbort(Abort.COOLING)
    state.status = Status.PAID
    return [("BountyPaid", {
        "bounty_id": state.bounty_id, "winner": state.winner, "asset": state.asset, "amount": state.amount,
        "paid_at": now,
    })]


def cancel(state: BountyState, signer: str, now: int) -> Emitted:
    """The sponsor takes the escrow back: before any PR at any time; with a submitted PR only after the
    deadline (no worker can freeze escrow); during cooling only before `cooling_until` (a dispute)."""
    if signer != state.sponsor:
        raise ContractAbort(Abort.NOT_SPONSOR)
    if state.status is Status.PR_SUBMITTED:
        if now < state.deadline:
            raise ContractAbort(Abort.DEADLINE_NOT_REACHED)
    elif state.status is Status.COOLING_DOWN:
        assert state.cooling_until is not None
        if now >= state.cooling_until:
            raise ContractAbort(Abort.DISPUTE_WINDOW_CLOSED)
    elif state.status not in (Status.OPEN, Status.STARTED):
        raise ContractAbort(Abort.INVALID_STATE)
    disputed = state.status is Status.COOLING_DOWN
    state.status = Status.CANCELLED
    return [("BountyCancelled", {
        "bounty_id": state.bounty_id, "refund_to": state.sponsor, "amount": state.amount, "disputed": disputed,
    })]
