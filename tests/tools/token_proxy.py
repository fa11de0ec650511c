"""A loopback HTTP proxy that adds `Authorization: Bearer <token>` to every request it forwards.

The MCP conformance suite cannot send headers, and `code3 serve` requires its token on /mcp: the suite
talks to this proxy, the proxy to `code3 serve`. Responses are streamed back as they come (SSE included).

    python tests/tools/token_proxy.py --upstream http://127.0.0.1:8765 --token-file PROJECT/.code3/serve_token

prints one JSON line, {"listening": "http://127.0.0.1:PORT"}, once it accepts connections (`--port 0`
picks a free port). The token is read from the file (or CODE3_SERVE_TOKEN), never from the command line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

# hop-by-hop headers (RFC 9110 §7.6.1), and what the proxy sets itself; Host and Origin pass unchanged, so
# the server's DNS-rebinding checks see what the client sent
NOT_FORWARDED = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                           "trailers", "transfer-encoding", "upgrade", "content-length", "authorization"})


def build(upstream: str, token: str) -> Starlette:
    client = httpx.AsyncClient(base_url=upstream, timeout=httpx.Timeout(None, connect=10))

    async def forward(request: Request) -> StreamingResponse:
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in NOT_FORWARDED]
        headers.append(("authorization", f"Bearer {token}"))
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        outgoing = client.build_request(request.method, target, headers=headers, content=await request.body())
        answer = await client.send(outgoing, stream=True)

        async def body() -> AsyncIterator[bytes]:
            try:
                async for chunk in answer.aiter_raw():
                    yield chunk
            finally:
                await answer.aclose()

        kept = {k: v for k, v in answer.headers.items() if k.lower() not in NOT_FORWARDED}
        return StreamingResponse(body(), status_code=answer.status_code, headers=kept)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await client.aclose()

    methods = ["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)], lifespan=lifespan)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", required=True, help="base URL of code3 serve, e.g. http://127.0.0.1:8765")
    parser.add_argument("--token-file", type=Path, help="the serve token file (default: CODE3_SERVE_TOKEN)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    token = args.token_file.read_text().strip() if args.token_file else os.environ.get("CODE3_SERVE_TOKEN", "")
    if not token:
        parser.error("no token: pass --token-file or set CODE3_SERVE_TOKEN")
    server = uvicorn.Server(uvicorn.Config(build(args.upstream.rstrip("/"), token), host="127.0.0.1",
                                           port=args.port, log_level="warning", lifespan="on"))
    original = server.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets)
        port = server.servers[0].sockets[0].getsockname()[1]
        print(json.dumps({"listening": f"http://127.0.0.1:{port}"}), flush=True)

    server.startup = startup  # type: ignore[method-assign]
    server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
