"""The identity links page (`/links`): which forge account is linked to which chain address, under which resolver.

A bounty pays the forge account that wrote the merged PR through the address linked to it, so who could be paid
for whose work is public: the chain recorded each link after checking the address's signature, and the board
projection mirrors them (`board_links`, read with `projections.bounties.board.links`). The board is caught up with
the log before it is read, as the other pages do. Logins are whatever the forge reported: shown escaped, like every
value. Behind the web gate as every page but /login and /static (`app.WebGate`); joins the site's navigation.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from mcp_tools.web.refusals import port_of, refusal
from mcp_tools.web.render import page

NAV_LINK = ("/links", "Identity links", "links")
PAGE_SIZE = 100
MAX_PAGE = 100_000


class BadPage(ValueError):
    pass


def page_number(raw: str) -> int:
    raw = raw.strip() or "1"
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= MAX_PAGE:
        raise BadPage(f"page {raw[:20]!r} is not a page number (1 to {MAX_PAGE})")
    return int(raw)


def read_links(s: Any, number: int) -> dict[str, Any]:
    """One page of the links (by login, then resolver) and this serve's address (no chain read: a page never waits
    on a node)."""
    from mcp_tools.web.board import catch_up_board
    from projections.bounties import board

    catch_up_board(s)
    start = (number - 1) * PAGE_SIZE
    shown = board.links(s.views, limit=PAGE_SIZE, offset=start)  # a page, read by the database
    total = board.links_count(s.views)
    return {"links": shown, "total": total, "first": start + 1, "last": start + len(shown),
            "page_number": number, "more": start + PAGE_SIZE < total, "serve_address": s.signer.address}


def routes(web: Any) -> list[BaseRoute]:
    from mcp_tools.web.render import NAV_LINKS

    if NAV_LINK not in NAV_LINKS:
        NAV_LINKS.append(NAV_LINK)

    async def links_page(request: Request) -> Response:
        try:
            number = page_number(str(request.query_params.get("page", "")))
        except BadPage as exc:
            return refusal(400, "This page number cannot be used", str(exc), port_of(request.scope))
        found = await web.read(lambda s: read_links(s, number))
        return page("links.html", nav="links", live="all", **found)

    return [Route("/links", links_page, methods=["GET"])]
