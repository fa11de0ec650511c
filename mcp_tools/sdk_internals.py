"""Every private part of the MCP SDK that Code3 reaches, and the one place it is reached.

The SDK's `MCPServer` leaves out what Code3's fronts add (a `logging/setLevel` handler, stdio with unreadable
lines answered, resource subscriptions, the input schema the 2026-07-28 HTTP transport checks Mcp-Param headers
against, per-connection state), and for those the only handle is a private attribute. Each is named in
`PRIVATE_ATTRIBUTES` and read by one function here; `tests/unit/test_sdk_internals.py` checks each against the
installed SDK, so an upgrade that renames or drops one fails in that test first, naming the attribute.

What the handles give (the low-level `Server`'s `add_request_handler`, `run`, `create_initialization_options`,
`lifespan`, `get_tool_input_schema`; a `Connection`'s `state`) is public on the objects themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# owner class → the private attributes of it that this module reads, and why
PRIVATE_ATTRIBUTES: dict[str, dict[str, str]] = {
    "mcp.server.mcpserver.MCPServer": {
        "_lowlevel_server": "the low-level Server: request handlers (logging/setLevel, resources/subscribe), "
                            "stdio's run loop, initialization options, lifespan, the tool input schema lookup",
        "_subscriptions": "the subscription bus a tool Context is built with, and resource subscriptions' hub",
    },
    "mcp.server.session.ServerSession": {
        "_connection": "the connection a request came on: its per-connection `state` (the logging level a "
                       "client set) and the key of its resource subscriptions",
    },
}


def lowlevel(server: Any) -> Any:
    """The SDK's low-level `Server` under an `MCPServer`: where request handlers are added and stdio is run."""
    return server._lowlevel_server


def subscriptions(server: Any) -> Any:
    """The `MCPServer`'s subscription bus (what its own tool calls build their `Context` with)."""
    return server._subscriptions


def serve_tool_input_schema(server: Any, lookup: Callable[[str], Mapping[str, Any] | None]) -> None:
    """Answer the 2026-07-28 HTTP transport's question "what is tool `name`'s input schema?" (asked before a call,
    to check Mcp-Param headers) with `lookup` instead of the `MCPServer`'s own tool manager."""
    lowlevel(server).get_tool_input_schema = lookup


def connection(session: Any) -> Any | None:
    """The connection a `ServerSession` belongs to (one per client connection), or None for a session without
    one (a test double)."""
    return getattr(session, "_connection", None)


def connection_state(session: Any) -> dict[str, Any]:
    """Per-connection scratch state (the SDK's `Connection.state`), or a throw-away dict without one."""
    state = getattr(connection(session), "state", None)
    return state if isinstance(state, dict) else {}
