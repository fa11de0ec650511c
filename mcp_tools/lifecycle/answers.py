"""What the lifecycle tools answer: each tool's output schema (MCP structured output), declared once.

The handlers return these dicts; the MCP front publishes them as `outputSchema` and checks every answer
against them, so an undeclared field is caught instead of reaching a client. Every field carries its
description here, and docs/tools.md (generated from these declarations by python -m mcp_tools.reference) lists
the same ones.

Fields beyond seed 001's examples, kept because a client needs them: `workdir`, `head_sha`, `generated`
(fork_and_prepare: where to work, the commit pushed, what was generated), `head_sha` (open_pr: the
commit submit_pr records), `tx_hash` (submit_pr, claim_payout), `amount`/`asset`/`amount_display`
(claim_payout: what was paid; publish's `bounty`: what was escrowed; the human value beside the smallest
unit), `bounty_id` (submit_pr, claim_payout: the bounty acted on), `message`/`hint` (accept_best_task
when nothing matches), `link` (submit_pr: whether the PR's author is linked to the worker's address, which a
merge pays). Dropped as echoes of the input: accept_task's `task_id`, accept_best_task's
`strategy`, open_pr's `number` (it is in `pr_url`), submit_pr's `pr_url`.
"""

from __future__ import annotations

from typing import Annotated, NotRequired

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict  # pydantic builds schemas only from this TypedDict on Python < 3.12

STRICT = ConfigDict(extra="forbid")
Success = Annotated[bool, Field(description="true: the tool did what was asked (failures answer isError with "
                                            "{code, message, hint})")]
BountyId = Annotated[str, Field(description="the on-chain bounty id")]
Amount = Annotated[str, Field(description="a string of digits in the asset's smallest unit: \"1000000\" is 1 USDT "
                                          "(6 decimals)")]
AmountDisplay = Annotated[str, Field(description="the same amount for people, in whole units: \"1 USDT\" (an asset "
                                                 "of unknown decimals: \"7 XYZ (smallest unit)\")")]
TxHash = Annotated[str, Field(description="hash of the chain transaction")]
Labels = Annotated[list[str], Field(description="the issue's state label after the call (it mirrors the chain)")]


@with_config(STRICT)
class SpecPaths(TypedDict):
    spec: Annotated[str, Field(description="spec.md, relative to the project root")]
    dir: Annotated[str, Field(description="the feature directory, relative to the project root")]


@with_config(STRICT)
class SpecifyAnswer(TypedDict):
    success: Success
    feature_id: Annotated[str, Field(description="NNN-short-name, as given or generated")]
    paths: SpecPaths


@with_config(STRICT)
class PlanPaths(TypedDict):
    plan: Annotated[str, Field(description="plan.md, relative to the project root")]
    research: Annotated[str, Field(description="research.md")]
    data_model: Annotated[str, Field(description="data-model.md")]
    contracts: Annotated[str, Field(description="the contracts/ directory")]
    quickstart: Annotated[str, Field(description="quickstart.md")]


@with_config(STRICT)
class PlanAnswer(TypedDict):
    success: Success
    paths: PlanPaths


@with_config(STRICT)
class TasksAnswer(TypedDict):
    success: Success
    path: Annotated[str, Field(description="tasks.md, relative to the project root")]


@with_config(STRICT)
class IssueRefAnswer(TypedDict):
    url: Annotated[str, Field(description="the issue's web URL")]
    number: Annotated[int, Field(description="the issue's number (task id: owner/repo#number)")]
    issue_hash: Annotated[str, Field(description="the publish's idempotency key: sha256 of the canonical JSON of "
                                                 "{schema, repo, feature_id, spec_digest, amount, asset, network}")]


@with_config(STRICT)
class BountyRefAnswer(TypedDict):
    bounty_id: BountyId
    amount: Amount
    asset: Annotated[str, Field(description="the asset escrowed")]
    amount_display: AmountDisplay


@with_config(STRICT)
class PublishAnswer(TypedDict):
    success: Success
    issue: IssueRefAnswer
    bounty: BountyRefAnswer


@with_config(STRICT)
class AcceptAnswer(TypedDict):
    success: Success
    bounty_id: BountyId
    labels: Labels


@with_config(STRICT)
class AcceptBestAnswer(TypedDict):
    success: Success
    selected_task_id: Annotated[str | None, Field(description="the task accepted (owner/repo#N), null when none "
                                                              "matches")]
    bounty_id: Annotated[str | None, Field(description="its on-chain bounty id, null when none matches")]
    labels: Labels
    message: NotRequired[Annotated[str, Field(description="when nothing matches: why")]]
    hint: NotRequired[Annotated[str, Field(description="when nothing matches: what to try")]]


@with_config(STRICT)
class ForkAnswer(TypedDict):
    success: Success
    fork_repo_url: Annotated[str, Field(description="the fork's URL")]
    branch: Annotated[str, Field(description="the branch prepared and pushed, feat/NNN-slug")]
    prepared: Annotated[bool, Field(description="true: spec, plan and tasks are in the branch")]
    workdir: Annotated[str, Field(description="absolute path of the working copy to implement the tasks in")]
    head_sha: Annotated[str, Field(description="the commit pushed to the branch")]
    generated: Annotated[list[str], Field(description="the artifacts this call generated (spec.md, plan, "
                                                      "tasks.md); empty when the branch had them all")]


@with_config(STRICT)
class OpenPrAnswer(TypedDict):
    success: Success
    pr_url: Annotated[str, Field(description="the pull request's URL (submit it with server_mcp.submit_pr)")]
    head_sha: Annotated[str, Field(description="the PR's head commit (submit_pr records it as commit_sha)")]


@with_config(STRICT)
class CommentAnswer(TypedDict):
    success: Success
    comment_id: Annotated[int, Field(description="the new comment's id on the forge")]


@with_config(STRICT)
class LinkState(TypedDict):
    status: Annotated[str, Field(description="linked: the chain links your forge account to your address; statement "
                                             "published: a signed link statement of yours is in a comment, which "
                                             "the bounty's resolver records before paying")]
    forge_user: Annotated[str, Field(description="your forge login")]
    account: Annotated[str, Field(description="your chain address (the one a merge of your PR pays)")]
    comment_url: NotRequired[Annotated[str, Field(description="the comment holding your link statement")]]


@with_config(STRICT)
class SubmitAnswer(TypedDict):
    success: Success
    bounty_id: BountyId
    tx_hash: TxHash
    link: NotRequired[Annotated[LinkState, Field(description="how a merge of this PR reaches you: the bounty pays "
                                                             "the address linked to the PR's author")]]


@with_config(STRICT)
class ClaimAnswer(TypedDict):
    success: Success
    bounty_id: BountyId
    tx_hash: TxHash
    amount: Annotated[str, Field(description="the amount paid, in the asset's smallest unit (\"1000000\" is 1 USDT)")]
    asset: Annotated[str, Field(description="the asset paid")]
    amount_display: AmountDisplay


@with_config(STRICT)
class WithdrawAnswer(TypedDict):
    success: Success
    bounty_id: BountyId
    labels: Labels
