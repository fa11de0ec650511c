"""The bounty page (`/bounties/<id>`): the issue's title and the sponsor's spec (sanitised Markdown), its timeline in
plain words, what `code3 bounty show` tells (the resolver, the pool beside the published amount, submissions,
rejections, the open dispute, rulings, the split, payouts, funders and refunds, tips: people by name where the serve
knows them, `people`), mirrored labels and comments, whether `audit verify` holds for it, and a signed export of its
events (`/bounties/<id>/export`). What no longer applies is left out: a settled bounty shows no deadline.

The timeline (`bounty_timeline`) is every event of the Bounty aggregate and of its Issue, read from the event log
(never from a view), merged in the order they were recorded (`load`). The per-bounty verify (`bounty_check`) is the
whole-log `audit verify` narrowed to one bounty: its events replayed against the repository, against its board row
(rebuilt in a scratch database from the same events) and against the chain. The export is the whole log's export
format (`projections.audit_log`) over this bounty's events only, so `code3 audit check FILE` verifies its hash
chain and signature.
"""

from __future__ import annotations

import heapq
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from domain.bounties.issue import Issue
from mcp_tools.web.bounty_check import verify_bounty
from mcp_tools.web.bounty_timeline import outcome, state_class, timeline
from mcp_tools.web.render import page, percent, shares

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


# --- who and how much: the sections beside the timeline ---------------------------------------------------------------

def rejection_text(label: str) -> str:
    from domain.bounties.contract import Rejection
    from mcp_tools.lifecycle.forge_mirror import REJECTION_TEXT

    try:
        return REJECTION_TEXT.get(int(Rejection[label.upper().replace("-", "_")]), label)
    except KeyError:
        return label


def money_sections(bounty: Bounty, now: int, who: Any) -> dict[str, Any]:
    """What `code3 bounty show` tells, as the page shows it: submissions, rejections, the open dispute, rulings, the
    split, payouts, funders and refunds, tips; each person by name where the serve knows one (`who`, a
    `people.People`). Amounts with their human value."""
    from domain.bounties.amounts import display
    from mcp_tools.web.bounty_timeline import pr_label
    from mcp_tools.web.forge_pages import page_href
    from mcp_tools.web.render import duration, when

    def money(value: Any) -> str:
        return display(int(value or 0), bounty.asset)

    split = bounty.split or {}
    submissions = [{"worker": who(worker), "pr_url": sub.get("pr_url", ""), "pr": pr_label(sub.get("pr_url")),
                    "href": page_href(sub.get("pr_url")), "commit": str(sub.get("commit_sha") or "")[:12],
                    "state": sub.get("state", "live"), "winner": bounty.merged_pr == sub.get("pr_url")
                    and bounty.winner == worker}
                   for worker, sub in bounty.submissions.items()]
    rejections = [{"worker": who(r["worker"]), "pr_url": r["pr_url"], "pr": pr_label(r["pr_url"]),
                   "href": page_href(r["pr_url"]), "reason": r["reason"], "why": rejection_text(r["reason"]),
                   "tx_hash": r.get("tx_hash")} for r in bounty.rejections]
    dispute = None
    if bounty.dispute is not None:
        d = bounty.dispute
        rule_by = d.get("rule_by")
        dispute = {"by": who(d["by"]),
                   "role": "the sponsor" if d["by"] == bounty.sponsor else "a worker",
                   "reason": d.get("reason") or "(not recorded: the mirror adopted it from the chain)",
                   "rule_by": when(rule_by), "left": duration(rule_by - now) if rule_by else None,
                   "unruled": ("the winner is paid" if d["by"] == bounty.sponsor
                               else "the refund may go ahead"), "tx_hash": d.get("tx_hash")}
    rulings = [{"claimant": who(r["claimant"]), "share": percent(r["share_bps"]),
                "paid": money(r["paid"]), "refunded": money(r["refunded"]), "by": who(r["by"]) if r.get("by") else None,
                "reason": r.get("reason"), "tx_hash": r.get("tx_hash")} for r in bounty.rulings]
    split_rows = [{"to": who(to), "share": share}
                  for to, share in zip(split.get("recipients", []), shares(split.get("shares", [])), strict=False)]
    payouts = [{"to": who(p["to"]), "amount": money(p["amount"])} for p in bounty.payouts]
    refunded = bounty.refund_total > 0
    funders = [{"address": who(funder), "put_in": money(put_in), "role": "sponsor" if funder == bounty.sponsor else "",
                "refund": money(bounty.refunds[funder]) if funder in bounty.refunds
                else ("not withdrawn yet" if refunded else "—")}
               for funder, put_in in bounty.funders.items()]
    tips = [{"tipper": who(t["tipper"]), "to": who(t["to"]), "amount": money(t["amount"]),
             "tx_hash": t.get("tx_hash")} for t in bounty.tips]
    return {"submissions": submissions, "rejections": rejections, "dispute": dispute, "rulings": rulings,
            "split": split_rows, "payouts": payouts, "funders": funders, "refund_total": money(bounty.refund_total),
            "refunded": refunded, "withdrawn": money(sum(bounty.refunds.values())), "tips": tips,
            "winner": who(bounty.winner) if bounty.winner else None}


