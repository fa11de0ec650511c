"""The board page at `/`: bounties filtered, sorted and paged by the database, with the totals beside them.

The filters are a GET form (a link to a filtered board can be shared and reloaded); every value is checked
against what the board can hold before it reaches SQL, and a value it cannot hold is a 400 page that says
so, never a silently empty board. The board is caught up with the log before it is read (only when the log
is ahead of it: an idle page costs two small reads), so the page shows this process's own writes at once.

A row shows the pool beside the published amount when later funds made them differ, and a "disputed" badge beside
the state while a dispute waits for the resolver's ruling. The identity links page (`links.py`) reads the same
projection and is routed from here.
"""

from __future__ import annotations

import re
import time
import weakref
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from domain.bounties.contract import Status

PAGE_SIZE = 50
MAX_PAGE = 100_000
# the board's states as the page names them (the contract's), and the cancellations told apart
STATES: dict[str, tuple[str, ...]] = {
    "open": (Status.OPEN.name,), "started": (Status.STARTED.name,), "pr_submitted": (Status.PR_SUBMITTED.name,),
    "merged": (Status.MERGED.name,), "cooling": (Status.COOLING_DOWN.name,), "paid": (Status.PAID.name,),
    "cancelled": (Status.CANCELLED.name,), "refunded": (Status.CANCELLED.name,),
    "disputed": (Status.CANCELLED.name,),
}
OUTCOME_STATES = ("refunded", "disputed")  # cancellations told apart (projections.bounties.board_outcomes)
# how the page names an outcome: "disputed" is a bounty the resolver's ruling refunded (the v1 contract's dispute
# refunded the sponsor at once); a dispute still open is a badge beside the state, not a state
OUTCOME_LABELS = {"refunded": "refunded", "disputed": "refunded by ruling"}
FILTER_LABELS = {key: key.replace("_", " ") for key in STATES} | {"disputed": "refunded by ruling"}
STATE_LABELS = {Status.OPEN.name: "open", Status.STARTED.name: "started", Status.PR_SUBMITTED.name: "PR submitted",
                Status.MERGED.name: "merged", Status.COOLING_DOWN.name: "cooling", Status.PAID.name: "paid",
                Status.CANCELLED.name: "cancelled"}
SORTS = {"newest": "newest first", "amount": "largest amount first", "deadline": "soonest deadline first"}
MODES = ("exclusive", "contest")
REPO = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")
ASSET = re.compile(r"[A-Za-z0-9_]{1,32}")


class BadFilter(ValueError):
    pass


@dataclass(frozen=True)
class Filters:
    state: str = ""
    repo: str = ""
    asset: str = ""
    mode: str = ""
    sort: str = "newest"
    page: int = 1

    @classmethod
    def parse(cls, params: Any) -> Filters:
        def one(name: str) -> str:
            return str(params.get(name, "")).strip()

        state, repo, asset, mode, sort = one("state"), one("repo"), one("asset"), one("mode"), one("sort") or "newest"
        if state and state not in STATES:
            raise BadFilter(f"state {state[:40]!r} is not one of {', '.join(STATES)}")
        if repo and not REPO.fullmatch(repo):
            raise BadFilter(f"repository {repo[:80]!r} is not owner/name")
        if asset and not ASSET.fullmatch(asset):
            raise BadFilter(f"asset {asset[:40]!r} is not an asset symbol")
        if mode and mode not in MODES:
            raise BadFilter(f"mode {mode[:40]!r} is not exclusive or contest")
        if sort not in SORTS:
            raise BadFilter(f"sort {sort[:40]!r} is not one of {', '.join(SORTS)}")
        raw_page = one("page") or "1"
        if not raw_page.isdigit() or not 1 <= int(raw_page) <= MAX_PAGE:
            raise BadFilter(f"page {raw_page[:20]!r} is not a page number (1 to {MAX_PAGE})")
        return cls(state, repo, asset, mode, sort, int(raw_page))

    def query(self, **changes: Any) -> str:
        values = {"state": self.state, "repo": self.repo, "asset": self.asset, "mode": self.mode, "sort": self.sort,
                  "page": self.page, **changes}
        kept = {k: v for k, v in values.items() if v and not (k == "sort" and v == "newest")
                and not (k == "page" and v == 1)}
        return "?" + urlencode(kept) if kept else "?"


def read_board(s: Any, filters: Filters, now: int) -> dict[str, Any]:
    """One page of rows (one more is read to know whether a next page exists) and the totals, from the board
    caught up with the log."""
    from projections.bounties import board
    from projections.bounties.board_outcomes import outcomes_of, with_outcome
    from projections.bounties.board_outcomes import totals as running_totals

    catch_up_board(s)
    offset = (filters.page - 1) * PAGE_SIZE
    if filters.state in OUTCOME_STATES:
        where, params = ["state = ?"], [Status.CANCELLED.name]
        for column, value in (("repo", filters.repo), ("asset", filters.asset), ("mode", filters.mode)):
            if value:
                where.append(f"{column} = ?")
                params.append(value)
        condition, more_params = with_outcome(filters.state)
        rows = board.rows(s.views, "WHERE " + " AND ".join([*where, condition]), (*params, *more_params),
                          order=board.ORDERS[filters.sort], limit=PAGE_SIZE + 1, offset=offset)
    else:
        rows = board.query(s.views, states=STATES.get(filters.state, ()), repo=filters.repo or None,
                           asset=filters.asset or None, mode=filters.mode or None, order=filters.sort,
                           limit=PAGE_SIZE + 1, offset=offset)
    shown = rows[:PAGE_SIZE]
    outcomes = outcomes_of(s.views, [r["bounty_id"] for r in shown if r["state"] == Status.CANCELLED.name])
    totals = running_totals(s.views)  # kept as running sums: no scan of the board per view
    from mcp_tools.web.people import People

    who = People(s)
    return {"rows": [_row(s, r, now, who, outcomes.get(r["bounty_id"])) for r in shown], "more": len(rows) > PAGE_SIZE,
            "first": offset + 1, "last": offset + len(shown), "totals": totals}


