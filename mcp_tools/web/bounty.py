"""The bounty page (`/bounties/<id>`): its timeline, what `code3 bounty show` tells (the resolver, the pool beside the
published amount, submissions with each worker's linked forge login, rejections, the open dispute, rulings, the
split, payouts, funders and refunds, tips), mirrored labels and comments, whether `audit verify` holds for it, and a
signed export of its events (`/bounties/<id>/export`).

The timeline is every event of the Bounty aggregate and of its Issue, read from the event log (never from a
view), merged in the order they were recorded. The per-bounty verify is the whole-log `audit verify` narrowed to
one bounty: its events replayed against the repository, against its board row (rebuilt in a scratch database from
the same events) and against the chain. The export is the whole log's export format (`projections.audit_log`)
over this bounty's events only, so `code3 audit check FILE` verifies its hash chain and signature.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from domain.bounty import Bounty
from domain.contract import Status
from domain.issue import Issue
from mcp_tools.web.render import page

MAX_ID_DIGITS = 20


class NotFound(Exception):
    pass


def bounty_uuid(bounty_id: str) -> Any:
    if not bounty_id.isascii() or not bounty_id.isdigit() or len(bounty_id) > MAX_ID_DIGITS:
        raise NotFound(f"{bounty_id[:40]!r} is not a bounty id (a number)")
    return Bounty.create_id(bounty_id)


def load(s: Any, bounty_id: str) -> tuple[Bounty, Issue | None, list[Any]]:
    """The bounty, its issue (None when this store has no publish for it) and both aggregates' events in the order
    they were recorded (each aggregate's own order kept; the two merged by recording time)."""
    bounty = s.store.get(Bounty, bounty_uuid(bounty_id))
    if bounty is None:
        raise NotFound(f"no bounty {bounty_id} is recorded in this store")
    issue = s.store.get(Issue, Issue.create_id(bounty.issue_hash))
    streams = [list(s.store.repository.event_store.get(bounty.id))]
    if issue is not None:
        streams.append(list(s.store.repository.event_store.get(issue.id)))
    events = list(heapq.merge(*streams, key=lambda e: e.timestamp))
    return bounty, issue, events


# --- the timeline -----------------------------------------------------------------------------------------------------

def describe(event: Any, bounty: Bounty) -> tuple[str, str]:
    """(actor, what happened) for one event, in words. Every value comes from the log (a reason, a PR URL, a login are
    whatever someone signed): the template escapes it."""
    from domain.amounts import display
    from mcp_tools.lifecycle.forge_mirror import REJECTION_TEXT
    from mcp_tools.web.render import when

    d = vars(event)
    kind = type(event).__name__

    def money(value: Any) -> str:
        return display(int(value or 0), bounty.asset)

    amount = money(bounty.amount)
    if isinstance(event, Issue.Event):
        texts = {
            "PublishRequested": f"publish requested for feature {d.get('feature_id')} ({amount})",
            "OpeningClaimed": "the issue's opening claimed by one publish",
            "Opened": f"issue opened: {d.get('task_id')}",
            "BountyLinked": f"bounty {d.get('bounty_id')} linked to the issue",
            "MetadataWritten": "code3-meta block written into the issue body",
            "LabelsMirrored": f"labels mirrored to the issue: {', '.join(d.get('labels') or []) or 'none'}",
        }
        return "sponsor (publish)", texts.get(kind, kind)
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


def percent(bps: int) -> str:
    """Basis points as a percentage: 6000 → '60%', 3333 → '33.33%'."""
    return f"{int(bps) / 100:g}%"


def shares(relative: list[int]) -> list[str]:
    """A split's relative shares as percentages of their sum (the contract divides by the sum)."""
    total = sum(int(s) for s in relative)
    return [f"{int(s) * 100 / total:.4g}%" if total else "0%" for s in relative]


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


# --- who and how much: the sections beside the timeline ---------------------------------------------------------------

LINK_SCHEMES = ("https://", "http://", "local://")  # the web, and the embedded forge's own URLs


def web_href(url: str | None) -> str | None:
    """A URL from the log as a link only when it is a forge's address (a worker signs any text into submit_pr: never
    a `javascript:` or `data:` link); any other text is shown, not linked."""
    if url and url.lower().startswith(LINK_SCHEMES) and not any(c.isspace() or ord(c) < 32 for c in url):
        return url
    return None


def logins(s: Any, bounty: Bounty, addresses: set[str]) -> dict[str, str]:
    """The forge login linked to each address (under the bounty's resolver when it has one there, else under any),
    from the board's identity links, one indexed read per address."""
    from projections import board

    found: dict[str, str] = {}
    for address in sorted(a for a in addresses if a):
        links = board.links(s.views, account=address)
        if links:
            mine = [link for link in links if link["resolver"] == bounty.resolver]
            found[address] = str((mine or links)[0]["login"])
    return found


def rejection_text(label: str) -> str:
    from domain.contract import Rejection
    from mcp_tools.lifecycle.forge_mirror import REJECTION_TEXT

    try:
        return REJECTION_TEXT.get(int(Rejection[label.upper().replace("-", "_")]), label)
    except KeyError:
        return label


def money_sections(s: Any, bounty: Bounty, now: int) -> dict[str, Any]:
    """What `code3 bounty show` tells, as the page shows it: submissions (with each worker's forge login when linked),
    rejections, the open dispute, rulings, the split, payouts, funders and refunds, tips. Amounts with their human
    value."""
    from domain.amounts import display
    from mcp_tools.web.render import duration, when

    def money(value: Any) -> str:
        return display(int(value or 0), bounty.asset)

    split = bounty.split or {}
    people = {*bounty.submissions, *(r["worker"] for r in bounty.rejections), bounty.winner or "",
              (bounty.dispute or {}).get("by") or "", *(r["claimant"] for r in bounty.rulings),
              *(p["to"] for p in bounty.payouts), *split.get("recipients", []), *(t["to"] for t in bounty.tips)}
    login = logins(s, bounty, people)
    submissions = [{"worker": worker, "login": login.get(worker), "pr_url": sub.get("pr_url", ""),
                    "href": web_href(sub.get("pr_url")), "commit": str(sub.get("commit_sha") or "")[:12],
                    "state": sub.get("state", "live"), "winner": bounty.merged_pr == sub.get("pr_url")
                    and bounty.winner == worker}
                   for worker, sub in bounty.submissions.items()]
    rejections = [{"worker": r["worker"], "login": login.get(r["worker"]), "pr_url": r["pr_url"],
                   "href": web_href(r["pr_url"]), "reason": r["reason"], "why": rejection_text(r["reason"]),
                   "tx_hash": r.get("tx_hash")} for r in bounty.rejections]
    dispute = None
    if bounty.dispute is not None:
        d = bounty.dispute
        rule_by = d.get("rule_by")
        dispute = {"by": d["by"], "login": login.get(d["by"]),
                   "role": "the sponsor" if d["by"] == bounty.sponsor else "a worker",
                   "reason": d.get("reason") or "(not recorded: the mirror adopted it from the chain)",
                   "rule_by": when(rule_by), "left": duration(rule_by - now) if rule_by else None,
                   "unruled": ("the winner is paid" if d["by"] == bounty.sponsor
                               else "the refund may go ahead"), "tx_hash": d.get("tx_hash")}
    rulings = [{"claimant": r["claimant"], "login": login.get(r["claimant"]), "share": percent(r["share_bps"]),
                "paid": money(r["paid"]), "refunded": money(r["refunded"]), "by": r.get("by"),
                "reason": r.get("reason"), "tx_hash": r.get("tx_hash")} for r in bounty.rulings]
    split_rows = [{"to": to, "login": login.get(to), "share": share}
                  for to, share in zip(split.get("recipients", []), shares(split.get("shares", [])), strict=False)]
    payouts = [{"to": p["to"], "login": login.get(p["to"]), "amount": money(p["amount"])} for p in bounty.payouts]
    refunded = bounty.refund_total > 0
    funders = [{"address": funder, "put_in": money(put_in), "role": "sponsor" if funder == bounty.sponsor else "",
                "refund": money(bounty.refunds[funder]) if funder in bounty.refunds
                else ("not withdrawn yet" if refunded else "—")}
               for funder, put_in in bounty.funders.items()]
    tips = [{"tipper": t["tipper"], "to": t["to"], "login": login.get(t["to"]), "amount": money(t["amount"]),
             "tx_hash": t.get("tx_hash")} for t in bounty.tips]
    return {"submissions": submissions, "rejections": rejections, "dispute": dispute, "rulings": rulings,
            "split": split_rows, "payouts": payouts, "funders": funders, "refund_total": money(bounty.refund_total),
            "refunded": refunded, "withdrawn": money(sum(bounty.refunds.values())), "tips": tips,
            "winner_login": login.get(bounty.winner or "")}


def mirrored_comments(bounty: Bounty, events: list[Any]) -> list[dict[str, str]]:
    """The status comment the forge mirror writes on the issue for each transition (one per chain event)."""
    from mcp_tools.lifecycle.forge_mirror import TRANSITIONS, status_text

    return [{"at": e.timestamp.strftime("%Y-%m-%d %H:%M UTC"),
             "text": status_text(bounty.bounty_id, e, bounty.asset, bounty.amount)}
            for e in events if isinstance(e, TRANSITIONS)]


# --- verify, for one bounty -------------------------------------------------------------------------------------------

@dataclass
class Checked:
    problems: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_bounty(s: Any, bounty: Bounty, issue: Issue | None, events: list[Any]) -> Checked:
    """`audit verify` for one bounty: replay against the repository, its board row against one rebuilt from the same
    events, and the mirror against the chain (`audit._disagreements`, the whole-log verify's own check)."""
    from adapters.sql import SqlDb
    from mcp_tools.lifecycle.audit import _disagreements
    from projections import board
    from projections.board import BountyBoard
    from projections.versions import ready

    result = Checked()
    for aggregate in (bounty, issue):
        if aggregate is None:
            continue
        state = None
        for event in s.store.repository.event_store.get(aggregate.id):
            state = event.mutate(state)
        if _comparable(state) != _comparable(aggregate):
            result.problems.append(f"{type(aggregate).__name__} {aggregate.id} differs between replay and repository")
    result.checks.append("replayed events = repository")
    fresh = SqlDb.sqlite(Path(":memory:"))
    try:
        projector = BountyBoard()
        ready(fresh, projector)  # the tables at this code's version (else the first read would empty them)
        with fresh.transaction() as cur:
            for event in events:
                projector.apply(event, cur)
        rebuilt = board.rows(fresh, "WHERE bounty_id = ?", (bounty.bounty_id,))
    finally:
        fresh.close()
    live = board.rows(s.views, "WHERE bounty_id = ?", (bounty.bounty_id,))
    if rebuilt != live:
        result.problems.append("the board row differs from one rebuilt from this bounty's events"
                               + ("" if live else " (the board has no row for it yet)"))
    result.checks.append("board row = rebuilt from the events")
    try:
        result.problems += _disagreements(s, bounty)
        result.checks.append("mirror = chain")
    except Exception as exc:  # the chain is away: say so, do not fail the page
        result.problems.append(f"the chain could not be read ({type(exc).__name__}): not compared")
    return result


def _comparable(aggregate: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(aggregate).items() if k != "_pending_events"}


# --- routes -----------------------------------------------------------------------------------------------------------

def routes(web: Any) -> list[BaseRoute]:
    from mcp_tools.web.board import catch_up_board, chain_now

    def not_found(message: str) -> Response:
        return page("message.html", status=404, title="No such bounty", message=message, port=0,
                    show_login_help=False, live=None)

    async def bounty_page(request: Request) -> Response:
        bounty_id = request.path_params["bounty_id"]

        def read(s: Any) -> dict[str, Any]:
            catch_up_board(s)
            bounty, issue, events = load(s, bounty_id)
            number = issue.number if issue is not None else None
            issue_url = f"{s.forge.repo_url(bounty.repo)}/issues/{number}" if number else None
            now = chain_now(s)
            state = outcome(bounty, events)
            return {"bounty": bounty, "issue": issue, "issue_url": issue_url, "state": state,
                    "state_class": state_class(state), "timeline": timeline(bounty, events),
                    "comments": mirrored_comments(bounty, events),
                    "verified": verify_bounty(s, bounty, issue, events), "now": now,
                    "cooling_left": (bounty.cooling_until - now) if bounty.status == Status.COOLING_DOWN
                    and bounty.cooling_until else None,
                    "serve_address": s.signer.address, **money_sections(s, bounty, now)}

        try:
            found = await web.read(read)
        except NotFound as exc:
            return not_found(str(exc))
        from domain.amounts import display

        b = found["bounty"]
        return page("bounty.html", nav="", live=f"bounty:{b.bounty_id}", amount=display(b.amount, b.asset),
                    pool=display(b.pool, b.asset), **found)

    async def export(request: Request) -> Response:
        bounty_id = request.path_params["bounty_id"]

        def read(s: Any) -> bytes:
            from projections.audit_log import export_lines

            bounty, _, events = load(s, bounty_id)
            lines = export_lines(enumerate(events, 1), s.signer, scope={"bounty_id": bounty.bounty_id})
            return "".join(lines).encode()

        try:
            body = await web.read(read)
        except NotFound as exc:
            return not_found(str(exc))
        return Response(body, media_type="application/x-ndjson", headers={
            "Content-Disposition": f'attachment; filename="code3-bounty-{bounty_id}-audit.jsonl"'})

    return [Route("/bounties/{bounty_id}", bounty_page, methods=["GET"]),
            Route("/bounties/{bounty_id}/export", export, methods=["GET"])]