UNIX_TIME = re.compile(r"\b(\d{9,11}) \(unix time\)")
ADDRESS = re.compile(r"`(0x[0-9a-f]{64})`")
LOCAL_URL = re.compile(r"local://\S+/(issues|pull)/(\d+)")


def mirrored_comments(bounty: Bounty, events: list[Any], who: Any) -> list[dict[str, Any]]:
    """The status comment the forge mirror writes on the issue for each transition (one per chain event), as a person
    reads it: rendered Markdown (a dispute's reason inside it is a stranger's text: sanitised), times in UTC, known
    addresses by name."""
    from mcp_tools.lifecycle.forge_mirror import TRANSITIONS, status_text
    from mcp_tools.web.markdown import render
    from mcp_tools.web.render import when

    def humane(text: str) -> str:
        text = UNIX_TIME.sub(lambda m: when(int(m.group(1))), text)
        text = LOCAL_URL.sub(lambda m: f"{'PR' if m.group(1) == 'pull' else 'issue'} #{m.group(2)}", text)
        return ADDRESS.sub(lambda m: who(m.group(1)).label, text)

    return [{"at": e.timestamp.strftime("%Y-%m-%d %H:%M UTC"),
             "html": render(humane(status_text(bounty.bounty_id, e, bounty.asset, bounty.amount)))}
            for e in events if isinstance(e, TRANSITIONS)]


def the_issue(s: Any, bounty: Bounty, issue: Issue | None) -> dict[str, Any]:
    """The issue's title, its link (this serve's page for the embedded forge) and the sponsor's spec (its body without
    the code3-meta block) as sanitised Markdown; None where the forge does not answer."""
    from domain.bounties.metadata import strip_block
    from mcp_tools.web.forge_pages import page_href
    from mcp_tools.web.issues import display_title, issue_ref
    from mcp_tools.web.markdown import render

    number = issue.number if issue is not None else None
    if not number:
        return {"issue_url": None, "title": "", "spec": None, "issue_author": ""}
    ref = issue_ref(s, bounty.repo, number)
    url = ref.url if ref is not None else f"{s.forge.repo_url(bounty.repo)}/issues/{number}"
    return {"issue_url": page_href(url), "title": display_title(ref.title) if ref is not None else "",
            "spec": render(strip_block(ref.body)) if ref is not None else None,
            "issue_author": ref.author if ref is not None else ""}


# --- routes -----------------------------------------------------------------------------------------------------------

def routes(web: Any) -> list[BaseRoute]:
    from mcp_tools.web.board import catch_up_board, chain_now

    def not_found(message: str) -> Response:
        return page("message.html", status=404, title="No such bounty", message=message, port=0,
                    show_login_help=False, live=None)

    async def bounty_page(request: Request) -> Response:
        bounty_id = request.path_params["bounty_id"]

        def read(s: Any) -> dict[str, Any]:
            from mcp_tools.web.people import People

            catch_up_board(s)
            bounty, issue, events = load(s, bounty_id)
            who = People(s, bounty.resolver)
            about = the_issue(s, bounty, issue)
            now = chain_now(s)
            state = outcome(bounty, events)
            return {"bounty": bounty, "issue": issue, **about, "state": state, "state_class": state_class(state),
                    "timeline": timeline(bounty, events, who, about["title"]),
                    "comments": mirrored_comments(bounty, events, who),
                    "verified": verify_bounty(s, bounty, issue, events), "now": now,
                    "settled": bounty.status in (Status.PAID, Status.CANCELLED),
                    "cooling_left": (bounty.cooling_until - now) if bounty.status == Status.COOLING_DOWN
                    and bounty.cooling_until else None,
                    "sponsor": who(bounty.sponsor), "resolver": who(bounty.resolver) if bounty.resolver else None,
                    "workers": [who(w) for w in bounty.workers],
                    "serve_address": s.signer.address, **money_sections(bounty, now, who)}

        try:
            found = await web.read(read)
        except NotFound as exc:
            return not_found(str(exc))
        from domain.bounties.amounts import display

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
