"""The web page of `code3 serve`: its routes, and the gate every web request passes first.

The gate (`WebGate`, called by `mcp_tools.http.gate.Front` for every path that is not /mcp, /api, the webhook
or the probes) answers in HTML, for a person in a browser (`refusals`): another Host or Origin → 403 (the same
check as every route, `mcp_tools.http.gate.misdirected`); any method but GET/HEAD → 405 (the page is read-only:
an action added one day must carry a CSRF token besides the SameSite=Strict cookie); no valid session cookie and
no bearer token → 401 with how to get in (`code3 serve --print-url`). /login (it checks its one-time code
itself) and /static (the package's stylesheet and script, no data) need neither.

The routes read through the serve's one set of services but not under the tools' lock: a page never waits
for a long tool call, and reads run off the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from mcp_tools.http.gate import authorized, misdirected
from mcp_tools.web import auth
from mcp_tools.web.refusals import port_of, refusal, unauthorized
from mcp_tools.web.render import STATIC, with_headers

API_PREFIXES = ("/mcp", "/api/", "/webhooks/")
API_PATHS = frozenset({"/mcp", "/api", "/healthz", "/readyz", "/metrics"})
OPEN_WEB = ("/login", "/static/")  # /login checks its code; /static serves the package's files only
READ_METHODS = ("GET", "HEAD")


class Web:
    """What every page handler needs: the serve's services (read without the tools' lock), the current serve
    token (`current_token()`, re-read after `serve --rotate-token`) and the session length."""

    def __init__(self, runtime: Any, current_token: Callable[[], bytes], session_hours: float) -> None:
        self.runtime = runtime
        self.current_token = current_token
        self.session_hours = session_hours
        self.follower: Any = None  # the serve's one log follower for /live (`live.LogFollower`)

    def services(self) -> Any:
        """The serve's services (built once, by whichever call comes first; no lock is held around a read)."""
        return self.runtime.services()

    async def read(self, fn: Callable[[Any], Any]) -> Any:
        """`fn(services)` off the event loop."""
        return await anyio.to_thread.run_sync(lambda: fn(self.services()))


# --- the gate ---------------------------------------------------------------------------------------------------------

def is_web(path: str) -> bool:
    return path not in API_PATHS and not path.startswith(API_PREFIXES)


class WebGate:
    """The web page's own gate (see the module's docstring): `Front` hands it every path it `owns`."""

    def __init__(self, current_token: Callable[[], bytes], security: Any) -> None:
        self.current_token = current_token
        self.security = security

    def owns(self, path: str) -> bool:
        return is_web(path)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any, app: Any) -> None:
        path = scope.get("path", "")
        static = path.startswith("/static/")
        send = with_headers(send, static=static)
        problem = misdirected(scope, self.security)
        if problem is not None:
            await refusal(403, "Refused: another site", problem[1], port_of(scope))(scope, receive, send)
            return
        if scope.get("method") not in READ_METHODS:
            await refusal(405, "This page is read-only",
                          "The web page only shows; it accepts no form or action (a future action would carry a "
                          "CSRF token besides the session cookie).", port_of(scope),
                          headers={"Allow": "GET, HEAD"})(scope, receive, send)
            return
        if not path.startswith(OPEN_WEB):
            token = self.current_token()
            verdict = authorized(scope, token)
            if verdict is None:
                cookie = auth.session_cookie(scope, port_of(scope))
                verdict = cookie is not None and auth.check_session(cookie, token, port_of(scope)).ok
            if not verdict:
                await unauthorized(port_of(scope))(scope, receive, send)
                return
        await app(scope, receive, send)


# --- routes -----------------------------------------------------------------------------------------------------------

def web_routes(runtime: Any, current_token: Callable[[], bytes], session_hours: float) -> list[BaseRoute]:
    """Every route of the web page; `mcp_tools.http.app.build_app` mounts them behind `WebGate`."""
    from starlette.staticfiles import StaticFiles

    from mcp_tools.web import board, bounty, forge_pages, knowledge, links, live

    web = Web(runtime, current_token, session_hours)

    async def login(request: Request) -> Response:
        port = port_of(request.scope)
        code = request.query_params.get("code", "")
        if not code:
            return unauthorized(port, "This login URL has no code")
        verdict = auth.check_code(code, web.current_token(), port)
        if verdict.ok and not await web.read(lambda s: auth.consume(s.views, verdict)):
            verdict = auth.Verdict(False, "this login code was used already (each code is good once)")
        if not verdict.ok:
            return unauthorized(port, verdict.reason[:1].upper() + verdict.reason[1:])
        value, max_age = auth.new_session(web.current_token(), port, web.session_hours)
        response = RedirectResponse("/", status_code=303)
        response.headers["Set-Cookie"] = auth.set_cookie_header(port, value, max_age)
        return response

    routes: list[BaseRoute] = [
        Route("/login", login, methods=["GET"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
        *board.routes(web),
        *links.routes(web),  # the identity links are the board projection's too (board_links)
        *bounty.routes(web),
        *forge_pages.routes(web),  # the embedded forge's issues and PRs, so its local:// links open
        *live.routes(web),
        *knowledge.routes(web),
    ]
    return routes
