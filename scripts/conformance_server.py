"""The servers scripts/conformance.sh runs the MCP conformance suite against, each with the suite's diagnostic tools
(scripts/conformance_fixtures.py):

    python scripts/conformance_server.py code3 [serve options]   `code3 serve` itself (its CLI, its app, its token),
                                                                 the diagnostic tools added beside Code3's own
    python scripts/conformance_server.py bare [--stateless]      a bare MCP SDK server (MCPServer with those tools
                                                                 alone, streamable HTTP on a free loopback port):
                                                                 the baseline Code3's front is compared with

Both print one JSON line with "listening" (the base URL) once they accept connections, as `code3 serve` does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/: the fixtures
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # the checkout: code3 and mcp_tools

from conformance_fixtures import fixture_tools


def code3(argv: list[str]) -> int:
    """`code3 serve ARGV`, its MCP server given the diagnostic tools (`Code3Server.add_fixture`)."""
    import mcp_tools.http.app as app_module
    from code3.cli import main

    build_server = app_module.build_server

    def with_fixtures(*args: Any, **kwargs: Any) -> Any:
        server = build_server(*args, **kwargs)
        for tool in fixture_tools():
            server.add_fixture(tool)
        return server

    app_module.build_server = with_fixtures  # type: ignore[assignment]
    return main(["serve", *argv])


def bare(argv: list[str]) -> int:
    """A bare SDK server: MCPServer, the diagnostic tools, the SDK's streamable HTTP app under uvicorn."""
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    parser = argparse.ArgumentParser(prog="conformance_server.py bare")
    parser.add_argument("--stateless", action="store_true")
    args = parser.parse_args(argv)
    server = MCPServer("bare-sdk-server", version="0")
    for tool in fixture_tools():
        server.add_tool(tool.fn, name=tool.name, description=tool.description)
    app = server.streamable_http_app(host="127.0.0.1", stateless_http=args.stateless)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    runner = uvicorn.Server(config)
    original = runner.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets)
        port = runner.servers[0].sockets[0].getsockname()[1]
        print(json.dumps({"listening": f"http://127.0.0.1:{port}", "mcp": f"http://127.0.0.1:{port}/mcp"}),
              flush=True)

    runner.startup = startup  # type: ignore[method-assign]
    runner.run()
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("code3", "bare"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(code3(sys.argv[2:]) if sys.argv[1] == "code3" else bare(sys.argv[2:]))
