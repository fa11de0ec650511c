"""The MCP SDK's private parts Code3 reaches (`mcp_tools.sdk_internals`), checked against the installed SDK: an
upgrade that renames or drops one fails here first, naming it, rather than somewhere in a transport.

Each private attribute is named below; `PRIVATE_ATTRIBUTES` must list exactly these, so one added to the module
without a check here fails too.
"""

from __future__ import annotations

from importlib import import_module

from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.session import ServerSession

from mcp_tools import sdk_internals

CHECKED = {
    "mcp.server.mcpserver.MCPServer": {"_lowlevel_server", "_subscriptions"},
    "mcp.server.session.ServerSession": {"_connection"},
}


def test_every_private_attribute_the_module_reaches_is_checked_here() -> None:
    assert {owner: set(names) for owner, names in sdk_internals.PRIVATE_ATTRIBUTES.items()} == CHECKED
    for owner in CHECKED:
        module, _, name = owner.rpartition(".")
        assert hasattr(import_module(module), name), f"the SDK has no {owner}"


def test_mcpserver_lowlevel_server_is_the_lowlevel_server_with_what_code3_uses_of_it() -> None:
    server = MCPServer("probe")
    assert "_lowlevel_server" in vars(server), "MCPServer._lowlevel_server is gone: see mcp_tools/sdk_internals.py"
    low = sdk_internals.lowlevel(server)
    assert isinstance(low, Server)
    for used in ("add_request_handler", "run", "create_initialization_options", "lifespan", "get_tool_input_schema",
                 "description"):
        assert hasattr(low, used), f"the low-level Server has no {used}"


def test_mcpserver_subscriptions_is_its_subscription_bus() -> None:
    server = MCPServer("probe")
    assert "_subscriptions" in vars(server), "MCPServer._subscriptions is gone: see mcp_tools/sdk_internals.py"
    bus = sdk_internals.subscriptions(server)
    assert callable(getattr(bus, "publish", None)) and callable(getattr(bus, "subscribe", None)), \
        "not a SubscriptionBus (publish, subscribe)"


def test_the_tool_input_schema_lookup_is_the_one_the_transport_asks() -> None:
    server = MCPServer("probe")

    def lookup(name: str) -> dict[str, object] | None:
        return {"type": "object"} if name == "t" else None

    sdk_internals.serve_tool_input_schema(server, lookup)
    assert sdk_internals.lowlevel(server).get_tool_input_schema is lookup


def test_server_session_connection_is_the_connection_with_its_state() -> None:
    connection = Connection(object(), protocol_version="2025-11-25")  # type: ignore[arg-type]
    session = ServerSession(object(), connection)  # type: ignore[arg-type]
    assert "_connection" in vars(session), "ServerSession._connection is gone: see mcp_tools/sdk_internals.py"
    assert sdk_internals.connection(session) is connection
    sdk_internals.connection_state(session)["k"] = "v"
    assert connection.state == {"k": "v"}, "the connection's state persists across the connection's requests"


def test_a_session_without_a_connection_gets_a_throw_away_state() -> None:
    assert sdk_internals.connection(object()) is None
    assert sdk_internals.connection_state(object()) == {}


def test_code3s_server_answers_the_transport_s_schema_question_from_its_listing() -> None:
    from mcp_tools.server import build_server

    server = build_server(lambda: None, profile="all")
    lookup = sdk_internals.lowlevel(server).get_tool_input_schema
    assert lookup("add") == server.tool_input_schema("add") and lookup("add")["required"] == ["a", "b"]
    assert lookup("no-such-tool") is None
