"""The bounty page's timeline: every event of a bounty and of its issue told in words (who did what, for how
much), and the state the page names (`outcome`: a cancelled bounty is 'refunded', 'refunded by ruling' or
'disputed'). Every value comes from the log (a reason, a PR URL, a login are whatever someone signed): the
template escapes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from domain.bounties.issue import Issue
from mcp_tools.web.render import percent, shares


def describe(event: Any, bounty: Bounty) -> tuple[str, str]:
    """(actor, what happened) for one event, in words. Every value comes from the log (a reason, a PR URL, a login are
    whatever someone signed): the template escapes it."""
    from domain.bounties.amounts import display
    from mcp_tools.lifecycle.forge_mirror import REJECTION_TEXT
    from mcp_tools.web.render import when

    d = vars(event)
    kind = type(event).__name__

    def money(value: Any) -> str:
        return display(int(value or 0), bounty.asset)

    amount = money(bounty.amount)
    if isinstance(event, Issue.Event):
        issue_texts = {
            "PublishRequested": f"publish requested for feature {d.get('feature_id')} ({amount})",
            "OpeningClaimed": "the issue's opening claimed by one publish",
            "Opened": f"issue opened: {d.get('task_id')}",
            "BountyLinked": f"bounty {d.get('bounty_id')} linked to the issue",
            "MetadataWritten": "code3-meta block written into the issue body",
            "LabelsMirrored": f"labels mirrored to the issue: {', '.join(d.get('labels') or []) or 'none'}",
        }
        return "sponsor (publish)", issue_texts.get(kind, kind)
    resolver = bounty.resolver or "resolver"
    texts: dict[str, Callable[[], tuple[Any, str]]] = {  # made only for the event's own kind
        "Created": lambda: (d.get("sponsor"), f"bounty created on chain: {money(d.get('amount', bounty.amount))} "
                                              f"escrowed, mode {d.get('mode')}"),
        "Accepted": lambda: (d.get("worker"), "accepted the task" + (
            f" (holds it until {when(d['hold_until'])})" if d.get("hold_until") else "")),
        "Withdrawn": lambda: (d.get("worker"), "withdrew from the task"),
        "Funded": lambda: (d.get("funder"), f"added {money(d.get('amount'))} to the pool: it is now "
                                            f"{money(d.get('pool'))}"),
        "PRSubmitted": lambda: (d.get("worker"), f"submitted {d.get('pr_url')}"),
        "SubmissionRejected": lambda: (resolver, f"rejected {d.get('worker')}'s submission of {d.get('pr_url')}: "
                                                 f"{REJECTION_TEXT.get(d.get('reason'), 'rejected')}"),
        "Merged": lambda: (resolver, f"reported {d.get('pr_url')} merged; winner {d.get('winner')} (the address "
                                     "linked to its author)"),
        "CoolingStarted": lambda: ("chain", f"cooling period started, until {when(d.get('cooling_until'))}"),
        "DisputeOpened": lambda: (d.get("by"), _disputed_text(d, bounty)),
        "DisputeRuled": lambda: (resolver, f"ruled the dispute: {percent(d.get('share_bps') or 0)} of the pool to "
                                           f"{d.get('claimant')} ({money(d.get('paid'))} paid), "
                                           f"{money(d.get('refunded'))} refunded to the funders"),
        "SplitSet": lambda: (bounty.winner, "split the payout: " + ", ".join(
            f"{to} {share}" for to, share in zip(d.get("recipients") or [], shares(d.get("shares") or []),
                                                 strict=False))),
        "Paid": lambda: (d.get("winner"), _paid_text(d, money)),
        "Cancelled": lambda: _cancelled(d, bounty, money),
        "RefundWithdrawn": lambda: (d.get("funder"), f"withdrew their share of the refund: {money(d.get('amount'))}"),
        "Tipped": lambda: (d.get("tipper"), f"tipped {d.get('to')} {money(d.get('amount'))}"),
        "Reconciled": lambda: ("Code3 (chain sync)", "the mirror disagreed with the chain and adopted the chain's "
                                                     "state"),
        "BecameClaimable": lambda: ("Code3 worker", "cooling over: the winner may claim"),
        "MergeReported": lambda: ("webhook", f"merge delivery handled for {d.get('pr_url')}"),
    }
    made = texts.get(kind)
    actor, text = made() if made is not None else ("", kind)
    return str(actor or ""), text


def _disputed_text(d: dict[str, Any], bounty: Bounty) -> str:
    from mcp_tools.web.render import when

    until = when(d.get("rule_by"))
    if d.get("by") == bounty.sponsor:  # the sponsor disputes during cooling only
        after = f"the payout waits for the resolver's ruling until {until}; unruled by then, the winner is paid"
    else:  # a worker with a submitted PR, before a merge
        after = f"the refund waits for the resolver's ruling, until {until} at most"
    return f"disputed the bounty: “{d.get('reason')}”; {after}"


def _paid_text(d: dict[str, Any], money: Any) -> str:
    recipients, amounts = d.get("recipients") or [], d.get("amounts") or []
    text = f"paid {money(d.get('amount'))}"
    if recipients and list(recipients) != [d.get("winner")]:
        text += " through the winner's split: " + ", ".join(
            f"{to} {money(paid)}" for to, paid in zip(recipients, amounts, strict=False))
    return text


def _cancelled(d: dict[str, Any], bounty: Bounty, money: Any) -> tuple[Any, str]:
    if d.get("amount") is None:  # the v1 contract: the whole pool back to the sponsor at once
        return d.get("refund_to"), ("disputed during cooling" if d.get("disputed") else "cancelled") \
            + f": {money(bounty.pool)} refunded to the sponsor"
    shared = "each funder withdraws their share (the sponsor's came back at once)"
    if d.get("disputed"):
        return bounty.resolver or "resolver", f"the ruling refunded {money(d['amount'])} to the funders: {shared}"
    return d.get("refund_to"), f"cancelled: {money(d['amount'])} refunded to the funders; {shared}"


def timeline(bounty: Bounty, events: list[Any]) -> list[dict[str, Any]]:
    items = []
    for number, event in enumerate(events, 1):
        actor, text = describe(event, bounty)
        coords = getattr(event, "coords", None) or {}
        items.append({"n": number, "kind": f"{type(event).__qualname__.split('.')[0]}.{type(event).__name__}",
                      "at": event.timestamp.strftime("%Y-%m-%d %H:%M:%S UTC"), "iso": event.timestamp.isoformat(),
                      "actor": actor, "text": text, "tx_hash": coords.get("tx_hash"), "version": coords.get("version")})
    return items


REFUNDED_BY_RULING = "refunded by ruling"


def outcome(bounty: Bounty, events: list[Any]) -> str:
    """The state as the page names it. A cancelled bounty is 'refunded', or 'refunded by ruling' when a ruling refunded
    all of it ('disputed' for the v1 contract's dispute, which refunded the sponsor at once); a ruling that paid part
    leaves the bounty 'paid'. An open dispute is shown beside the state, not as one."""
    if bounty.status == Status.CANCELLED:
        cancelled = [e for e in events if isinstance(e, Bounty.Cancelled)]
        if not cancelled:
            return "cancelled"
        last = cancelled[-1]
        if not last.disputed:
            return "refunded"
        return "disputed" if last.amount is None else REFUNDED_BY_RULING
    from mcp_tools.web.board import STATE_LABELS

    return STATE_LABELS.get(Status(bounty.status).name, Status(bounty.status).name.lower())


def state_class(state: str) -> str:
    """The CSS class of a state's badge: 'PR submitted' → 'state-pr_submitted'."""
    return "state-" + state.lower().replace(" ", "_")
