"""The Spec aggregate: a feature's spec-kit artifacts (spec, plan, tasks) and where it was published."""

from __future__ import annotations

import re
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.canonical import natural_id

FEATURE_ID = re.compile(r"^\d{3}-[a-z0-9]+(?:-[a-z0-9]+)*$")
SLUG_MAX = 50


def slugify(text: str) -> str:
    """Lower-case, non-alphanumerics to `-`, at most 50 characters (the spec-kit convention)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:SLUG_MAX].rstrip("-") or "feature"


def next_feature_id(existing: list[str], description: str) -> str:
    """NNN is the highest existing number plus one."""
    numbers = [int(f[:3]) for f in existing if FEATURE_ID.match(f)]
    return f"{max(numbers, default=0) + 1:03d}-{slugify(description)}"


def branch_name(feature_id: str) -> str:
    return f"feat/{feature_id}"


class Spec(Aggregate):
    @staticmethod
    def create_id(feature_id: str) -> UUID:
        return natural_id("spec", feature_id)

    @event("Specified")
    def __init__(self, feature_id: str, description: str, digest: str) -> None:
        self.feature_id = feature_id
        self.description = description
        self.digests: dict[str, str] = {"spec.md": digest}
        self.planned = False
        self.tasked = False
        self.task_count = 0
        self.published_as: str | None = None

    @event("Planned")
    def plan(self, digests: dict[str, str], tech_constraints: str | None) -> None:
        self.digests.update(digests)
        self.planned = True

    @event("Tasked")
    def task(self, digest: str, task_count: int) -> None:
        self.digests["tasks.md"] = digest
        self.tasked = True
        self.task_count = task_count

    @event("ArtifactRewritten")
    def rewrite(self, artifact: str, digest: str) -> None:
        self.digests[artifact] = digest

    @event("Published")
    def publish(self, issue_hash: str) -> None:
        self.published_as = issue_hash
