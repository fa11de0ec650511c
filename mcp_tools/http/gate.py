"""The gate every request to `code3 serve` passes first (`Front`): the serve token as `Authorization: Bearer
<token>` on every route but the webhook (authenticated by its HMAC signature) and the probes, and on every route
but the webhook a Host and Origin that are the server's own (DNS-rebinding protection, the same rule the SDK
applies on /mcp). The web page's paths go to its own gate (`mcp_tools.web.app.WebGate`), which answers its
refusals in HTML with the same checks (`authorized`, `misdirected`).

For POST /mcp the front also caps the body (`limits`) and answers a body that is not JSON-RPC itself (`jsonrpc`).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable, Mapping
from typing import Any

import anyio

from mcp_tools.http.jsonrpc import error_data_on, json_rpc_problem
from mcp_tools.http.limits import MAX_MCP_BODY, TooLarge, declared_length, read_capped, replay
from mcp_tools.http.tokens import LiveToken

LOOPBACK = ("127.0.0.1", "localhost", "::1")
WEBHOOK_PATH = "/webhooks/github"  # GitHub's deliveries come through a tunnel: their Host is the tunnel's
OPEN_PATHS = frozenset({WEBHOOK_PATH, "/healthz", "/readyz"})  # the webhook has its HMAC; health says nothing


def authorized(scope: Mapping[str, Any], token: bytes) -> bool | None:
    """True for the right bearer token, False for a wrong one, None when none was sent (constant-time compare)."""
    values = [v for k, v in scope.get("headers", []) if k == b"authorization"]
    if not values:
        return None
    if len(values) > 1:
        return False
    scheme, _, given = values[0].partition(b" ")
    if scheme.lower() != b"bearer":
        return False
    return hmac.compare_digest(given.strip(), token)


# --- the Host check ---------------------------------------------------------------------------------------------------

def host_security(host: str) -> Any:
    """The SDK's DNS-rebinding settings for a server bound to `host`: on loopback, only loopback Host and Origin
    headers (the SDK's own defaults); None (no check) when bound elsewhere, as the SDK does."""
    from mcp.server.transport_security import TransportSecuritySettings

    if host not in LOOPBACK:
        return None
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                                     allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])


def _allowed(value: str, allowed: list[str]) -> bool:
    return value in allowed or any(a.endswith(":*") and value.startswith(a[:-1]) for a in allowed)


def misdirected(scope: dict[str, Any], security: Any) -> tuple[int, str] | None:
    """(status, message) for a request whose Host (421) or Origin (403) header is not the server's own, as the
    SDK answers on /mcp; one check for every route (/mcp, /api, the page), so a web page that rebinds a name
    to 127.0.0.1 reaches none of them."""
    if security is None:
        return None
    headers = {k: v for k, v in scope.get("headers", [])}
    host = headers.get(b"host", b"").decode("latin-1")
    if not host or not _allowed(host, security.allowed_hosts):
        return 421, "the Host header names another server (DNS-rebinding protection): connect to the address " \
                    "code3 serve printed (127.0.0.1 or localhost)"
    origin = headers.get(b"origin", b"").decode("latin-1")
    if origin and not _allowed(origin, security.allowed_origins):
        return 403, "requests from another site's page are refused (the Origin header is not this server's)"
    return None


# --- the front --------------------------------------------------------------------------------------------------------

class Front:
    """ASGI in front of the SDK's app: the serve token on every route but the open ones, and JSON-RPC
    parse/invalid-request errors for POST /mcp."""

    def __init__(self, app: Any, token: bytes | LiveToken, mcp_path: str = "/mcp", security: Any = None) -> None:
        self.app = app
        self.tokens = token if isinstance(token, LiveToken) else LiveToken(token)
        self.mcp_path = mcp_path
        self.security = security  # the Host/Origin check (`host_security`), None when bound off loopback
        self.ready: Callable[[], str | None] | None = None  # /readyz's question (`health.readiness`), set by build_app
        self.web: Any = None  # the web page's gate (`mcp_tools.web.app.WebGate`), set by build_app

    @property
    def token(self) -> bytes:
        return self.tokens.current()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if self.web is not None and self.web.owns(path):  # the web page answers its refusals in HTML
            await self.web(scope, receive, send, self.app)
            return
        problem = None if path == WEBHOOK_PATH else misdirected(scope, self.security)
        if problem is not None:
            await _json(send, problem[0], {"error": "misdirected", "message": problem[1]})
            return
        if path not in OPEN_PATHS:
            verdict = authorized(scope, self.token)
            if not verdict:
                await _unauthorized(send, presented=verdict is False)
                return
        if path == self.mcp_path and scope.get("method") == "POST":
            try:
                body = await read_capped(receive, MAX_MCP_BODY, declared_length(scope))
            except TooLarge:
                await _json(send, 413, {"error": "request body too large"}, headers=[(b"connection", b"close")])
                return
            except anyio.EndOfStream:
                return
            error = json_rpc_problem(body)
            if error is not None:
                await _json(send, 400, error)
                return
            receive = replay(body, receive)
        if path == self.mcp_path:
            send = error_data_on(send)
        await self.app(scope, receive, send)


async def _json(send: Any, status: int, body: dict[str, Any], headers: tuple[tuple[bytes, bytes], ...] | list[Any] = ()
                ) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": data})


async def _unauthorized(send: Any, presented: bool) -> None:
    challenge = b'Bearer realm="code3"' + (b', error="invalid_token"' if presented else b"")
    await _json(send, 401, {"error": "unauthorized",
                            "message": "send `Authorization: Bearer <token>`; `code3 serve --print-token` prints "
                                       "the token (or set CODE3_SERVE_TOKEN)"},
                headers=[(b"www-authenticate", challenge)])
