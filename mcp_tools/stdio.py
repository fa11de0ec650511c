"""The MCP server over stdio (`code3 mcp`): `MCPServer.run()`'s loop, with what the SDK leaves unanswered answered.

A line the SDK cannot read as a message is handed over as the reader's exception and, by default, answered with
nothing; here it answers -32700 (not JSON) or -32600 (JSON, but not a JSON-RPC message), as the HTTP front does
(`mcp_tools.http.jsonrpc`). Every JSON-RPC error written, those answered below the middleware too, carries seed
002's `data: {type, details, timestamp}` (`ErrorDataStream`). The loop is the SDK's low-level server's
(`mcp_tools.sdk_internals.lowlevel`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.mcpserver import MCPServer
from pydantic import ValidationError

from mcp_tools import dialects, sdk_internals
from mcp_tools.dialects import INVALID_REQUEST, PARSE_ERROR

if TYPE_CHECKING:
    from mcp.types import JSONRPCError

log = logging.getLogger("code3.mcp")


def unreadable_message_error(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error for a stdio line the SDK could not read as a message (it hands the reader's
    exception over and, by default, answers nothing): -32700 for a line that is not JSON, -32600 for JSON
    that is not a JSON-RPC message (with the line's id when it has a usable one)."""
    from mcp.types import ErrorData, JSONRPCError

    errors = exc.errors(include_url=False) if isinstance(exc, ValidationError) else []
    if not errors or any(e["type"] == "json_invalid" for e in errors):
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=PARSE_ERROR, message="Parse error", data=dialects.error_data(PARSE_ERROR, "the line is not JSON")))
    request_id = None
    for e in errors:
        candidate = e.get("input")
        if isinstance(candidate, dict):
            value = candidate.get("id")
            if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
                request_id = value
            break
    message = "Invalid Request: not a JSON-RPC 2.0 message"
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(
        code=INVALID_REQUEST, message=message, data=dialects.error_data(INVALID_REQUEST, message)))


async def _answer_unreadable(source: Any, sink: Any, out: Any) -> None:
    """Relay the transport's messages to the server; answer the lines it could not read."""
    from mcp.shared.message import SessionMessage

    async with sink:
        async for item in source:
            if not isinstance(item, Exception):
                await sink.send(item)
                continue
            error = unreadable_message_error(item)
            log.info("unreadable message on stdin: answered %s", error.error.code)
            try:
                await out.send(SessionMessage(error))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return


class ErrorDataStream:
    """The stdio write stream with seed 002's `data: {type, details, timestamp}` on every JSON-RPC error,
    those answered below the middleware too (a 2026-07-28 envelope on a handshake connection, an unreadable
    line): the one place every stdio answer passes."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def send(self, item: Any) -> None:
        from mcp.shared.message import SessionMessage
        from mcp.types import JSONRPCError

        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCError):
            error = message.error
            data = dialects.with_data(error.code, error.message, error.data)
            if data is not None:
                fixed = message.model_copy(update={"error": error.model_copy(update={"data": data})})
                item = SessionMessage(message=fixed, metadata=item.metadata)
        await self._stream.send(item)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> ErrorDataStream:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._stream.__aexit__(*exc)


async def serve_stdio(server: MCPServer) -> None:
    """`MCPServer.run()` over stdio, with unreadable lines answered (see `unreadable_message_error`) and
    every JSON-RPC error carrying its data (`ErrorDataStream`)."""
    from mcp.server.stdio import stdio_server

    lowlevel = sdk_internals.lowlevel(server)
    async with stdio_server() as (read_stream, raw_write_stream):
        write_stream = ErrorDataStream(raw_write_stream)
        send, receive = anyio.create_memory_object_stream[Any](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_answer_unreadable, read_stream, send, write_stream)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())
            tg.cancel_scope.cancel()


def run_stdio(server: MCPServer) -> None:
    from adapters.process_heap import settle_after_start

    settle_after_start()  # the server is built: its objects leave the collector's full passes
    anyio.run(serve_stdio, server)
