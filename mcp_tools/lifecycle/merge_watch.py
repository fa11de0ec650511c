"""Merges are never missed and junk never lingers: the worker, as each bounty's resolver, looks at every live
submission on the forge, so a merge is reported with or without a webhook (serve down, a delivery lost, a hook never
configured), and a submission of another repository's PR, of someone else's PR or of a PR closed unmerged is
rejected on chain (resolver.review decides; this module only finds what it must look at).

A rolling pass, a page of bounties a round, so every one is looked at and a round's cost is one page whatever the
store holds; the PRs come from the board (`board_prs`), so a round loads no aggregate unless a submission needs the
resolver's judgement.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from domain.bounties.contract import Status
from domain.errors import Code3Error
from mcp_tools.lifecycle import resolver
from mcp_tools.lifecycle.chain_record import chain_read
from mcp_tools.services import Services
from projections.bounties import board

log = logging.getLogger("code3.merge_watch")
ServicesFor = Callable[[str | None], Services | None]


def reconcile_merges(s: Services, limit: int = 20, after: str | None = None) -> list[str]:
    """Review the submitted bounties among the first `limit` (after the bounty id `after`); the bounty ids whose
    merge was reported. `s` must act as their resolver."""
    page = board.query(s.views, (Status.PR_SUBMITTED.name,), limit=limit, after=after)
    return MergeWatch(limit).review_page(s, page, lambda _address: s)


class MergeWatch:
    """The worker's look at submitted PRs: a rolling pass over the submitted bounties, one page a round."""

    def __init__(self, limit: int = 20) -> None:
        self.limit = limit
        self.after: str | None = None
        self._links: dict[tuple[str, str], int] = {}  # (resolver, worker) -> linked forge id (links found stay)

    def look(self, s: Services, services_for: ServicesFor | None = None) -> list[str]:
        """`services_for(address)`: services acting as a bounty's resolver when this installation holds its key (a
        bounty keeps the resolver it was created with); by default `s` acts for every bounty."""
        page = board.query(s.views, (Status.PR_SUBMITTED.name,), limit=self.limit, after=self.after)
        self.after = page[-1]["bounty_id"] if len(page) == self.limit else None
        return self.review_page(s, page, services_for or (lambda _address: s))

    def review_page(self, s: Services, page: list[dict[str, Any]], services_for: ServicesFor) -> list[str]:
        reported = []
        subs = board.live_submissions(s.views, [row["bounty_id"] for row in page])
        registry_resolver: str | None = None
        for row in page:
            live = subs.get(row["bounty_id"], [])
            if not live:
                continue
            address = row.get("resolver")
            if not address:
                registry_resolver = registry_resolver or s.chain.config().resolver
                address = registry_resolver
            acting = services_for(address)
            if acting is None or address is None:
                continue  # resolved by a key this installation does not hold: that resolver's worker looks
            if not any(self._needs_review(acting, row, address, worker, url) for worker, url in live):
                continue
            try:
                verdicts = resolver.review(acting, row["bounty_id"])
            except Code3Error as exc:
                log.info("bounty %s: not reviewed this round (%s: %s)", row["bounty_id"], exc.code.value, exc.message)
                continue
            for verdict in verdicts:
                if verdict.action == "wait" and verdict.pr is not None and verdict.pr.merged:
                    log.info("bounty %s: %s", row["bounty_id"], verdict.note)
            if any(v.action == "merge" for v in verdicts):
                reported.append(row["bounty_id"])
        return reported

    def _needs_review(self, s: Services, row: dict[str, Any], resolver_address: str, worker: str, url: str) -> bool:
        """Whether the forge shows something the resolver must act on: the PR closed (merged or not), or the
        submission is not an open PR of the bounty's repository on its default branch written by the submitter's
        linked forge account."""
        try:
            pr = s.forge.get_pr(url)
        except Code3Error:
            return True  # not a PR URL of this forge at all
        if pr is None or pr.state == "closed" or pr.base != pr.default_branch:
            return True
        repo_id = int(row.get("repo_id") or 0)
        if (repo_id and pr.repo_id != repo_id) or (not repo_id and pr.repo.lower() != str(row["repo"]).lower()):
            return True
        key = (resolver_address, worker)
        if key not in self._links:
            with chain_read():
                found = s.chain.linked_forge_id(resolver_address, worker)
            if found is None:
                return False  # unlinked: judged when the PR closes
            self._links[key] = found
        return self._links[key] != pr.author_id
