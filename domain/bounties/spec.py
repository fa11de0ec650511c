"""The Spec aggregate: a feature's spec-kit artifacts (spec, plan, tasks) and where it was published."""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import islice
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.canonical import natural_id
from domain.errors import Code, Code3Error

FEATURE_ID = re.compile(r"^\d{3}-[a-z0-9]+(?:-[a-z0-9]+)*$")
SLUG_MAX = 60  # a feature id is at most 64 characters: NNN, a dash, the short name
MAX_NUMBER = 999  # feature numbers stay three digits
# spec-kit's create-new-feature script drops these words (and words under three letters that are not acronyms)
_STOP = ("i a an the to for of in on at by with from is are was were be been being have has had do does did will would "
         "should could can may might must shall this that these those my your our their want need add get set")
STOP_WORDS = frozenset(_STOP.split(" "))


def short_name(description: str) -> str:
    """spec-kit's short name of a feature: its first three meaningful words (four when exactly four remain).

    Meaningful: not a stop word, and at least three letters long unless written as an acronym (all
    capitals) in the description: "Web AI agent project management" gives `web-ai-agent`. A description
    with no meaningful word falls back to its first three words; one with no word at all to `feature`.
    """
    words = re.sub(r"[^a-z0-9]", " ", description.lower()).split()
    written = set(re.findall(r"\w+", description))  # `\bWORD\b` matches where WORD is a whole \w+ run
    meaningful = list(islice((w for w in words if w not in STOP_WORDS and (len(w) >= 3 or w.upper() in written)), 5))
    chosen = meaningful[:4 if len(meaningful) == 4 else 3] if meaningful else words[:3]
    slug = ""
    for word in chosen:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > SLUG_MAX:
            break
        slug = candidate
    return slug or (chosen[0][:SLUG_MAX] if chosen else "feature")


def slugify(text: str) -> str:
    """The short name of `text` (kept under its old name for callers that slug a free text)."""
    return short_name(text)


def feature_number(name: str) -> int | None:
    """The NNN of a directory name that is a feature id, else None."""
    return int(name[:3]) if FEATURE_ID.fullmatch(name) else None


def next_number(used: Iterable[int]) -> int:
    """The number of the next feature: the highest used number plus one (spec-kit's rule), as long as it
    stays three digits. Numbers at the top (an explicit `999-x`) do not push ids past 999: the next is
    the one after the highest used number whose successor is free, and 001 when none is. Raises
    E_PRECONDITION when all 999 are taken."""
    taken = {n for n in used if 1 <= n <= MAX_NUMBER}
    for n in sorted(taken, reverse=True):
        if n + 1 <= MAX_NUMBER and n + 1 not in taken:
            return n + 1
    for n in range(1, MAX_NUMBER + 1):
        if n not in taken:
            return n
    raise Code3Error(Code.PRECONDITION, f"all feature numbers 001-{MAX_NUMBER} are taken under specs/",
                     "pass an explicit feature_id that reuses a number, or archive old features")


def next_feature_id(existing: Iterable[str], description: str) -> str:
    """`NNN-short-name` for a description, NNN from `next_number` over the feature ids in `existing`."""
    numbers = [n for n in map(feature_number, existing) if n is not None]
    return f"{next_number(numbers):03d}-{short_name(description)}"


TASK_LINE = re.compile(r"^- \[ \] T\d{3}", re.MULTILINE)


def count_tasks(tasks_md: str) -> int:
    """The tasks of a tasks.md (`- [ ] T001 …` lines): the effort accept_best_task weighs amounts by."""
    return len(TASK_LINE.findall(tasks_md))


def branch_name(feature_id: str) -> str:
    return f"feat/{feature_id}"


class Spec(Aggregate):

    class Specified(Aggregate.Created):
        feature_id: str
        description: str
        digest: str

    class Planned(Aggregate.Event):
        digests: dict[str, str]
        tech_constraints: str | None

    class Tasked(Aggregate.Event):
        digest: str
        task_count: int

    class ArtifactRewritten(Aggregate.Event):
        artifact: str
        digest: str

    class Published(Aggregate.Event):
        issue_hash: str
    @staticmethod
    def create_id(feature_id: str) -> UUID:
        return natural_id("spec", feature_id)

    @event(Specified)
    def __init__(self, feature_id: str, description: str, digest: str) -> None:
        self.feature_id = feature_id
        self.description = description
        self.digests: dict[str, str] = {"spec.md": digest}
        self.planned = False
        self.tasked = False
        self.task_count = 0
        self.published_as: str | None = None

    def plan_once(self, digests: dict[str, str], tech_constraints: str | None) -> bool:
        """Record the plan unless the feature is planned with these very files: a repeated or retried `plan`
        writes the same files and records nothing (the constraints only shape what the writer wrote)."""
        if self.planned and all(self.digests.get(name) == digest for name, digest in digests.items()):
            return False
        self.plan(digests=digests, tech_constraints=tech_constraints)
        return True

    @event(Planned)
    def plan(self, digests: dict[str, str], tech_constraints: str | None) -> None:
        self.digests.update(digests)
        self.planned = True

    def task_once(self, digest: str, task_count: int) -> bool:
        """Record the task list unless the feature is tasked with this very tasks.md (a repeat or a retry)."""
        if self.tasked and self.digests.get("tasks.md") == digest:
            return False
        self.task(digest=digest, task_count=task_count)
        return True

    @event(Tasked)
    def task(self, digest: str, task_count: int) -> None:
        self.digests["tasks.md"] = digest
        self.tasked = True
        self.task_count = task_count

    def rewrite_once(self, artifact: str, digest: str) -> bool:
        """Record an artifact rewritten unless its digest is the one recorded: rewriting a file with what it
        already holds is no change."""
        if self.digests.get(artifact) == digest:
            return False
        self.rewrite(artifact=artifact, digest=digest)
        return True

    @event(ArtifactRewritten)
    def rewrite(self, artifact: str, digest: str) -> None:
        self.digests[artifact] = digest

    def publish_once(self, issue_hash: str) -> bool:
        """Mark the spec published as `issue_hash` unless it already is (a resumed publish)."""
        if self.published_as == issue_hash:
            return False
        self.publish(issue_hash=issue_hash)
        return True

    @event(Published)
    def publish(self, issue_hash: str) -> None:
        self.published_as = issue_hash
