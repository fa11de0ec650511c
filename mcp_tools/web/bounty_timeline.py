"""The bounty page's timeline in plain words: what happened, who did it, when ("alice published the bounty",
"bob's PR #3 was merged"), and the state the page names (`outcome`: a cancelled bounty is 'refunded', 'refunded by
ruling' or 'disputed').

Each event of the bounty and of its issue becomes one item. The saga's own bookkeeping (a publish requested, the
opening claimed, the bounty linked, the metadata written, the labels mirrored, a merge delivery handled, the mirror
reconciled) is no news to a person: those items are `plain=False`, listed only in the page's full event log with
every event's class name. A phrase that no longer applies is left out (how long an exclusive hold lasts, once the
bounty is settled). Every value comes from the log (a reason, a PR URL, a login are whatever someone signed): the
template escapes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from domain.bounties.issue import Issue
from mcp_tools.web.render import percent, shares

# the saga's and Code3's own records: in the full event log only (so is any kind this module does not word)
BOOKKEEPING = frozenset({"PublishRequested", "OpeningClaimed", "BountyLinked", "MetadataWritten", "LabelsMirrored",
                         "Superseded", "TookOver", "MergeReported", "Reconciled"})
SETTLED = (Status.PAID, Status.CANCELLED)


def pr_label(url: Any) -> str:
    """'PR #3' for a PR URL (any forge), else the text itself."""
    from domain.errors import Code3Error
    from domain.values import parse_forge_url

    try:
        return f"PR #{parse_forge_url(url).number}"
    except Code3Error:  # a worker signs any text as a PR URL: it is shown as it is
        return str(url)


def describe(event: Any, bounty: Bounty, who: Callable[[Any], Any], title: str = "") -> tuple[str, str]:
    """(the acting address, what happened in words) for one event."""
    from domain.bounties.amounts import display
    from mcp_tools.lifecycle.forge_mirror import REJECTION_TEXT
    from mcp_tools.web.render import when

    d = vars(event)
    kind = type(event).__name__

    def money(value: Any) -> str:
        return display(int(value or 0), bounty.asset)

    def name(address: Any) -> str:
        return str(who(address).label)

    sponsor = name(bounty.sponsor)
    if isinstance(event, Issue.Event):
        issue_texts = {
            "PublishRequested": f"{sponsor} asked to publish feature {d.get('feature_id')} ({money(bounty.amount)})",
            "OpeningClaimed": "the issue's opening claimed by one publish",
            "Opened": f"{sponsor} opened issue #{d.get('number')}" + (f": “{title}”" if title else ""),
            "BountyLinked": f"bounty {d.get('bounty_id')} linked to the issue",
            "MetadataWritten": "code3-meta block written into the issue body",
            "LabelsMirrored": f"labels set on the issue: {', '.join(d.get('labels') or []) or 'none'}",
            "Unfunded": f"the chain refused to create the bounty: {d.get('reason')}",
            "Superseded": "this publish gave its issue to a publish of the same feature with other terms",
            "TookOver": "this publish reuses the issue of an earlier unfunded publish",
        }
        return bounty.sponsor, issue_texts.get(kind, kind)
    resolver = bounty.resolver or ""
    settled = bounty.status in SETTLED
    texts: dict[str, Callable[[], tuple[Any, str]]] = {  # made only for the event's own kind
        "Created": lambda: (d.get("sponsor"), f"{name(d.get('sponsor'))} published the bounty: "
                                              f"{money(d.get('amount', bounty.amount))} escrowed, {d.get('mode')} "
                                              "mode"),
        "Accepted": lambda: (d.get("worker"), f"{name(d.get('worker'))} accepted the task" + (
            f" (and holds it until {when(d['hold_until'])})" if d.get("hold_until") and not settled else "")),
        "Withdrawn": lambda: (d.get("worker"), f"{name(d.get('worker'))} withdrew from the task"),
        "Funded": lambda: (d.get("funder"), f"{name(d.get('funder'))} added {money(d.get('amount'))} to the pool: "
                                            f"it is now {money(d.get('pool'))}"),
        "PRSubmitted": lambda: (d.get("worker"), f"{name(d.get('worker'))} submitted {pr_label(d.get('pr_url'))}"),
        "SubmissionRejected": lambda: (resolver, f"{name(resolver)} rejected {name(d.get('worker'))}'s "
                                                 f"{pr_label(d.get('pr_url'))}: "
                                                 f"{REJECTION_TEXT.get(d.get('reason'), 'rejected')}"),
        "Merged": lambda: (resolver, f"{name(d.get('winner'))}'s {pr_label(d.get('pr_url'))} was merged: "
                                     f"{name(d.get('winner'))} wins (reported by {name(resolver)})"),
        "CoolingStarted": lambda: ("", f"the cooling period {'ran' if settled else 'runs'} until "
                                       f"{when(d.get('cooling_until'))}"),
        "DisputeOpened": lambda: (d.get("by"), _disputed_text(d, bounty, name)),
        "DisputeRuled": lambda: (resolver, f"{name(resolver)} ruled the dispute: {percent(d.get('share_bps') or 0)} "
                                           f"of the pool to {name(d.get('claimant'))} ({money(d.get('paid'))} paid), "
                                           f"{money(d.get('refunded'))} refunded to the funders"),
        "SplitSet": lambda: (bounty.winner, f"{name(bounty.winner)} split the payout: " + ", ".join(
            f"{name(to)} {share}" for to, share in zip(d.get("recipients") or [], shares(d.get("shares") or []),
                                                       strict=False))),
        "Paid": lambda: (d.get("winner"), _paid_text(d, money, name)),
        "Cancelled": lambda: _cancelled(d, bounty, money, name),
        "RefundWithdrawn": lambda: (d.get("funder"), f"{name(d.get('funder'))} withdrew their share of the refund: "
                                                     f"{money(d.get('amount'))}"),
        "Tipped": lambda: (d.get("tipper"), f"{name(d.get('tipper'))} tipped {name(d.get('to'))} "
                                            f"{money(d.get('amount'))}"),
        "Reconciled": lambda: ("", "the mirror disagreed with the chain and adopted the chain's state"),
        "BecameClaimable": lambda: ("", f"the cooling period ended: {name(bounty.winner)} may claim the payout"),
        "MergeReported": lambda: ("", f"merge delivery handled for {pr_label(d.get('pr_url'))}"),
    }
    made = texts.get(kind)
    actor, text = made() if made is not None else ("", kind)
    return str(actor or ""), text


def _disputed_text(d: dict[str, Any], bounty: Bounty, name: Callable[[Any], str]) -> str:
    from mcp_tools.web.render import when

    until = when(d.get("rule_by"))
    if d.get("by") == bounty.sponsor:  # the sponsor disputes during cooling only
        after = f"the payout waits for the resolver's ruling until {until}; unruled by then, the winner is paid"
    else:  # a worker with a submitted PR, before a merge
        after = f"the refund waits for the resolver's ruling, until {until} at most"
    said = f"{name(d.get('by'))} disputed the bounty: “{d.get('reason')}”"
    return said if bounty.status in SETTLED else f"{said}; {after}"


def _paid_text(d: dict[str, Any], money: Any, name: Callable[[Any], str]) -> str:
    recipients, amounts = d.get("recipients") or [], d.get("amounts") or []
    text = f"{name(d.get('winner'))} was paid {money(d.get('amount'))}"
    if recipients and list(recipients) != [d.get("winner")]:
        text += " through the winner's split: " + ", ".join(
            f"{name(to)} {money(paid)}" for to, paid in zip(recipients, amounts, strict=False))
    return text


def _cancelled(d: dict[str, Any], bounty: Bounty, money: Any, name: Callable[[Any], str]) -> tuple[Any, str]:
    if d.get("amount") is None:  # the v1 contract: the whole pool back to the sponsor at once
        return d.get("refund_to"), ("disputed during cooling" if d.get("disputed") else "cancelled") \
            + f": {money(bounty.pool)} refunded to the sponsor"
    shared = "each funder withdraws their share (the sponsor's came back at once)"
    if d.get("disputed"):
        return bounty.resolver or "", f"the ruling refunded {money(d['amount'])} to the funders: {shared}"
    return d.get("refund_to"), (f"{name(d.get('refund_to'))} cancelled the bounty: {money(d['amount'])} refunded "
                                f"to the funders; {shared}")


def timeline(bounty: Bounty, events: list[Any], who: Callable[[Any], Any], title: str = "") -> list[dict[str, Any]]:
    """Every event as an item: its words, its actor (a `people.Person`, or None for Code3 or the chain itself), its
    time, its chain coordinates, and whether it belongs in the plain list (`plain`)."""
    items = []
    for number, event in enumerate(events, 1):
        actor, text = describe(event, bounty, who, title)
        worded = text != type(event).__name__
        coords = getattr(event, "coords", None) or {}
        kind = type(event).__name__
        items.append({"n": number, "kind": f"{type(event).__qualname__.split('.')[0]}.{kind}",
                      "at": event.timestamp.strftime("%Y-%m-%d %H:%M UTC"), "iso": event.timestamp.isoformat(),
                      "actor": who(actor) if actor else None, "text": text,
                      "plain": worded and kind not in BOOKKEEPING,
                      "tx_hash": coords.get("tx_hash"), "version": coords.get("version")})
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
