"""The issue kept in step with its bounty: the `code3-meta` block rewritten with the bounty's state, and the
issue closed once the bounty is paid.

Publish writes the block once (amount, bounty id, the deadline asked for); the forge mirror calls this after
each transition, so a reader of the issue sees the state the chain holds (`status`, `winner`, `pr_url`,
`merged_at`, `cooling_until`, the deadline as the chain has it, the labels now on the issue) instead of
the state at publish. Written from the bounty's current state, never from the event at hand, so a mirror
that lags never moves the block backwards; an unchanged block is not rewritten.
"""

from __future__ import annotations

import logging

from adapters.ports import Forge, IssueRef
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status, state_label
from domain.bounties.metadata import IssueMetadata, replace_block

log = logging.getLogger("code3.mirror")
CLOSES = frozenset({Status.PAID})  # the bounty states that close its issue: the work is done and paid


def refreshed_body(current: IssueRef, bounty: Bounty) -> str | None:
    """The issue body with its metadata brought up to `bounty`, or None when it carries no readable block."""
    try:
        meta = IssueMetadata.from_body(current.body)
    except ValueError as exc:  # a block someone edited by hand (pydantic's errors are ValueErrors): left as found
        log.warning("issue %s#%s: its code3-meta block is unreadable (%s); not rewritten", current.repo,
                    current.number, type(exc).__name__)
        return None
    if meta is None:
        return None
    status = Status(bounty.status)
    updated = meta.model_copy(update={"labels": sorted(current.labels), "bounty": meta.bounty.model_copy(update={
        "bounty_id": bounty.bounty_id, "status": state_label(status, bounty.dispute is not None),
        "winner": bounty.winner, "pr_url": bounty.merged_pr, "merged_at": bounty.merged_at,
        "cooling_until": bounty.cooling_until, "deadline": bounty.deadline})})
    return replace_block(current.body, updated)


def refresh_issue(forge: Forge, repo: str, number: int, bounty: Bounty) -> None:
    """Rewrite the issue's metadata when it changed, then close the issue when the bounty is paid."""
    current = forge.get_issue(repo, number)
    body = refreshed_body(current, bounty)
    if body is not None and body != current.body:
        forge.update_issue_body(repo, number, body)
    if Status(bounty.status) in CLOSES and current.state == "open":
        forge.close_issue(repo, number)
