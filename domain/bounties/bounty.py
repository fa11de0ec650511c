"""The Bounty aggregate: a mirror of one on-chain bounty, born from and moved only by observed chain events.

Each chain event becomes one event class nested here (`Bounty.Merged`, `Bounty.Paid`, ...), carrying its chain
coordinates; observing the same chain event twice records nothing. The classes' names are the stored topics:
renaming one needs `eventsourcing.utils.register_topic`, and a changed shape a `class_version` and an upcast.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event
from eventsourcing.domain import Snapshot as AggregateSnapshot  # what Aggregate.Snapshot is, named as a type

from domain.bounties.chain_events import ChainCoords, ChainEvent, coords_key
from domain.bounties.contract import (
    DEFAULT_DISPUTE_PERIOD,
    Mode,
    Rejection,
    Status,
    mirror_view,
    status_after_accept,
    status_after_withdraw,
)
from domain.canonical import natural_id

LIVE, CLOSED = "live", "closed"  # a submission's state in the mirror (SubmissionState on chain)


class Bounty(Aggregate):
    """Every event carries its chain coordinates; observing the same chain event twice records nothing."""

    class Created(Aggregate.Created):
        """v2 added the terms chosen at publish (deadline, mode, hold time); v3 the bounty's resolver (fixed at
        creation), the forge's repository id and the dispute period."""

        class_version = 3
        bounty_id: str
        sponsor: str
        repo: str
        issue_hash: str
        asset: str
        amount: int
        cooling_period: int
        created_at: int
        deadline: int | None
        mode: str
        hold_seconds: int
        coords: ChainCoords
        resolver: str | None
        repo_id: int
        dispute_period: int

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """Stored before modes and deadlines: several workers (today's contest), no deadline, no hold."""
            state.update(deadline=None, mode=Mode.CONTEST.label, hold_seconds=0)

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            """Stored by the v1 contract: the resolver is the registry's (taken at its first resolver-only step), the
            repository is compared by the id the forge gives its name, the default dispute period."""
            state.update(resolver=None, repo_id=0, dispute_period=DEFAULT_DISPUTE_PERIOD)

    class Accepted(Aggregate.Event):
        """v2 adds `hold_until` (exclusive: the end of the worker's hold; None in a contest)."""

        class_version = 2
        worker: str
        hold_until: int | None
        coords: ChainCoords

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["hold_until"] = None

    class Withdrawn(Aggregate.Event):
        worker: str
        coords: ChainCoords

    class Funded(Aggregate.Event):
        funder: str
        amount: int
        pool: int
        nonce: int
        coords: ChainCoords

    class PRSubmitted(Aggregate.Event):
        worker: str
        pr_url: str
        commit_sha: str
        coords: ChainCoords

    class SubmissionRejected(Aggregate.Event):
        worker: str
        pr_url: str
        reason: int
        coords: ChainCoords

    class Merged(Aggregate.Event):
        """v2 adds what the resolver read on the forge: the author's forge id, the repository id and the PR number
        (the PR's canonical identity, which settles one bounty only)."""

        class_version = 2
        winner: str
        pr_url: str
        merged_at: int
        coords: ChainCoords
        author_id: int
        repo_id: int
        pr_number: int

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state.update(author_id=0, repo_id=0, pr_number=0)

    class CoolingStarted(Aggregate.Event):
        cooling_until: int
        coords: ChainCoords

    class DisputeOpened(Aggregate.Event):
        by: str
        reason: str
        rule_by: int
        coords: ChainCoords

    class DisputeRuled(Aggregate.Event):
        claimant: str
        share_bps: int
        paid: int
        refunded: int
        coords: ChainCoords

    class SplitSet(Aggregate.Event):
        recipients: list[str]
        shares: list[int]
        coords: ChainCoords

    class Paid(Aggregate.Event):
        """v2: a payout may be split, so it names each recipient and amount (v1 paid the winner the whole amount)."""

        class_version = 2
        winner: str
        amount: int
        paid_at: int
        coords: ChainCoords
        recipients: list[str]
        amounts: list[int]

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state.update(recipients=[state["winner"]], amounts=[state["amount"]])

    class Cancelled(Aggregate.Event):
        """The bounty ended unpaid (or partly, by a ruling): `amount` is refunded to its funders, each withdrawing
        their share. v2 adds `amount`; v1 (None) refunded the whole pool to the sponsor at once."""

        class_version = 2
        refund_to: str
        disputed: bool
        coords: ChainCoords
        amount: int | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["amount"] = None

    class RefundWithdrawn(Aggregate.Event):
        funder: str
        amount: int
        coords: ChainCoords

    class Tipped(Aggregate.Event):
        tipper: str
        to: str
        amount: int
        nonce: int
        coords: ChainCoords

    class Reconciled(Aggregate.Event):
        mirror: dict[str, Any]
        chain: dict[str, Any]

    class BecameClaimable(Aggregate.Event):
        at: int

    class MergeReported(Aggregate.Event):
        delivery_id: str
        pr_url: str

    @staticmethod
    def create_id(bounty_id: str) -> UUID:
        return natural_id("bounty", bounty_id)

    class Snapshot(AggregateSnapshot):
        """A snapshot's state comes back from JSON, where the status was stored as its int: a Status again (the
        store snapshots a bounty every 100 events; see adapters.event_store). A snapshot taken before v2 of the
        contract lacks the newer fields: they take the values its events would have given."""

        def mutate(self, _: None) -> Bounty:
            bounty = super().mutate(_)
            if not isinstance(bounty, Bounty):  # its topic names Bounty (or the module Bounty was moved from)
                raise TypeError(f"a bounty's snapshot restored a {type(bounty).__name__}")
            bounty.status = Status(bounty.status)
            for name, value in _V2_DEFAULTS.items():
                if not hasattr(bounty, name):
                    setattr(bounty, name, value() if callable(value) else value)
            if not hasattr(bounty, "pool"):
                bounty.pool = bounty.amount
                bounty.entrants = len(bounty.workers)
            for sub in bounty.submissions.values():
                sub.setdefault("state", LIVE)
            return bounty

    @event(Created)
    def __init__(self, bounty_id: str, sponsor: str, repo: str, issue_hash: str, asset: str, amount: int,
                 cooling_period: int, created_at: int, deadline: int | None, mode: str, hold_seconds: int,
                 coords: ChainCoords, resolver: str | None, repo_id: int, dispute_period: int) -> None:
        self.bounty_id = bounty_id
        self.sponsor = sponsor
        self.resolver = resolver
        self.repo = repo
        self.repo_id = repo_id
        self.issue_hash = issue_hash
        self.asset = asset
        self.amount = amount  # the amount published (the one in issue_hash); the pool adds later funds
        self.pool = amount
        self.funders: dict[str, int] = {sponsor: amount}
        self.cooling_period = cooling_period
        self.dispute_period = dispute_period
        self.created_at = created_at
        self.deadline = deadline
        self.mode = mode
        self.hold_seconds = hold_seconds
        self.status = Status.OPEN
        self.workers: list[str] = []
        self.entrants = 0
        self.holder: str | None = None
        self.hold_until: int | None = None
        self.submissions: dict[str, dict[str, str]] = {}
        self.rejections: list[dict[str, Any]] = []
        self.winner: str | None = None
        self.merged_pr: str | None = None
        self.merged_pr_number: int | None = None
        self.author_id: int | None = None
        self.merged_at: int | None = None
        self.cooling_until: int | None = None
        self.dispute: dict[str, Any] | None = None
        self.rulings: list[dict[str, Any]] = []
        self.split: dict[str, Any] | None = None
        self.paid_tx: str | None = None
        self.payouts: list[dict[str, Any]] = []
        self.refund_total = 0
        self.refunds: dict[str, int] = {}
        self.tips: list[dict[str, Any]] = []
        self.deliveries: list[str] = []
        self.claimable = False
        self.seen: list[str] = [coords_key(coords)]

    @classmethod
    def from_chain(cls, ev: ChainEvent) -> Bounty:
        if ev.type != "BountyCreated":
            raise ValueError(f"a Bounty is born from BountyCreated, not {ev.type}")
        d = ev.data
        # an embedded ledger's event from before modes and deadlines has none of the three: a contest
        deadline = d.get("deadline")
        return cls(
            bounty_id=str(d["bounty_id"]), sponsor=d["sponsor"], repo=d["repo"], issue_hash=d["issue_hash"],
            asset=d["asset"], amount=int(d["amount"]), cooling_period=int(d["cooling_period"]),
            created_at=int(d["created_at"]), deadline=None if deadline is None else int(deadline),
            mode=Mode(int(d.get("mode", Mode.CONTEST))).label, hold_seconds=int(d.get("hold_seconds", 0)),
            coords=ev.coords, resolver=d.get("resolver") or None, repo_id=int(d.get("repo_id", 0)),
            dispute_period=int(d.get("dispute_period", DEFAULT_DISPUTE_PERIOD)),
        )

    @property
    def exclusive(self) -> bool:
        return self.mode == Mode.EXCLUSIVE.label

    def observe(self, ev: ChainEvent) -> bool:
        """Record a chain event unless it was recorded already; True when something was recorded."""
        if ev.key in self.seen or ev.type == "BountyCreated":
            return False
        d, c = ev.data, ev.coords
        if ev.type == "BountyAccepted":
            self._accepted(worker=d["worker"], hold_until=int(d.get("hold_until", 0)) or None, coords=c)
        elif ev.type == "TaskWithdrawn":
            self._withdrawn(worker=d["worker"], coords=c)
        elif ev.type == "BountyFunded":
            self._funded(funder=d["funder"], amount=int(d["amount"]), pool=int(d["pool"]), nonce=int(d["nonce"]),
                         coords=c)
        elif ev.type == "PRSubmitted":
            self._pr_submitted(worker=d["worker"], pr_url=d["pr_url"], commit_sha=d["commit_sha"], coords=c)
        elif ev.type == "SubmissionRejected":
            self._submission_rejected(worker=d["worker"], pr_url=d["pr_url"], reason=int(d["reason"]), coords=c)
        elif ev.type == "BountyMerged":
            self._merged(winner=d["winner"], pr_url=d["pr_url"], merged_at=int(d["merged_at"]), coords=c,
                         author_id=int(d.get("author_id", 0)), repo_id=int(d.get("repo_id", 0)),
                         pr_number=int(d.get("pr_number", 0)))
        elif ev.type == "CoolingStarted":
            self._cooling_started(cooling_until=int(d["cooling_until"]), coords=c)
        elif ev.type == "DisputeOpened":
            self._dispute_opened(by=d["by"], reason=d["reason"], rule_by=int(d["rule_by"]), coords=c)
        elif ev.type == "DisputeRuled":
            self._dispute_ruled(claimant=d["claimant"], share_bps=int(d["share_bps"]), paid=int(d["paid"]),
                                refunded=int(d["refunded"]), coords=c)
        elif ev.type == "SplitSet":
            self._split_set(recipients=list(d["recipients"]), shares=[int(s) for s in d["shares"]], coords=c)
        elif ev.type == "BountyPaid":
            recipients = list(d.get("recipients") or [d["winner"]])
            amounts = [int(a) for a in (d.get("amounts") or [d["amount"]])]
            self._paid(winner=d["winner"], amount=int(d["amount"]), paid_at=int(d["paid_at"]), coords=c,
                       recipients=recipients, amounts=amounts)
        elif ev.type == "BountyCancelled":
            self._cancelled(refund_to=d["refund_to"], disputed=bool(d["disputed"]), coords=c, amount=int(d["amount"]))
        elif ev.type == "RefundWithdrawn":
            self._refund_withdrawn(funder=d["funder"], amount=int(d["amount"]), coords=c)
        elif ev.type == "Tipped":
            self._tipped(tipper=d["tipper"], to=d["to"], amount=int(d["amount"]), nonce=int(d["nonce"]), coords=c)
        else:
            raise ValueError(f"unknown chain event type {ev.type!r}")
        return True

    @event(Accepted)
    def _accepted(self, worker: str, coords: ChainCoords, hold_until: int | None = None) -> None:
        if self.exclusive:  # the chain's rule: the new holder replaces an expired or released one
            self.workers, self.holder, self.hold_until, self.entrants = [worker], worker, hold_until, 1
        else:
            self.workers.append(worker)
            self.entrants += 1
        self.status = status_after_accept(self.status)
        self.seen.append(coords_key(coords))

    @event(Withdrawn)
    def _withdrawn(self, worker: str, coords: ChainCoords) -> None:
        if worker in self.workers:
            self.workers.remove(worker)
        if self.holder == worker:
            self.holder, self.hold_until = None, None
        self.entrants = max(0, self.entrants - 1)
        self.status = status_after_withdraw(self.status, self.entrants)
        self.seen.append(coords_key(coords))

    @event(Funded)
    def _funded(self, funder: str, amount: int, pool: int, nonce: int, coords: ChainCoords) -> None:
        self.funders[funder] = self.funders.get(funder, 0) + amount
        self.pool = pool
        self.seen.append(coords_key(coords))

    @event(PRSubmitted)
    def _pr_submitted(self, worker: str, pr_url: str, commit_sha: str, coords: ChainCoords) -> None:
        self.submissions[worker] = {"pr_url": pr_url, "commit_sha": commit_sha, "tx_hash": coords["tx_hash"],
                                    "state": LIVE}
        self.status = Status.PR_SUBMITTED
        self.seen.append(coords_key(coords))

    @event(SubmissionRejected)
    def _submission_rejected(self, worker: str, pr_url: str, reason: int, coords: ChainCoords) -> None:
        if reason == Rejection.CLOSED and worker in self.submissions:
            self.submissions[worker]["state"] = CLOSED
        else:
            self.submissions.pop(worker, None)
        self.rejections.append({"worker": worker, "pr_url": pr_url, "reason": Rejection(reason).label,
                                "tx_hash": coords["tx_hash"]})
        if not self.live_workers():
            self.status = Status.STARTED
        self.seen.append(coords_key(coords))

    @event(Merged)
    def _merged(self, winner: str, pr_url: str, merged_at: int, coords: ChainCoords, author_id: int = 0,
                repo_id: int = 0, pr_number: int = 0) -> None:
        self.winner, self.merged_pr, self.merged_at = winner, pr_url, merged_at
        self.merged_pr_number, self.author_id = pr_number or None, author_id or None
        self.dispute = None  # a worker's dispute ends with the merge
        self.status = Status.MERGED
        self.seen.append(coords_key(coords))

    @event(CoolingStarted)
    def _cooling_started(self, cooling_until: int, coords: ChainCoords) -> None:
        self.cooling_until = cooling_until
        self.status = Status.COOLING_DOWN
        self.seen.append(coords_key(coords))

    @event(DisputeOpened)
    def _dispute_opened(self, by: str, reason: str, rule_by: int, coords: ChainCoords) -> None:
        self.dispute = {"by": by, "reason": reason, "rule_by": rule_by, "tx_hash": coords["tx_hash"]}
        self.seen.append(coords_key(coords))

    @event(DisputeRuled)
    def _dispute_ruled(self, claimant: str, share_bps: int, paid: int, refunded: int, coords: ChainCoords) -> None:
        ruled = {"claimant": claimant, "share_bps": share_bps, "paid": paid, "refunded": refunded,
                 "tx_hash": coords["tx_hash"]}
        if self.dispute is not None:
            ruled.update(by=self.dispute["by"], reason=self.dispute["reason"])
        self.rulings.append(ruled)
        self.dispute = None
        self.seen.append(coords_key(coords))

    @event(SplitSet)
    def _split_set(self, recipients: list[str], shares: list[int], coords: ChainCoords) -> None:
        self.split = {"recipients": list(recipients), "shares": list(shares)}
        self.seen.append(coords_key(coords))

    @event(Paid)
    def _paid(self, winner: str, amount: int, paid_at: int, coords: ChainCoords, recipients: list[str] | None = None,
              amounts: list[int] | None = None) -> None:
        self.status = Status.PAID
        self.paid_tx = coords["tx_hash"]
        self.dispute = None
        self.payouts = [{"to": to, "amount": paid}
                        for to, paid in zip(recipients or [winner], amounts or [amount], strict=True)]
        self.seen.append(coords_key(coords))

    @event(Cancelled)
    def _cancelled(self, refund_to: str, disputed: bool, coords: ChainCoords, amount: int | None = None) -> None:
        if self.status is not Status.PAID:  # a ruling that pays part and refunds the rest leaves the bounty paid
            self.status = Status.CANCELLED
        self.dispute = None
        if amount is None:  # the v1 contract paid it all back to the sponsor in the same transaction
            self.refund_total = self.pool
            self.refunds[refund_to] = self.pool
        else:
            self.refund_total = amount
        self.seen.append(coords_key(coords))

    @event(RefundWithdrawn)
    def _refund_withdrawn(self, funder: str, amount: int, coords: ChainCoords) -> None:
        self.refunds[funder] = self.refunds.get(funder, 0) + amount
        self.seen.append(coords_key(coords))

    @event(Tipped)
    def _tipped(self, tipper: str, to: str, amount: int, nonce: int, coords: ChainCoords) -> None:
        self.tips.append({"tipper": tipper, "to": to, "amount": amount, "nonce": nonce, "tx_hash": coords["tx_hash"]})
        self.seen.append(coords_key(coords))

    def live_workers(self) -> list[str]:
        return sorted(w for w, s in self.submissions.items() if s.get("state", LIVE) == LIVE)

    def comparable(self) -> dict[str, Any]:
        """The part of the state the chain also holds, in the chain's terms (defined once, in the contract module)."""
        return mirror_view(self.status, self.entrants, self.winner, self.cooling_until, self.holder, self.hold_until,
                           self.live_workers(), self.dispute["by"] if self.dispute else None, self.pool)

    def reconcile(self, chain: dict[str, Any], entrants: list[str] | None = None) -> bool:
        """Adopt the chain's state when the mirror disagrees; the disagreement itself is recorded. `entrants`: the
        mirror's workers the chain confirms (its view gives a count; the names come from its events)."""
        mirror = self.comparable()
        if mirror == chain:
            return False
        self._reconciled(mirror=mirror, chain={**chain, "entrant_list": entrants} if entrants is not None else chain)
        return True

    @event(Reconciled)
    def _reconciled(self, mirror: dict[str, Any], chain: dict[str, Any]) -> None:
        self.status = Status(chain["status"])
        self.winner = chain["winner"]
        self.cooling_until = chain["cooling_until"]
        self.holder = chain.get("holder")  # recorded before holds existed: absent
        self.hold_until = chain.get("hold_until")
        if "workers" in chain:  # recorded by the v1 contract's mirror
            self.workers = list(chain["workers"])
            self.entrants = len(self.workers)
            return
        self.entrants = int(chain["entrants"])
        if chain.get("entrant_list") is not None:
            self.workers = list(chain["entrant_list"])
        self.pool = int(chain["pool"])
        live = set(chain["live"])
        for worker, sub in self.submissions.items():
            sub["state"] = LIVE if worker in live else CLOSED
        if chain["disputed_by"] is None:
            self.dispute = None
        elif self.dispute is None or self.dispute["by"] != chain["disputed_by"]:
            self.dispute = {"by": chain["disputed_by"], "reason": "", "rule_by": None, "tx_hash": None}

    def note_claimable_once(self, at: int) -> bool:
        """Record that the winner must claim unless it is noted already: every scheduler tick finds a cooled bounty
        whose winner's key is not here, and says so once."""
        if self.claimable:
            return False
        self.note_claimable(at=at)
        return True

    @event(BecameClaimable)
    def note_claimable(self, at: int) -> None:
        """Cooling ended and no key here can claim for the winner: the winner must claim themselves."""
        self.claimable = True

    @event(MergeReported)
    def report_merge(self, delivery_id: str, pr_url: str) -> None:
        """A merge webhook delivery was handled: a redelivery of the same id has no second effect."""
        self.deliveries.append(delivery_id)

    def has_delivery(self, delivery_id: str) -> bool:
        return delivery_id in self.deliveries

    def submission_of(self, worker: str) -> dict[str, str] | None:
        return self.submissions.get(worker)

    def live_submission_of(self, worker: str) -> dict[str, str] | None:
        found = self.submissions.get(worker)
        return found if found is not None and found.get("state", LIVE) == LIVE else None


# what a snapshot taken before the v2 contract lacks (see Snapshot.mutate)
_V2_DEFAULTS: dict[str, Any] = {
    "resolver": None, "repo_id": 0, "dispute_period": DEFAULT_DISPUTE_PERIOD, "rejections": list,
    "merged_pr_number": None, "author_id": None, "dispute": None, "rulings": list, "split": None, "payouts": list,
    "refund_total": 0, "refunds": dict, "tips": list, "funders": dict,
}




__all__ = ["CLOSED", "LIVE", "Bounty"]
