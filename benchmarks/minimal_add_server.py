"""The floor for any Python MCP server: one `add` tool over stdio.

code3's start-up and per-call latency are judged relative to this, so it must stay as small as the
SDK allows (no extra imports, no lifespan, no logging setup).
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("minimal-add", version="1.0.0")


@server.tool()
def add(a: float, b: float) -> str:
    """Add two numbers."""
    return f"The sum of {a:g} + {b:g} = {a + b:g}"


if __name__ == "__main__":
    server.run()
