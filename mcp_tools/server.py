"""The MCP front: registers the declared tools of a profile over their handlers.

Each tool function the SDK sees is derived from its declaration (`mcp_tools.declare`): the handler's
signature without the services parameter, its output TypedDict as the output schema. Services
(store, forge, chain, key) are built on the first call, so a misconfigured identity is a tool error
the client can read, not a crash at start-up.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Callable
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from mcp_tools.catalog import PROFILES, extensions_for, tools_for
from mcp_tools.declare import ToolDecl

log = logging.getLogger("code3.mcp")

INSTRUCTIONS = (
    "Code3 runs open-source bounties: spec_mcp.* tools write and publish a feature spec with an on-chain "
    "bounty; server_mcp.* tools let a worker accept it, prepare a fork, open and submit a PR, and claim "
    "the payout after the merge's cooling period. Failures carry {code, message, hint}: follow the hint."
)
VALIDATION_HINT = "fix the arguments as the message says; tools/list gives each tool's input schema"
INTERNAL = {"code": "E_INTERNAL", "message": "internal error; the server log (stderr) has details",
            "hint": "retry; if it persists, report it with the server log"}


class Runtime:
    """Builds the services once, on first use, and runs handlers one at a time off the event loop."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._services: Any = None
        self._lock = threading.Lock()

    def run(self, fn: Callable[[Any], Any]) -> Any:
        """Run `fn(services)` under the same lock as the tools (the HTTP fronts use it)."""
        with self._lock:
            if self._services is None:
                self._services = self._factory()
            return fn(self._services)

    def call(self, decl: ToolDecl, kwargs: dict[str, Any]) -> CallToolResult:
        from domain.errors import Code3Error

        try:
            if decl.needs_services:
                result = self.run(lambda services: decl.handler(services, **kwargs))
            else:
                result = decl.handler(**kwargs)
        except Code3Error as exc:
            log.info("tool %s failed: %s", decl.name, exc.code.value)
            return _result(exc.as_dict(), is_error=True, text=decl.error_text(exc) if decl.error_text else None)
        except MCPError:  # a family that answers in JSON-RPC errors (CodeNexus: -32000/-32001/-32002)
            raise
        except Exception:
            log.exception("tool %s raised an unexpected exception", decl.name)
            return _result(INTERNAL, is_error=True)
        return _result(result, text=decl.render(result) if decl.render else None)


def _result(data: dict[str, Any], is_error: bool = False, text: str | None = None) -> CallToolResult:
    text = json.dumps(data, ensure_ascii=False) if text is None else text
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data, is_error=is_error)


async def structured_argument_errors(ctx: Any, call_next: Any) -> Any:
    """The SDK reports bad arguments as plain text; give them the contract's {code, message, hint} shape."""
    result = await call_next(ctx)
    if getattr(ctx, "method", None) != "tools/call":
        return result
    if isinstance(result, dict):  # the runner hands middleware the serialised result
        result = CallToolResult.model_validate(result)
    if (isinstance(result, CallToolResult) and result.is_error and result.structured_content is None
            and result.content and isinstance(result.content[0], TextContent)):
        text = result.content[0].text
        code = "E_VALIDATION" if "validation error" in text or "Unknown tool" in text else "E_INTERNAL"
        return _result({"code": code, "message": text, "hint": VALIDATION_HINT}, is_error=True)
    return result


def build_server(factory: Callable[[], Any], profile: str = "all", runtime: Runtime | None = None,
                 version: str = "0") -> MCPServer:
    name, profile_version = PROFILES.get(profile, ("code3", None))
    server: MCPServer = MCPServer(name, version=profile_version or version, instructions=INSTRUCTIONS,
                                  middleware=[structured_argument_errors])
    runtime = runtime or Runtime(factory)
    for decl in tools_for(profile):
        annotations = ToolAnnotations(title=decl.title, readOnlyHint=decl.read_only,
                                      destructiveHint=decl.destructive, idempotentHint=decl.idempotent,
                                      openWorldHint=decl.open_world)
        server.add_tool(_bind(runtime, decl), name=decl.name, title=decl.title, description=decl.description,
                        annotations=annotations)
    for register in extensions_for(profile):
        register(server, runtime)
    return server


def _bind(runtime: Runtime, decl: ToolDecl) -> Callable[..., Any]:
    """The tool function the SDK sees: the declared signature, running the handler (in a worker thread
    when it needs services; pure handlers such as `add` are called directly)."""
    if decl.needs_services:
        async def tool(**kwargs: Any) -> CallToolResult:
            if decl.progress:  # the SDK passes its request context as `ctx` (see below)
                kwargs["progress"] = _progress_reporter(kwargs.pop("ctx", None))
            return await anyio.to_thread.run_sync(runtime.call, decl, kwargs)
    else:
        async def tool(**kwargs: Any) -> CallToolResult:
            return runtime.call(decl, kwargs)

    functools.update_wrapper(tool, decl.handler, assigned=("__module__", "__name__", "__qualname__", "__doc__"))
    sig = decl.signature()
    tool.__signature__ = sig.replace(return_annotation=Annotated[CallToolResult, sig.return_annotation])  # type: ignore[attr-defined]
    if decl.progress:
        from mcp.server.mcpserver import Context

        tool.__annotations__ = {"ctx": Context}  # how the SDK finds where to pass the request context
    return tool


def _progress_reporter(ctx: Any) -> Callable[[int, int, str], None]:
    """`progress(done, total, message)` for a handler in a worker thread: `notifications/progress` when the
    client sent a progress token (the SDK sends nothing otherwise)."""

    def report(done: int, total: int, message: str) -> None:
        if ctx is None:
            return
        try:
            anyio.from_thread.run(ctx.report_progress, done, total, message)
        except Exception:  # a client that left does not fail the work it asked for
            log.debug("could not send progress", exc_info=True)

    return report
