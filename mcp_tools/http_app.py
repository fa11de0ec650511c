"""`code3 serve`: one HTTP process on loopback — MCP streamable HTTP at /mcp and the GitHub webhook.

The webhook and the tools share one Runtime (one set of services, one lock), so a merge delivery and
a tool call never interleave inside a handler.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse

from mcp_tools.server import Runtime, build_server

MAX_BODY = 25 * 1024 * 1024  # GitHub caps payloads at 25 MB


def build_app(factory: Callable[[], Any], secret: bytes, host: str = "127.0.0.1", profile: str = "all") -> Any:
    runtime = Runtime(factory)
    server = build_server(factory, profile=profile, runtime=runtime)

    @server.custom_route("/webhooks/github", methods=["POST"])
    async def github_webhook(request: Request) -> JSONResponse:
        from mcp_tools.lifecycle.webhook import receive

        body = await request.body()
        if len(body) > MAX_BODY:
            return JSONResponse({"error": "payload too large"}, status_code=413)
        headers = dict(request.headers)
        answer = await anyio.to_thread.run_sync(lambda: runtime.run(lambda s: receive(s, secret, headers, body)))
        return JSONResponse(answer.body, status_code=answer.status)

    @server.custom_route("/healthz", methods=["GET"])
    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    return server.streamable_http_app(host=host)


def serve(factory: Callable[[], Any], secret: bytes, host: str, port: int, on_ready: Callable[[int], None]) -> None:
    """Run until SIGINT/SIGTERM (uvicorn stops gracefully on both)."""
    import uvicorn

    config = uvicorn.Config(build_app(factory, secret, host), host=host, port=port, log_level="warning",
                            lifespan="on")
    server = uvicorn.Server(config)

    original = server.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets)
        bound = server.servers[0].sockets[0].getsockname()[1] if server.servers else port
        on_ready(bound)

    server.startup = startup  # type: ignore[method-assign]
    # uvicorn re-raises the signal after its graceful shutdown; exit 0 then, as a clean stop should.
    signal.signal(signal.SIGTERM, _exit_cleanly)
    signal.signal(signal.SIGINT, _exit_cleanly)
    server.run()


def _exit_cleanly(signum: int, frame: Any) -> None:
    raise SystemExit(0)
