"""`build_app`: the ASGI app `code3 serve` runs, assembled from its parts — the SDK's streamable HTTP app at /mcp
(`mcp_tools.server.build_server`), the GitHub webhook, the probes and metrics (`health`), the ai-loom REST twins
under /api, the web page at / (`mcp_tools.web`), and in front of all of them the gate (`gate.Front`).

The webhook, the REST routes and the tools share one Runtime (one set of services, built once) and run
concurrently, each in a worker thread: a slow call (a publish waiting on the forge) stalls no other
(`mcp_tools.binding.Runtime` says what keeps that safe).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse

from mcp_tools.ai_loom.rest import build_rest
from mcp_tools.binding import Runtime
from mcp_tools.http.gate import WEBHOOK_PATH, Front, host_security
from mcp_tools.http.health import add_health_routes, readiness
from mcp_tools.http.limits import MAX_BODY, TooLarge, declared_length, read_capped
from mcp_tools.http.tokens import MIN_TOKEN_LENGTH, LiveToken
from mcp_tools.manifest import Entry
from mcp_tools.server import build_server

log = logging.getLogger("code3.serve")


def build_app(factory: Callable[[], Any], secret: bytes, host: str = "127.0.0.1", profile: str = "all",
              token: bytes | None = None, tools: Iterable[Entry] | None = None, version: str = "0",
              token_file: Path | None = None, session_hours: float = 12.0, stateless: bool = False) -> Front:
    """`token_file`: where the token came from, watched for `serve --rotate-token` (None: fixed, as from
    CODE3_SERVE_TOKEN); `session_hours`: how long a web page login lasts; `stateless` (`serve --stateless`): the
    SDK's stateless streamable HTTP, no MCP session kept between requests, so any serve behind one address answers
    any request (docs/operations.md, "Sessions behind one address", says what a session-less client gives up)."""
    if token is None or len(token) < MIN_TOKEN_LENGTH:
        raise ValueError("code3 serve needs a serve token (see mcp_tools.http.tokens.serve_token)")
    tokens = LiveToken(token, token_file)
    runtime = Runtime(factory)
    server = build_server(factory, profile=profile, runtime=runtime, tools=tools, version=version)

    @server.custom_route(WEBHOOK_PATH, methods=["POST"])
    async def github_webhook(request: Request) -> JSONResponse:
        from mcp_tools.lifecycle.webhook import receive

        try:
            body = await read_capped(request.receive, MAX_BODY, declared_length(request.scope))
        except TooLarge:
            log.warning("refused a webhook body over %d bytes", MAX_BODY)
            # `Connection: close`: the server stops reading the rest instead of draining it
            return JSONResponse({"error": f"payload too large (over {MAX_BODY} bytes)"}, status_code=413,
                                headers={"Connection": "close"})
        except anyio.EndOfStream:
            return JSONResponse({"error": "the client went away"}, status_code=400)
        headers = dict(request.headers)
        answer = await anyio.to_thread.run_sync(lambda: runtime.run(lambda s: receive(s, secret, headers, body)))
        return JSONResponse(answer.body, status_code=answer.status)

    add_health_routes(server, runtime, tokens.current)
    security = host_security(host)  # the same Host/Origin rule in the SDK's transport and in `Front`
    app = server.streamable_http_app(host=host, transport_security=security, stateless_http=stateless)
    # the ai-loom REST twins (/api/annotations, /api/stitch, /api/openapi.json, /api/docs): the same handlers
    # and the same Runtime (the same services) as the tools; behind `Front`, so the serve token guards them as it
    # does /mcp
    app.mount("/api", build_rest(runtime.run))
    from mcp_tools.web.app import WebGate, web_routes

    app.router.routes.extend(web_routes(runtime, tokens.current, session_hours))  # the web page at /
    front = Front(app, tokens, security=security)
    front.web = WebGate(tokens.current, security)
    front.ready = lambda: readiness(runtime, local_too=False)  # the question `serve`'s outage watchdog asks
    return front
