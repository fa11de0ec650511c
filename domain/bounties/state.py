"""A bounty's on-chain state as the contract stores it (`BountyState`, field for field the Move struct), the registry's
settings (`ChainConfig`), and the arithmetic and views the rules, the mirror and the board share: what a mirror of a
bounty must agree with, the state label, the status steps, how a payout splits and a refund shares out.

The rules that change this state are domain.bounties.contract's."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from domain.bounties.contract_terms import (
    DEFAULT_COOLING_PERIOD,
    DEFAULT_DEADLINE,
    DEFAULT_DISPUTE_PERIOD,
    DISPUTED_LABEL,
    Mode,
    Status,
    SubmissionState,
)

LIVE_STATES = (Status.OPEN, Status.STARTED, Status.PR_SUBMITTED)  # before a merge: fundable, cancellable
Emitted = list[tuple[str, dict[str, Any]]]


@dataclass
class ChainConfig:
    """The registry: who administers, who resolves new bounties, what is escrowed, and the periods new bounties
    get (a bounty keeps the resolver and periods it was created with)."""

    admin: str | None
    resolver: str | None
    asset: str
    escrow: str
    cooling_period: int
    dispute_period: int = DEFAULT_DISPUTE_PERIOD


@dataclass(kw_only=True)
class BountyState:
    """A bounty as the contract stores it (field order = the Move struct's, as the ABI test checks).

    `submissions`: worker → {pr_url, commit_sha, submitted_at, state}, in submission order; `dispute`:
    {by, reason, opened_at, rule_by} while one is open; `split`: {recipients, shares} once the winner set one.
    Contest entrants live in a table beside the bounty (any number may accept); `entrants` counts them.
    `resolver` None: an embedded ledger's bounty created before a resolver was recorded, which takes the
    registry's resolver at its first resolver-only step (a Move bounty always has one)."""

    bounty_id: str
    sponsor: str
    resolver: str | None = None
    repo: str
    repo_id: int = 0
    issue_hash: str
    asset: str
    amount: int
    pool: int = 0
    funders: int = 0
    created_at: int
    cooling_period: int = DEFAULT_COOLING_PERIOD
    dispute_period: int = DEFAULT_DISPUTE_PERIOD
    deadline: int
    mode: Mode = Mode.CONTEST
    hold_seconds: int = 0
    status: Status = Status.OPEN
    entrants: int = 0
    holder: str | None = None
    hold_until: int | None = None
    submissions: dict[str, dict[str, Any]] = field(default_factory=dict)
    winner: str | None = None
    merged_pr: str | None = None
    merged_pr_number: int | None = None
    merged_at: int | None = None
    cooling_until: int | None = None
    dispute: dict[str, Any] | None = None
    split: dict[str, Any] | None = None
    refund_total: int = 0
    refunded: int = 0
    last_closed_at: int = 0

    def comparable(self) -> dict[str, Any]:
        """What a mirror of this bounty must agree with (the mirror's side is `Bounty.comparable`)."""
        return mirror_view(self.status, self.entrants, self.winner, self.cooling_until, self.holder,
                           self.hold_until, live_workers(self.submissions),
                           self.dispute["by"] if self.dispute else None, self.pool)

    def published_with(self, amount: int, asset: str) -> bool:
        """Whether this bounty carries a publish's terms of money (its issue hash carries the rest)."""
        return (self.amount, self.asset) == (amount, asset)

    def runs_as(self, mode: Mode, hold_seconds: int) -> bool:
        """Whether this bounty was created with this mode and hold time (terms a repeated publish must keep)."""
        return (self.mode, self.hold_seconds) == (mode, hold_seconds)

    def held_by_other(self, worker: str, now: int) -> bool:
        """Exclusive: another worker's hold is running (accepting now aborts HELD_BY_OTHER)."""
        return self.mode is Mode.EXCLUSIVE and holds(self, now) and self.holder != worker

    def submitter_of(self, pr_url: str) -> list[str]:
        """The workers with a live submission of this PR URL (several may name one PR; only its author can win)."""
        return [w for w, s in self.submissions.items() if s["pr_url"] == pr_url and s["state"] == SubmissionState.LIVE]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"], data["mode"] = int(self.status), int(self.mode)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BountyState:
        """The stored form. A bounty stored by the v1 contract reads with v2's defaults: a contest when it had no
        mode, the default deadline, its amount as its pool from one funder (its sponsor), the default dispute
        period, live submissions, no resolver yet (it takes the registry's at its first resolver-only step), and
        its accepted workers counted as entrants."""
        values = {**data, "status": Status(data["status"]), "mode": Mode(data.get("mode", Mode.CONTEST))}
        values.setdefault("deadline", int(data["created_at"]) + DEFAULT_DEADLINE)
        if "workers" in values:
            values["entrants"] = len(values.pop("workers"))
            values.setdefault("pool", int(data["amount"]))
            values.setdefault("funders", 1)
            values["submissions"] = {w: {"pr_url": s["pr_url"], "commit_sha": s["commit_sha"],
                                         "submitted_at": int(s.get("submitted_at", data["created_at"])),
                                         "state": int(s.get("state", SubmissionState.LIVE))}
                                     for w, s in data.get("submissions", {}).items()}
        return cls(**values)


def live_workers(submissions: dict[str, dict[str, Any]]) -> list[str]:
    return sorted(w for w, s in submissions.items() if s["state"] == SubmissionState.LIVE)


def mirror_view(status: Status | int, entrants: int, winner: str | None, cooling_until: int | None,
                holder: str | None, hold_until: int | None, live: list[str], disputed_by: str | None,
                pool: int) -> dict[str, Any]:
    """The part of a bounty that both the chain and its mirror hold, in the chain's terms (one definition)."""
    return {"status": int(status), "entrants": entrants, "winner": winner, "cooling_until": cooling_until,
            "holder": holder, "hold_until": hold_until, "live": sorted(live), "disputed_by": disputed_by,
            "pool": pool}


def state_label(status: Status, disputed: bool) -> str:
    """The issue label for a bounty's state; an open dispute shows as `disputed`."""
    return DISPUTED_LABEL if disputed else status.label


def status_after_accept(status: Status) -> Status:
    """The first accepted worker starts an open bounty."""
    return Status.STARTED if status is Status.OPEN else status


def status_after_withdraw(status: Status, entrants_left: int) -> Status:
    """The last worker to give the task back (before any PR) reopens it."""
    return Status.OPEN if status is Status.STARTED and entrants_left == 0 else status


def split_amounts(total: int, shares: list[int]) -> list[int]:
    """`total` divided by relative shares, each rounded down; the remainder goes to the first named."""
    whole = sum(shares)
    amounts = [total * share // whole for share in shares]
    amounts[0] += total - sum(amounts)
    return amounts


def refund_share(state: BountyState, contribution: int) -> int:
    """A funder's part of the refund: their contribution's share of it, rounded down; the last funder to withdraw
    takes what is left, so the funders' withdrawals add up to the refund exactly."""
    if state.funders == 1:
        return state.refund_total - state.refunded
    return contribution * state.refund_total // state.pool


def holds(state: BountyState, now: int) -> bool:
    """Exclusive: a holder whose hold has not expired."""
    return state.holder is not None and state.hold_until is not None and now < state.hold_until
