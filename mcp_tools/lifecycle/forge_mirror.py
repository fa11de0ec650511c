"""The forge mirror: from Bounty events, the issue's state label, one status comment per transition, and the
issue's metadata block brought up to the bounty's state (closed once paid: issue_refresh.py).

It only reflects the chain's facts, never writes Bounty state. Each comment carries a hidden marker
naming its chain event, so a repeat (a crash before tracking, a second runner) edits, never duplicates.
Labels are set from the bounty's current state, so a mirror that lags never moves a label backwards.

A projector with side effects: the worker's Runner drives it under a lease (projections/runner.py). When the
forge is away or rate-limits us (the GitHub adapter answers E_GH_RATE_LIMIT once its retry budget is spent),
the round stops at that event and the same event is tried next round (projections/failures.py), counted in
`projection_health` so `code3 doctor` shows the mirror falling behind; only a final answer (404, 422, ...)
makes an event a dead letter.
"""

from __future__ import annotations

import logging
from typing import Any

from adapters.ports import Forge
from adapters.sql import Cursor
from domain.bounties.amounts import with_units
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Rejection, Status
from domain.bounties.issue import Issue
from mcp_tools.lifecycle.chain_record import reflect_labels
from mcp_tools.lifecycle.issue_refresh import refresh_issue
from projections.failures import NotYet

log = logging.getLogger("code3.mirror")

TRANSITIONS = (Bounty.Created, Bounty.Accepted, Bounty.Funded, Bounty.PRSubmitted, Bounty.SubmissionRejected,
               Bounty.Merged, Bounty.CoolingStarted, Bounty.DisputeOpened, Bounty.DisputeRuled, Bounty.SplitSet,
               Bounty.Paid, Bounty.Cancelled, Bounty.Tipped, Bounty.Reconciled)


def marker(bounty_id: str, event: Any) -> str:
    coords = getattr(event, "coords", None) or {"version": f"v{event.originator_version}", "index": 0}
    return f"<!-- code3:bounty={bounty_id}:event={coords['version']}:{coords['index']} -->"


def status_text(bounty_id: str, event: Any, asset: str, amount: int) -> str:
    if isinstance(event, Bounty.Created):
        return f"Bounty **{bounty_id}** is open: {with_units(amount, asset)} escrowed on chain."
    if isinstance(event, Bounty.Accepted):
        return f"`{event.worker}` accepted bounty {bounty_id}."
    if isinstance(event, Bounty.Funded):
        return (f"`{event.funder}` added {with_units(event.amount, asset)} to bounty {bounty_id}: the pool is now "
                f"{with_units(event.pool, asset)}.")
    if isinstance(event, Bounty.PRSubmitted):
        return f"`{event.worker}` submitted {event.pr_url} for bounty {bounty_id}."
    if isinstance(event, Bounty.SubmissionRejected):
        return (f"The resolver rejected `{event.worker}`'s submission of {event.pr_url} for bounty {bounty_id}: "
                f"{REJECTION_TEXT.get(event.reason, 'rejected')}.")
    if isinstance(event, Bounty.Merged):
        return f"{event.pr_url} merged first: `{event.winner}` (its author's linked address) wins bounty {bounty_id}."
    if isinstance(event, Bounty.CoolingStarted):
        return f"Cooling period started; the payout is due after {event.cooling_until} (unix time)."
    if isinstance(event, Bounty.DisputeOpened):
        return (f"`{event.by}` disputed bounty {bounty_id}: \"{event.reason}\". The payout waits for the resolver's "
                f"ruling, until {event.rule_by} (unix time) at most.")
    if isinstance(event, Bounty.DisputeRuled):
        return (f"The resolver ruled on bounty {bounty_id}: {with_units(event.paid, asset)} to `{event.claimant}`, "
                f"{with_units(event.refunded, asset)} refunded to its funders.")
    if isinstance(event, Bounty.SplitSet):
        return (f"The winner of bounty {bounty_id} split the payout: "
                + ", ".join(f"`{r}` {share}" for r, share in zip(event.recipients, event.shares, strict=True)) + ".")
    if isinstance(event, Bounty.Paid):
        paid = ", ".join(f"`{to}` {with_units(a, asset)}" for to, a in zip(event.recipients, event.amounts,
                                                                              strict=True))
        return f"Bounty {bounty_id} paid ({with_units(event.amount, asset)}): {paid}."
    if isinstance(event, Bounty.Cancelled):
        refunded = event.amount if event.amount is not None else amount
        return (f"Bounty {bounty_id} ended without a payout of the rest; {with_units(refunded, asset)} refunded to "
                "its funders (each withdraws their share; the sponsor's was paid back at once).")
    if isinstance(event, Bounty.Tipped):
        return f"`{event.tipper}` tipped `{event.to}` {with_units(event.amount, asset)} on bounty {bounty_id}."
    return f"The mirror of bounty {bounty_id} disagreed with the chain and was corrected: {event.chain}."


REJECTION_TEXT = {
    int(Rejection.NOT_IN_REPO): "it is not a pull request of the bounty's repository",
    int(Rejection.WRONG_BASE): "it does not target the repository's default branch",
    int(Rejection.NOT_AUTHOR): "the PR was opened by another forge account than the submitter's",
    int(Rejection.CLOSED): "the PR was closed without a merge (its worker may dispute for 7 days)",
    int(Rejection.SETTLED_ELSEWHERE): "the merged PR already settled another bounty",
}


class ForgeMirror:
    name = "forge_mirror"
    version = 1
    has_effects = True
    schema = ""
    tables: tuple[str, ...] = ()

    def __init__(self, store: Any, forge: Forge) -> None:
        self.store = store
        self.forge = forge
        self.mirrored = 0  # transitions reflected on the forge by this process (the worker's round summary)

    def effect(self, event: Any) -> None:
        if not isinstance(event, TRANSITIONS):
            return
        bounty = self.store.get(Bounty, event.originator_id)
        if bounty is None:
            raise NotYet(f"bounty {event.originator_id} not readable yet")
        issue = self.store.get(Issue, Issue.create_id(bounty.issue_hash))
        if issue is None:
            log.info("bounty %s has no issue known here; nothing to mirror", bounty.bounty_id)
            return
        if issue.number is None:
            raise NotYet(f"issue of bounty {bounty.bounty_id} not opened yet")
        reflect_labels(self.store, self.forge, issue.id, Status(bounty.status), bounty.dispute is not None)
        tag = marker(bounty.bounty_id, event)
        body = f"{status_text(bounty.bounty_id, event, bounty.asset, bounty.amount)}\n\n{tag}"
        existing = next((c for c in self.forge.list_comments(issue.repo, issue.number) if tag in c.body), None)
        if existing is None:
            self.forge.create_comment(issue.repo, issue.number, body)
        elif existing.body != body:
            self.forge.edit_comment(issue.repo, existing.id, body)
        refresh_issue(self.forge, issue.repo, issue.number, bounty)
        self.mirrored += 1

    def apply(self, event: Any, cur: Cursor) -> None:
        return None
