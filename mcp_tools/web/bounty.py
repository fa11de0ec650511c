"""The bounty page (`/bounties/<id>`): its timeline, PRs, mirrored labels and comments, whether `audit verify`
holds for it, and a signed export of its events (`/bounties/<id>/export`).

The timeline is every event of the Bounty aggregate and of its Issue, read from the event log (never from a
view), merged in the order they were recorded. The per-bounty verify is the whole-log `audit verify` narrowed to
one bounty: its events replayed against the repository, against its board row (rebuilt in a scratch database from
the same events) and against the chain. The export is the whole log's export format (`projections.audit_log`)
over this bounty's events only, so `code3 audit check FILE` verifies its hash chain and signature.
"""

from __future__ import annotations

import heapq
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
    """(actor, what happened) for one event, in words."""
    from domain.amounts import display

    d = vars(event)
    kind = type(event).__name__
    amount = display(bounty.amount, bounty.asset)
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
    texts = {
        "Created": (d.get("sponsor"), f"bounty created on chain: {amount} escrowed, mode {d.get('mode')}"),
        "Accepted": (d.get("worker"), "accepted the task"),
        "Withdrawn": (d.get("worker"), "withdrew from the task"),
        "PRSubmitted": (d.get("worker"), f"submitted {d.get('pr_url')}"),
        "Merged": ("resolver", f"reported {d.get('pr_url')} merged; winner {d.get('winner')}"),
        "CoolingStarted": ("chain", "cooling period started"),
        "Paid": (d.get("winner"), f"paid {display(d.get('amount') or 0, bounty.asset)}"),
        "Cancelled": (d.get("refund_to"), ("disputed during cooling" if d.get("disputed") else "cancelled")
                      + f": {amount} refunded"),
        "Reconciled": ("Code3 (chain sync)", "the mirror disagreed with the chain and adopted the chain's state"),
        "BecameClaimable": ("Code3 worker", "cooling over: the winner may claim"),
        "MergeReported": ("webhook", f"merge delivery handled for {d.get('pr_url')}"),
    }
    actor, text = texts.get(kind, ("", kind))
    return str(actor or ""), text


def timeline(bounty: Bounty, events: list[Any]) -> list[dict[str, Any]]:
    items = []
    for number, event in enumerate(events, 1):
        actor, text = describe(event, bounty)
        coords = getattr(event, "coords", None) or {}
        items.append({"n": number, "kind": f"{type(event).__qualname__.split('.')[0]}.{type(event).__name__}",
                      "at": event.timestamp.strftime("%Y-%m-%d %H:%M:%S UTC"), "iso": event.timestamp.isoformat(),
                      "actor": actor, "text": text, "tx_hash": coords.get("tx_hash"), "version": coords.get("version")})
    return items


def outcome(bounty: Bounty, events: list[Any]) -> str:
    """The state as the page names it: a cancellation is 'refunded' or 'disputed' (what its event carries)."""
    if bounty.status == Status.CANCELLED:
        cancelled = [e for e in events if isinstance(e, Bounty.Cancelled)]
        if cancelled:
            return "disputed" if cancelled[-1].disputed else "refunded"
        return "cancelled"
    from mcp_tools.web.board import STATE_LABELS

    return STATE_LABELS.get(Status(bounty.status).name, Status(bounty.status).name.lower())


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
            return {"bounty": bounty, "issue": issue, "issue_url": issue_url, "state": outcome(bounty, events),
                    "timeline": timeline(bounty, events), "comments": mirrored_comments(bounty, events),
                    "verified": verify_bounty(s, bounty, issue, events), "now": now,
                    "cooling_left": (bounty.cooling_until - now) if bounty.status == Status.COOLING_DOWN
                    and bounty.cooling_until else None}

        try:
            found = await web.read(read)
        except NotFound as exc:
            return not_found(str(exc))
        from domain.amounts import display

        b = found["bounty"]
        return page("bounty.html", nav="", live=f"bounty:{b.bounty_id}", amount=display(b.amount, b.asset),
                    **found)

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
