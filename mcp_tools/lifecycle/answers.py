"""What the lifecycle tools answer: each tool's output schema (MCP structured output), declared once.

The handlers return these dicts; the MCP front publishes them as `outputSchema` and checks every answer
against them, so an undeclared field is caught instead of reaching a client.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from pydantic import ConfigDict, with_config

STRICT = ConfigDict(extra="forbid")


@with_config(STRICT)
class SpecPaths(TypedDict):
    spec: str
    dir: str


@with_config(STRICT)
class SpecifyAnswer(TypedDict):
    success: bool
    feature_id: str
    paths: SpecPaths


@with_config(STRICT)
class PlanPaths(TypedDict):
    plan: str
    research: str
    data_model: str
    contracts: str
    quickstart: str


@with_config(STRICT)
class PlanAnswer(TypedDict):
    success: bool
    paths: PlanPaths


@with_config(STRICT)
class TasksAnswer(TypedDict):
    success: bool
    path: str


@with_config(STRICT)
class IssueRefAnswer(TypedDict):
    url: str
    number: int
    issue_hash: str


@with_config(STRICT)
class BountyRefAnswer(TypedDict):
    bounty_id: str


@with_config(STRICT)
class PublishAnswer(TypedDict):
    success: bool
    issue: IssueRefAnswer
    bounty: BountyRefAnswer


@with_config(STRICT)
class AcceptAnswer(TypedDict):
    success: bool
    task_id: str
    bounty_id: str
    labels: list[str]


@with_config(STRICT)
class AcceptBestAnswer(TypedDict):
    success: bool
    selected_task_id: str | None
    bounty_id: str | None
    labels: list[str]
    task_id: NotRequired[str]
    strategy: NotRequired[str]
    message: NotRequired[str]
    hint: NotRequired[str]


@with_config(STRICT)
class ForkAnswer(TypedDict):
    success: bool
    fork_repo_url: str
    branch: str
    prepared: bool
    workdir: str
    head_sha: str
    generated: list[str]


@with_config(STRICT)
class OpenPrAnswer(TypedDict):
    success: bool
    pr_url: str
    number: int
    head_sha: str


@with_config(STRICT)
class CommentAnswer(TypedDict):
    success: bool
    comment_id: int


@with_config(STRICT)
class SubmitAnswer(TypedDict):
    success: bool
    bounty_id: str
    pr_url: str
    tx_hash: str


@with_config(STRICT)
class ClaimAnswer(TypedDict):
    success: bool
    bounty_id: str
    tx_hash: str
    amount: str
    asset: str
