"""The bounty page (`/bounties/<id>`): its timeline, what `code3 bounty show` tells (the resolver, the pool beside the
published amount, submissions with each worker's linked forge login, rejections, the open dispute, rulings, the
split, payouts, funders and refunds, tips), mirrored labels and comments, whether `audit verify` holds for it, and a
signed export of its events (`/bounties/<id>/export`).

The timeline (`bounty_timeline`) is every event of the Bounty aggregate and of its Issue, read from the event log
(never from a view), merged in the order they were recorded (`load`). The per-bounty verify (`bounty_check`) is the
whole-log `audit verify` narrowed to one bounty: its events replayed against the repository, against its board row
(rebuilt in a scratch database from the same events) and against the chain. The export is the whole log's export
format (`projections.audit_log`) over this bounty's events only, so `code3 audit check FILE` verifies its hash
chain and signature.
"""

from __future__ import annotations

import heapq
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
    from projections.bounties import board

    found: dict[str, str] = {}
    for address in sorted(a for a in addresses if a):
        links = board.links(s.views, account=address)
        if links:
            mine = [link for link in links if link["resolver"] == bounty.resolver]
            found[address] = str((mine or links)[0]["login"])
    return found


def rejection_text(label: str) -> str:
    from domain.bounties.contract import Rejection
    from mcp_tools.lifecycle.forge_mirror import REJECTION_TEXT

    try:
        return REJECTION_TEXT.get(int(Rejection[label.upper().replace("-", "_")]), label)
    except KeyError:
        return label


def money_sections(s: Any, bounty: Bounty, now: int) -> dict[str, Any]:
    """What `code3 bounty show` tells, as the page shows it: submissions (with each worker's forge login when linked),
    rejections, the open dispute, rulings, the split, payouts, funders and refunds, tips. Amounts with their human
    value."""
    from domain.bounties.amounts import display
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
