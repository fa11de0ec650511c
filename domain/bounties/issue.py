"""The Issue aggregate: one publish saga, keyed by its `issue_hash`, from request to metadata write-back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.canonical import natural_id
from domain.errors import Code, Code3Error
from domain.values import Amount


class Issue(Aggregate):
    """Each saga step is an event, so a retried publish resumes at the first step not yet recorded. Each step's
    rule (`open_once`, `link_bounty_once`, ...) says whether it still has something to record, so a step re-run
    on newer state (a retry, a racing process) records nothing twice."""

    class_version = 3  # a snapshot's state: 2, the amount became an integer; 3, the unfunded and superseded marks

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        state["amount"] = int(state["amount"])

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """Taken before a publish could be left unfunded: none was."""
        state.setdefault("unfunded_reason", None)
        state.setdefault("superseded_by", None)
        state.setdefault("reuses", None)

    class PublishRequested(Aggregate.Created):
        class_version = 2
        issue_hash: str
        repo: str
        feature_id: str
        spec_path: str
        spec_digest: str
        amount: Amount
        asset: str
        network: str
        labels: list[str]
        assignees: list[str]
        effort: int
        deadline: int | None = None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """Stored while the amount travelled as its string of digits (parse_amount had checked it)."""
            state["amount"] = int(state["amount"])

    class OpeningClaimed(Aggregate.Event):
        owner: str
        until: float

    class Opened(Aggregate.Event):
        number: int
        url: str
        task_id: str

    class BountyLinked(Aggregate.Event):
        bounty_id: str

    class MetadataWritten(Aggregate.Event):
        body_digest: str

    class LabelsMirrored(Aggregate.Event):
        labels: list[str]

    class Unfunded(Aggregate.Event):
        """The chain refused to create the bounty after the forge issue was opened (a race, a node error). It carries
        what a reader of the log shows (the board's unfunded issues) beside the chain's refusal."""
        reason: str
        task_id: str | None
        url: str | None
        amount: int
        asset: str

    class Superseded(Aggregate.Event):
        """An unfunded publish gave the feature's claim, and its forge issue, to a publish with other terms."""
        by: str

    class TookOver(Aggregate.Event):
        """This publish reuses (edits) the forge issue of `previous`, an unfunded publish of the same feature."""
        previous: str

    @staticmethod
    def create_id(issue_hash: str) -> UUID:
        return natural_id("issue", issue_hash)

    @event(PublishRequested)
    def __init__(
        self,
        issue_hash: str,
        repo: str,
        feature_id: str,
        spec_path: str,
        spec_digest: str,
        amount: Amount,
        asset: str,
        network: str,
        labels: list[str],
        assignees: list[str],
        effort: int,
        deadline: int | None = None,
    ) -> None:
        self.issue_hash = issue_hash
        self.repo = repo
        self.feature_id = feature_id
        self.spec_path = spec_path
        self.spec_digest = spec_digest
        self.amount = amount
        self.asset = asset
        self.network = network
        self.labels = labels
        self.assignees = assignees
        self.effort = effort
        self.deadline = deadline
        self.number: int | None = None
        self.url: str | None = None
        self.task_id: str | None = None
        self.bounty_id: str | None = None
        self.metadata_written = False
        self.mirrored_labels: list[str] = []
        self.opening_owner: str | None = None
        self.opening_until = 0.0
        self.unfunded_reason: str | None = None
        self.superseded_by: str | None = None
        self.reuses: str | None = None

    @property
    def unfunded(self) -> bool:
        """The issue is (or was meant to be) public, but no bounty backs it: the chain refused the create."""
        return self.unfunded_reason is not None and self.bounty_id is None and self.superseded_by is None

    @property
    def releasable(self) -> bool:
        """The feature's claim on these terms is released once the chain refused their bounty: a publish of the
        same feature with other terms may take the claim and the forge issue over (`supersede_once`)."""
        return self.unfunded

    def claim_opening_once(self, owner: str, now: float, until: float, alive: Callable[[str], bool]) -> bool:
        """Claim the turn to open the issue and create the bounty unless the bounty is linked or a live claim
        (`owner`'s own included) holds it; a claim whose owner died or let it expire is taken over."""
        claimant = self.opening_owner
        held = claimant is not None and self.opening_until > now and (claimant == owner or alive(claimant))
        if self.bounty_id is not None or held:
            return False
        self.claim_opening(owner=owner, until=until)
        return True

    def open_once(self, number: int, url: str, task_id: str) -> bool:
        """Record the forge issue unless a resumed or racing publish recorded it first."""
        if self.number is not None:
            return False
        self.open(number=number, url=url, task_id=task_id)
        return True

    def link_bounty_once(self, bounty_id: str) -> bool:
        if self.bounty_id is not None:
            return False
        self.link_bounty(bounty_id=bounty_id)
        return True

    def write_metadata_once(self, body_digest: str) -> bool:
        if self.metadata_written:
            return False
        self.write_metadata(body_digest=body_digest)
        return True

    @event(OpeningClaimed)
    def claim_opening(self, owner: str, until: float) -> None:
        """One publish at a time opens the forge issue: racing processes serialise on this event (the
        aggregate's version), and the others wait for `Opened` or take over a claim whose owner died."""
        self.opening_owner, self.opening_until = owner, until

    @event(Opened)
    def open(self, number: int, url: str, task_id: str) -> None:
        self.number, self.url, self.task_id = number, url, task_id

    @event(BountyLinked)
    def link_bounty(self, bounty_id: str) -> None:
        self.bounty_id = bounty_id

    @event(MetadataWritten)
    def write_metadata(self, body_digest: str) -> None:
        self.metadata_written = True

    def mark_unfunded_once(self, reason: str) -> bool:
        """Record that the chain refused the bounty of an opened issue, unless a bounty is linked (the chain took a
        create after all) or the mark is there already."""
        if self.bounty_id is not None or self.superseded_by is not None or self.unfunded_reason is not None:
            return False
        self.mark_unfunded(reason=reason, task_id=self.task_id, url=self.url, amount=self.amount, asset=self.asset)
        return True

    def supersede_once(self, by: str) -> bool:
        """Give the feature's claim to the publish `by` (its issue_hash), once: only an unfunded publish gives it,
        and to one publish only (two corrections racing: the second is refused, and reuses the first's)."""
        if self.superseded_by == by:
            return False
        if not self.releasable:
            taken = f"taken over by {self.superseded_by}" if self.superseded_by else "funded or still publishing"
            raise Code3Error(Code.IDEMPOTENT_REJECTED,
                             f"feature {self.feature_id} was published as {self.url or self.issue_hash} ({taken})",
                             "reuse the existing issue and bounty; a changed spec or amount is a new feature_id")
        self.supersede(by=by)
        return True

    def take_over_once(self, previous: str) -> bool:
        if self.reuses is not None or self.number is not None:
            return False
        self.take_over(previous=previous)
        return True

    @event(Unfunded)
    def mark_unfunded(self, reason: str, task_id: str | None, url: str | None, amount: int, asset: str) -> None:
        self.unfunded_reason = reason

    @event(Superseded)
    def supersede(self, by: str) -> None:
        self.superseded_by = by

    @event(TookOver)
    def take_over(self, previous: str) -> None:
        self.reuses = previous

    def mirror_labels_once(self, labels: list[str]) -> bool:
        """Record the labels the forge now shows unless they are the ones recorded: every sync mirrors the state
        label, and most find nothing new."""
        if self.mirrored_labels == labels:
            return False
        self.mirror_labels(labels=labels)
        return True

    @event(LabelsMirrored)
    def mirror_labels(self, labels: list[str]) -> None:
        self.mirrored_labels = labels
