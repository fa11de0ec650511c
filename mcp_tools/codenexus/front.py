"""CodeNexus on the MCP front: resources (as templates), prompts, subscriptions and the seed's declared
capabilities, added to the server `mcp_tools.server.build_server` built. Imported whenever a server is built,
so the family's resources and prompts are imported on their first use, not here.

What the SDK leaves out and this adds, reaching into its low-level server (through `mcp_tools.sdk_internals`, the
one module that touches the SDK's private parts):
- serverInfo `description` "代码库关系管理工具" (the SDK's `Implementation` has the field; build_server
  does not pass one, so it is set here before the first answer);
- `listChanged` for tools, resources and prompts on the 2025-11-25 handshake (the SDK advertises it only
  when `create_initialization_options` is given `NotificationOptions`); on 2026-07-28 the SDK derives it
  from `subscriptions/listen`, which MCPServer serves;
- `resources/subscribe` and `resources/unsubscribe`, and the log watcher (see `subscriptions`), started
  in the server's lifespan;
- on the CodeNexus profile, a tool's arguments that fail the input schema (a missing or mistyped argument)
  answer JSON-RPC -32602 Invalid params with the seed's `data`, as its other failures are JSON-RPC errors
  (on Code3's own profiles they stay the front's `{code: E_VALIDATION}` result).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.types import (
    ListResourcesResult,
    PaginatedRequestParams,
    Resource,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)
from pydantic import Field

from mcp_tools import sdk_internals
from mcp_tools.codenexus.errors import jsonrpc_errors
from mcp_tools.codenexus.subscriptions import Hub
from mcp_tools.declare import extension
from mcp_tools.dialects import INVALID_PARAMS, nexus_error

DESCRIPTION = "代码库关系管理工具"
JSON = "application/json"
OWN_PATHS = ResourceSecurity(exempt_params=frozenset({"path"}))  # the project resolver decides (-32001 …)


async def _run(runtime: Any, fn: Callable[[Any], Any]) -> Any:
    return await anyio.to_thread.run_sync(runtime.run, jsonrpc_errors(fn))


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


@extension(profiles=("codenexus",))
def register(server: Any, runtime: Any) -> None:
    low = sdk_internals.lowlevel(server)
    own = server.name == "CodeNexus"
    if own:
        low.description = DESCRIPTION
    _advertise_list_changed(low)
    _resources(server, runtime)
    low.add_request_handler("resources/list", PaginatedRequestParams, _file_listing(server, runtime))
    _prompts(server, runtime)
    hub = Hub(runtime, sdk_internals.subscriptions(server), always=own)
    low.add_request_handler("resources/subscribe", SubscribeRequestParams, hub.subscribe)
    low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, hub.unsubscribe)
    _start_in_lifespan(low, hub.watch)
    if own:  # on Code3's own profiles a schema refusal stays the front's {code: E_VALIDATION} result
        server.middleware.append(_argument_errors(server.tool_names("mcp_tools.codenexus")))


def _advertise_list_changed(low: Any) -> None:
    original = low.create_initialization_options

    def create_initialization_options(notification_options: Any = None, *args: Any, **kwargs: Any) -> Any:
        options = notification_options or NotificationOptions(prompts_changed=True, resources_changed=True,
                                                              tools_changed=True)
        return original(options, *args, **kwargs)

    low.create_initialization_options = create_initialization_options


def _start_in_lifespan(low: Any, task: Callable[[], Any]) -> None:
    original = low.lifespan

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        async with original(app) as state, anyio.create_task_group() as tg:
            tg.start_soon(task)
            try:
                yield state
            finally:
                tg.cancel_scope.cancel()

    low.lifespan = lifespan


def _resources(server: Any, runtime: Any) -> None:
    @server.resource("codenexus://file/{+path}", name="File Metadata", mime_type=JSON, security=OWN_PATHS,
                     description="Complete metadata for file including tags, comments, and relationships")
    async def file_metadata(path: str) -> str:
        from mcp_tools.codenexus import resources

        return _json(await _run(runtime, lambda s: resources.file_metadata(s, path)))

    @server.resource("codenexus://tags", name="All Tags", mime_type=JSON,
                     description="List of all available tags with their descriptions and usage statistics")
    async def all_tags() -> str:
        from mcp_tools.codenexus import resources

        return _json(await _run(runtime, resources.all_tags))

    @server.resource("codenexus://relationships/{+path}", name="File Relationships", mime_type=JSON,
                     security=OWN_PATHS, description="All relationships for the specified file including "
                                                     "incoming and outgoing connections")
    async def file_relationships(path: str) -> str:
        from mcp_tools.codenexus import resources

        return _json(await _run(runtime, lambda s: resources.file_relationships(s, path)))


LISTED_PER_PAGE = 100


def _file_listing(server: Any, runtime: Any) -> Callable[..., Any]:
    """`resources/list`: the static resources, then every file with metadata as `codenexus://file/…`, 100 a
    page with a cursor (the SDK's own listing has no paging)."""

    def page(s: Any, offset: int) -> list[str]:
        from mcp_tools.codenexus.context import fresh

        fresh(s)
        rows = s.views.query("SELECT path FROM nexus_files ORDER BY file_no LIMIT ? OFFSET ?",
                             (LISTED_PER_PAGE + 1, offset))
        return [str(r[0]) for r in rows]

    async def list_resources(ctx: Any, params: Any) -> ListResourcesResult:
        cursor = getattr(params, "cursor", None) if params is not None else None
        if cursor is not None and (not cursor.isdigit() or len(cursor) > 9):
            raise nexus_error(INVALID_PARAMS, f"unknown cursor {cursor[:40]!r}: pass the nextCursor of the last page")
        offset = int(cursor or 0)
        paths = await _run(runtime, lambda s: page(s, offset))
        listed = list(await server.list_resources()) if offset == 0 else []
        listed += [Resource(uri=f"codenexus://file/{p}", name=f"File Metadata: {p}", mime_type=JSON,
                            description="Complete metadata for file including tags, comments, and relationships")
                   for p in paths[:LISTED_PER_PAGE]]
        more = len(paths) > LISTED_PER_PAGE
        return ListResourcesResult(resources=listed, next_cursor=str(offset + LISTED_PER_PAGE) if more else None)

    return list_resources


def _prompts(server: Any, runtime: Any) -> None:
    @server.prompt(name="analyze_file_relationships", description="Analyze relationships and dependencies for a file")
    async def analyze_file_relationships(
            file_path: Annotated[str, Field(description="Path to the file to analyze")]) -> str:
        from mcp_tools.codenexus import prompts

        return str(await _run(runtime, lambda s: prompts.analyze_file_relationships(s, file_path)))

    @server.prompt(name="suggest_refactoring",
                   description="Suggest refactoring opportunities based on file relationships")
    async def suggest_refactoring(
            scope: Annotated[str, Field(description="Refactoring scope (file, module, or project)")]) -> str:
        from mcp_tools.codenexus import prompts

        return str(await _run(runtime, lambda s: prompts.suggest_refactoring(s, scope)))


def _argument_errors(names: set[str]) -> Callable[..., Any]:
    """Arguments a CodeNexus tool's input schema refuses: JSON-RPC -32602 with the seed's data."""

    async def middleware(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        params = ctx.params if isinstance(getattr(ctx, "params", None), Mapping) else {}
        if getattr(ctx, "method", None) != "tools/call" or params.get("name") not in names:
            return result
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True) if hasattr(
            result, "model_dump") else result
        if isinstance(dumped, dict) and dumped.get("isError") and dumped.get("structuredContent") is None:
            content = dumped.get("content") or [{}]
            text = content[0].get("text", "") if isinstance(content[0], dict) else ""
            raise nexus_error(INVALID_PARAMS, text[:2000] or "the arguments do not match the input schema")
        return result

    return middleware
