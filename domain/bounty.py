"""The Bounty aggregate: a mirror of one on-chain bounty, born from and moved only by observed chain events."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.canonical import natural_id
from domain.chain_events import ChainEvent
from domain.contract import Mode, Status, mirror_view, status_after_accept, status_after_withdraw


class Bounty(Aggregate):
    """Every event carries its chain coordinates; observing the same chain event twice records nothing."""

    class Created(Aggregate.Created):
        """v2 adds the terms chosen at publish: deadline, mode and hold time (BountyCreated carries them)."""

        class_version = 2
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
        coords: dict[str, Any]

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """Stored before modes and deadlines: several workers (today's contest), no deadline, no hold."""
            state.update(deadline=None, mode=Mode.CONTEST.label, hold_seconds=0)

    class Accepted(Aggregate.Event):
        """v2 adds `hold_until` (exclusive: the end of the worker's hold; None in a contest)."""

        class_version = 2
        worker: str
        hold_until: int | None
        coords: dict[str, Any]

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["hold_until"] = None

    @staticmethod
    def create_id(bounty_id: str) -> UUID:
        return natural_id("bounty", bounty_id)

    class Snapshot(Aggregate.Snapshot):
        """A snapshot's state comes back from JSON, where the status was stored as its int: a Status again
        (the store snapshots a bounty every 100 events; see adapters.event_store)."""

        def mutate(self, _: None) -> Any:
            bounty = super().mutate(_)
            bounty.status = Status(bounty.status)
            return bounty

    @event(Created)
    def __init__(
        self,
        bounty_id: str,
        sponsor: str,
        repo: str,
        issue_hash: str,
        asset: str,
        amount: int,
        cooling_period: int,
        created_at: int,
        deadline: int | None,
        mode: str,
        hold_seconds: int,
        coords: dict[str, Any],
    ) -> None:
        self.bounty_id = bounty_id
        self.sponsor = sponsor
        self.repo = repo
        self.issue_hash = issue_hash
        self.asset = asset
        self.amount = amount
        self.cooling_period = cooling_period
        self.created_at = created_at
        self.deadline = deadline
        self.mode = mode
        self.hold_seconds = hold_seconds
        self.status = Status.OPEN
        self.workers: list[str] = []
        self.holder: str | None = None
        self.hold_until: int | None = None
        self.submissions: dict[str, dict[str, str]] = {}
        self.winner: str | None = None
        self.merged_pr: str | None = None
        self.merged_at: int | None = None
        self.cooling_until: int | None = None
        self.paid_tx: str | None = None
        self.deliveries: list[str] = []
        self.claimable = False
        self.seen: list[str] = [_key(coords)]

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
            coords=ev.coords,
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
        elif ev.type == "PRSubmitted":
            self._pr_submitted(worker=d["worker"], pr_url=d["pr_url"], commit_sha=d["commit_sha"], coords=c)
        elif ev.type == "BountyMerged":
            self._merged(winner=d["winner"], pr_url=d["pr_url"], merged_at=int(d["merged_at"]), coords=c)
        elif ev.type == "CoolingStarted":
            self._cooling_started(cooling_until=int(d["cooling_until"]), coords=c)
        elif ev.type == "BountyPaid":
            self._paid(winner=d["winner"], amount=int(d["amount"]), paid_at=int(d["paid_at"]), coords=c)
        elif ev.type == "BountyCancelled":
            self._cancelled(refund_to=d["refund_to"], disputed=bool(d["disputed"]), coords=c)
        else:
            raise ValueError(f"unknown chain event type {ev.type!r}")
        return True

    @event(Accepted)
    def _accepted(self, worker: str, coords: dict[str, Any], hold_until: int | None = None) -> None:
        if self.exclusive:  # the chain's rule: the new holder replaces an expired or released one
            self.workers, self.holder, self.hold_until = [worker], worker, hold_until
        else:
            self.workers.append(worker)
        self.status = status_after_accept(self.status)
        self.seen.append(_key(coords))

    @event("Withdrawn")
    def _withdrawn(self, worker: str, coords: dict[str, Any]) -> None:
        if worker in self.workers:
            self.workers.remove(worker)
        if self.holder == worker:
            self.holder, self.hold_until = None, None
        self.status = status_after_withdraw(self.status, self.workers)
        self.seen.append(_key(coords))

    @event("PRSubmitted")
    def _pr_submitted(self, worker: str, pr_url: str, commit_sha: str, coords: dict[str, Any]) -> None:
        self.submissions[worker] = {"pr_url": pr_url, "commit_sha": commit_sha, "tx_hash": coords["tx_hash"]}
        self.status = Status.PR_SUBMITTED
        self.seen.append(_key(coords))

    @event("Merged")
    def _merged(self, winner: str, pr_url: str, merged_at: int, coords: dict[str, Any]) -> None:
        self.winner, self.merged_pr, self.merged_at = winner, pr_url, merged_at
        self.status = Status.MERGED
        self.seen.append(_key(coords))

    @event("CoolingStarted")
    def _cooling_started(self, cooling_until: int, coords: dict[str, Any]) -> None:
        self.cooling_until = cooling_until
        self.status = Status.COOLING_DOWN
        self.seen.append(_key(coords))

    @event("Paid")
    def _paid(self, winner: str, amount: int, paid_at: int, coords: dict[str, Any]) -> None:
        self.status = Status.PAID
        self.paid_tx = coords["tx_hash"]
        self.seen.append(_key(coords))

    @event("Cancelled")
    def _cancelled(self, refund_to: str, disputed: bool, coords: dict[str, Any]) -> None:
        self.status = Status.CANCELLED
        self.seen.append(_key(coords))

    def comparable(self) -> dict[str, Any]:
        """The part of the state the chain also holds, in the chain's terms (defined once, in domain.contract)."""
        return mirror_view(self.status, self.workers, self.winner, self.cooling_until, self.holder, self.hold_until)

    def reconcile(self, chain: dict[str, Any]) -> bool:
        """Adopt the chain's state when the mirror disagrees; the disagreement itself is recorded."""
        mirror = self.comparable()
        if mirror == chain:
            return False
        self._reconciled(mirror=mirror, chain=chain)
        return True

    @event("Reconciled")
    def _reconciled(self, mirror: dict[str, Any], chain: dict[str, Any]) -> None:
        self.status = Status(chain["status"])
        self.workers = list(chain["workers"])
        self.winner = chain["winner"]
        self.cooling_until = chain["cooling_until"]
        self.holder = chain.get("holder")  # recorded before holds existed: absent
        self.hold_until = chain.get("hold_until")

    @event("BecameClaimable")
    def note_claimable(self, at: int) -> None:
        """Cooling ended and no key here can claim for the winner: the winner must claim themselves."""
        self.claimable = True

    @event("MergeReported")
    def report_merge(self, delivery_id: str, pr_url: str) -> None:
        """A merge webhook delivery was handled: a redelivery of the same id has no second effect."""
        self.deliveries.append(delivery_id)

    def has_delivery(self, delivery_id: str) -> bool:
        return delivery_id in self.deliveries

    def submission_of(self, worker: str) -> dict[str, str] | None:
        return self.submissions.get(worker)


def _key(coords: dict[str, Any]) -> str:
    return f"{coords['version']}:{coords['index']}"