_CAUGHT_UP: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()  # views → log head last followed


def catch_up_board(s: Any) -> None:
    """The board and the cancellations' outcomes caught up with the log, so a page shows what was written a moment
    ago, by this process or any other. When the log's head has not moved since this process last caught them up,
    that one read is all (each follow costs round trips to the database even when there is nothing to apply)."""
    from projections.bounties.board import BountyBoard
    from projections.bounties.board_outcomes import BoardOutcomes
    from projections.runner import follow

    head = int(s.store.recorder.max_notification_id() or 0)
    if _CAUGHT_UP.get(s.views) == head:
        return
    follow(s.store, s.views, BountyBoard())
    follow(s.store, s.views, BoardOutcomes())
    _CAUGHT_UP[s.views] = head


_CLOCK: dict[int, tuple[float, float]] = {}  # id(chain) → (chain time − wall time, when it was read)
CLOCK_TTL_S = 60.0


def chain_now(s: Any) -> int:
    """The chain's time, which cooling countdowns run on. The embedded ledger's clock can be moved (`code3 ledger
    advance`), so it is read each time (a local read); a remote chain's is read once a minute and carried by the wall
    clock in between (a page never waits on a node), and the wall clock stands in while the node does not answer."""
    if hasattr(s.chain, "advance"):
        return int(s.chain.now())
    known = _CLOCK.get(id(s.chain))
    if known is None or time.monotonic() - known[1] > CLOCK_TTL_S:
        try:
            known = (s.chain.now() - time.time(), time.monotonic())
        except Exception:
            known = (known[0] if known else 0.0, time.monotonic())
        _CLOCK[id(s.chain)] = known
    return int(time.time() + known[0])


def _row(s: Any, row: dict[str, Any], now: int, who: Any, outcome: str | None = None) -> dict[str, Any]:
    """A board row as the page shows it: every cell's text made here, so the template only places strings. The
    issue's title is the forge's (`issues.issue_ref`); its link opens (`forge_pages.page_href`); a settled bounty
    shows no deadline."""
    from domain.bounties.amounts import display
    from mcp_tools.web.forge_pages import page_href
    from mcp_tools.web.issues import display_title, issue_ref, number_of
    from mcp_tools.web.render import duration, when

    number = number_of(row.get("task_id"))
    ref = issue_ref(s, row["repo"], number) if number else None
    settled = row["state"] in (Status.PAID.name, Status.CANCELLED.name)
    cooling = row.get("cooling_until")
    cooling_left = (cooling - now) if cooling and row["state"] == Status.COOLING_DOWN.name else None
    pool = row.get("pool")
    state = OUTCOME_LABELS.get(outcome, outcome) if outcome else STATE_LABELS.get(row["state"], row["state"].lower())
    rule_by = row.get("rule_by")
    return {"bounty_id": row["bounty_id"], "repo": row["repo"], "task_id": row.get("task_id") or "",
            "issue_url": (page_href(ref.url if ref is not None else f"{s.forge.repo_url(row['repo'])}/issues/{number}")
                          if number else None) or "",
            "title": display_title(ref.title) if ref is not None else "", "sponsor": who(row.get("sponsor")),
            "amount": row["amount_display"],
            "pool": display(pool, row["asset"]) if pool and pool != row["amount"] else "",
            "state": state, "state_class": state.lower().replace(" ", "_") if outcome else row["state"].lower(),
            "disputed": bool(row.get("disputed_by")),
            "dispute_note": f"disputed: the resolver rules by {when(rule_by)}" if rule_by else "disputed",
            "mode": row.get("mode") or "—", "workers": str(len(row["workers"])),
            "deadline": "—" if settled else when(row.get("deadline")),
            "cooling": f"{duration(cooling_left)} left" if cooling_left is not None else "—"}


def board_html(s: Any, params: Any) -> tuple[int, str]:
    """The board page for the query `params` (a mapping): (status, HTML), read and rendered in the calling thread
    (the route runs it off the event loop; `benchmarks.web_board` times it)."""
    from mcp_tools.web.render import environment

    try:
        filters = Filters.parse(params)
    except BadFilter as exc:
        html = environment().get_template("message.html").render(
            title="This board filter cannot be used", message=str(exc), port=0, show_login_help=False, live=None)
        return 400, html
    now = chain_now(s)
    found = read_board(s, filters, now)
    html = environment().get_template("board.html").render(
        nav="board", live="board", filters=filters, states=FILTER_LABELS, sorts=SORTS, modes=MODES, now=now, **found)
    return 200, html


def routes(web: Any) -> list[BaseRoute]:
    async def board_page(request: Request) -> Response:
        params = dict(request.query_params)

        def timed(s: Any) -> tuple[int, str, float]:
            started = time.perf_counter()
            status, html = board_html(s, params)
            return status, html, (time.perf_counter() - started) * 1000

        status, html, took_ms = await web.read(timed)
        # the server's own time for the page (read and render), for the growth table (`benchmarks.web_board`)
        return HTMLResponse(html, status_code=status, headers={"Server-Timing": f"app;dur={took_ms:.2f}"})

    return [Route("/", board_page, methods=["GET"])]
