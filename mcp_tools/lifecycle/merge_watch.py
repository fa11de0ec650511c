"""Merges are never missed: the worker asks the forge about submitted PRs, so a merge is recorded with
or without a webhook (serve down, a delivery lost, a hook never configured).

Bounded per round (a few bounties each tick), and idempotent on the merge itself (see
`settle.mark_merged`), so the webhook and this reconciliation can both see the same merge.
"""

from __future__ import annotations

import logging

from domain.contract import Status
from mcp_tools.lifecycle import settle
from mcp_tools.lifecycle.chain_record import require_bounty
from mcp_tools.services import Services
from projections import board

log = logging.getLogger("code3.merge_watch")


def reconcile_merges(s: Services, limit: int = 20) -> list[str]:
    """Report the merges of submitted PRs that the forge shows and the log lacks; the bounty ids reported.

    `s` must act as the contract's resolver (the identity that reports merges)."""
    reported = []
    for row in board.query(s.views, (Status.PR_SUBMITTED.name,), limit=limit):
        bounty = require_bounty(s, row["bounty_id"])
        if bounty.status is not Status.PR_SUBMITTED:
            continue
        merged = [pr for pr in (s.forge.get_pr(sub["pr_url"]) for sub in bounty.submissions.values())
                  if pr is not None and pr.merged]
        if not merged:
            continue
        pr = merged[0]
        settle.mark_merged(s, pr.url, delivery_id=f"forge-reconcile:{pr.merge_sha or pr.head_sha}",
                           bounty_id=bounty.bounty_id)
        log.info("bounty %s: %s merged on the forge without a webhook; recorded", bounty.bounty_id, pr.url)
        reported.append(bounty.bounty_id)
    return reported
