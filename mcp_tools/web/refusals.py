"""The web page's refusals, as HTML pages a person in a browser reads (`templates/message.html`): a page that
cannot be shown (400, 404), a request from another site (403), a method the read-only page does not take (405)
and a request without a session (401, with how to get one).

A leaf module: the gate (`app.WebGate`) and every page (`board`, `links`, `knowledge`, …) answer with these,
and none of them needs the module that assembles the routes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

from mcp_tools.web.render import page


def port_of(scope: Mapping[str, Any]) -> int:
    """The port the request came in on (the login URL and the session cookie are bound to it); 0 when unknown."""
    server = scope.get("server")
    return int(server[1]) if server and server[1] is not None else 0


def refusal(status: int, title: str, message: str, port: int, headers: dict[str, str] | None = None) -> Response:
    """The page saying why a request is refused; a 401 adds how to sign in."""
    return page("message.html", status=status, headers=headers, title=title, message=message, port=port,
                show_login_help=status == 401, live=None)


def unauthorized(port: int, reason: str = "") -> Response:
    """401: this page needs a session (opened by the URL `code3 serve --print-url` prints); `reason` says why the
    one presented was refused."""
    message = (f"{reason}. " if reason else "") + "This page needs a session: open the URL that " \
        "`code3 serve --print-url` prints."
    response = refusal(401, "Sign in with a login URL", message, port)
    response.headers["WWW-Authenticate"] = 'Bearer realm="code3"'
    return response
