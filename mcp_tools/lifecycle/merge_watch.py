"""Merges are never missed: the worker asks the forge about submitted PRs, so a merge is recorded with
or without a webhook (serve down, a delivery lost, a hook never configured).

Bounded per round (a few bounties each tick), and idempotent on the merge itself (see
`settle.mark_merged`), so the webhook and this reconciliation can both see the same merge.
"""

from __future__ import annotations

import logging
from typing import Any

from domain.contract import Status
from mcp_tools.lifecycle import settle
from mcp_tools.services import Services
from projections import board

log = logging.getLogger("code3.merge_watch")


def reconcile_merges(s: Services, limit: int = 20, after: str | None = None) -> list[str]:
    """Report the merges of submitted PRs that the forge shows and the log lacks, among the first `limit` submitted
    bounties (after the bounty id `after`); the bounty ids reported.

    `s` must act as the contract's resolver (the identity that reports merges)."""
    return _report(s, board.query(s.views, (Status.PR_SUBMITTED.name,), limit=limit, after=after))


class MergeWatch:
    """The worker's look for merges: a rolling pass over the submitted bounties, one page a round, so every one is
    looked at (a first page alone would never reach the 21st) and a round costs one page whatever the store holds."""

    def __init__(self, limit: int = 20) -> None:
        self.limit = limit
        self.after: str | None = None

    def look(self, s: Services) -> list[str]:
        page = board.query(s.views, (Status.PR_SUBMITTED.name,), limit=self.limit, after=self.after)
        self.after = page[-1]["bounty_id"] if len(page) == self.limit else None
        return _report(s, page)


def _report(s: Services, page: list[dict[str, Any]]) -> list[str]:
    """The PRs come from the board (`board_prs`), so a round loads no aggregate unless a PR merged."""
    reported = []
    prs = board.submitted_prs(s.views, [row["bounty_id"] for row in page])
    for row in page:
        merged = [pr for pr in (s.forge.get_pr(url) for url in prs.get(row["bounty_id"], []))
                  if pr is not None and pr.merged]
        if not merged:
            continue
        pr = merged[0]
        settle.mark_merged(s, pr.url, delivery_id=f"forge-reconcile:{pr.merge_sha or pr.head_sha}",
                           bounty_id=row["bounty_id"])
        log.info("bounty %s: %s merged on the forge without a webhook; recorded", row["bounty_id"], pr.url)
        reported.append(row["bounty_id"])
    return reported
