"""The Bounty aggregate: a mirror of one on-chain bounty, born from and moved only by observed chain events."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.canonical import natural_id
from domain.chain_events import ChainEvent
from domain.contract import Status


class Bounty(Aggregate):
    """Every event carries its chain coordinates; observing the same chain event twice records nothing."""

    @staticmethod
    def create_id(bounty_id: str) -> UUID:
        return natural_id("bounty", bounty_id)

    @event("Created")
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
        self.status = Status.OPEN
        self.workers: list[str] = []
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
        return cls(
            bounty_id=str(d["bounty_id"]), sponsor=d["sponsor"], repo=d["repo"], issue_hash=d["issue_hash"],
            asset=d["asset"], amount=int(d["amount"]), cooling_period=int(d["cooling_period"]),
            created_at=int(d["created_at"]), coords=ev.coords,
        )

    def observe(self, ev: ChainEvent) -> bool:
        """Record a chain event unless it was recorded already; True when something was recorded."""
        if ev.key in self.seen or ev.type == "BountyCreated":
            return False
        d, c = ev.data, ev.coords
        if ev.type == "BountyAccepted":
            self._accepted(worker=d["worker"], coords=c)
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

    @event("Accepted")
    def _accepted(self, worker: str, coords: dict[str, Any]) -> None:
        self.workers.append(worker)
        if self.status is Status.OPEN:
            self.status = Status.STARTED
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
        """The part of the state the chain also holds, in the chain's terms."""
        return {"status": int(self.status), "workers": sorted(self.workers), "winner": self.winner,
                "cooling_until": self.cooling_until}

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
