"""A declared tool bound to the MCP SDK: the SDK's `Tool` with strict arguments, over a handler that the
`Runtime` runs off the event loop, concurrently with other calls, with the services built on first use.

`sdk_tool(runtime, decl)` is the one place a declaration (`mcp_tools.declare`) becomes an SDK tool: the
tools/list manifest (`mcp_tools.manifest`) is derived through it, and the server builds each tool through it
on the tool's first call, so what is listed and what runs cannot differ.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import create_model

from adapters import metrics
from mcp_tools import answer_size, dialects, published
from mcp_tools.catalog import TEXT_ANSWERS
from mcp_tools.conflicts import write_conflict
from mcp_tools.declare import ToolDecl

log = logging.getLogger("code3.mcp")


class Runtime:
    """Builds the services once, on first use, and runs handlers concurrently off the event loop.

    There is no process-wide lock around handlers: a publish that waits 30 s on a slow forge must not stall an
    `add` or a board read. What handlers share is safe across threads (docs/operations.md, "Concurrency in a
    serve", says how): the event store judges racing writes to one aggregate by optimistic concurrency
    (`EventStore.update_all` retries them), SQLite connections are guarded by their own locks, PostgreSQL
    connections come from small pools, and the few acts that must be exclusive take a narrow lock named for
    what it guards (a publish's turn per issue_hash, an account's transactions, a project directory's writes).
    Only the building of the services is serialised (`services`): double-checked, so a call after the first
    never waits for it.
    """

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._services: Any = None
        self._building = threading.Lock()  # guards the one build of the services, nothing else

    def services(self) -> Any:
        """The services, built by the first caller (the others wait for that build only); a build that fails
        is tried again by the next call, so a misconfiguration fixed on disk needs no restart."""
        services = self._services
        if services is None:
            with self._building:
                if self._services is None:
                    self._services = self._factory()
                services = self._services
        return services

    def built(self) -> Any:
        """The services if they were built, else None (never builds: for probes that must not wait)."""
        return self._services

    def run(self, fn: Callable[[Any], Any]) -> Any:
        """Run `fn(services)` in the calling thread (the HTTP fronts call it from worker threads)."""
        return fn(self.services())

    def call(self, decl: ToolDecl, kwargs: dict[str, Any]) -> CallToolResult:
        """The answer of `decl` to `kwargs`; a tool whose seed answers text answers it alone (no structuredContent)."""
        if decl.name in TEXT_ANSWERS:
            with answer_size.text_only():
                return self._call(decl, kwargs)
        return self._call(decl, kwargs)

    def _call(self, decl: ToolDecl, kwargs: dict[str, Any]) -> CallToolResult:
        from domain.errors import Code3Error

        started, failed = time.perf_counter(), None  # every answer is counted once (adapters.metrics)
        try:
            if decl.needs_services:
                result = self.run(lambda services: decl.handler(services, **kwargs))
            else:
                result = decl.handler(**kwargs)
            return _result(decl, result)
        except Code3Error as exc:
            failed = exc.code.value
            log.info("tool %s failed: %s", decl.name, exc.code.value)
            return error_result(dialects.failure(decl.handler.__module__, exc, decl.error_text))
        except MCPError as exc:  # a family that answers in JSON-RPC errors (CodeNexus: -32000/-32001/-32002)
            failed = str(exc.code)
            raise
        except Exception as exc:
            conflict = write_conflict(exc)
            if conflict is not None:  # concurrent calls lost a race past the store's own retries: a coded answer
                failed = conflict.code.value
                log.info("tool %s lost a write race: %s", decl.name, type(exc).__name__)
                return error_result(dialects.failure(decl.handler.__module__, conflict, decl.error_text))
            failed = "E_INTERNAL"
            log.exception("tool %s raised an unexpected exception", decl.name)
            return error_result(dialects.internal(decl.name, decl.handler.__module__, decl.error_text))
        finally:
            metrics.tool_call(decl.name, time.perf_counter() - started, failed)


def _result(decl: ToolDecl, data: dict[str, Any]) -> CallToolResult:
    """A success: the structured answer and its text, serialised once and within the answer cap
    (mcp_tools.answer_size). Past the cap, AnswerTooLarge in the family's dialect: a JSON-RPC error for
    CodeNexus, ai-loom's VALIDATION_ERROR, the tool's own error text otherwise (the caller answers it)."""
    from mcp_tools.answer_size import AnswerTooLarge, answer

    try:
        return answer(data, decl.render)
    except AnswerTooLarge as exc:
        match dialects.family(decl.handler.__module__):
            case dialects.CODENEXUS:
                raise dialects.rpc_error(-32002, "Validation failed", f"{exc.message}; {exc.hint}") from None
            case dialects.AI_LOOM:
                from mcp_tools.ai_loom.errors import LoomError

                raise LoomError(exc.code, exc.message, exc.hint) from None
        raise


def error_result(text: str) -> CallToolResult:
    """A failure as every client shows it: `isError` with the error in the text only. No structuredContent:
    clients validate it against the tool's output schema even on an error (the TypeScript SDK does) and
    would hide the error behind their own."""
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


# --- strict arguments -------------------------------------------------------------------------------------------------

# Whether the published input schemas say `additionalProperties: false`. Undeclared arguments are refused
# either way; the published schemas leave it out, as seed 003's `add` schema (published verbatim) does.
PUBLISH_CLOSED_SCHEMAS = False


class StrictArguments(FuncMetadata):
    """The SDK's argument metadata with JSON's types and no coercion.

    The arguments are validated as the JSON the client sent, in pydantic's strict mode: a string is
    never taken for a number or a boolean, an integer field refuses 1.5, and JSON strings are not
    pre-parsed into lists or objects (the SDK's lenient `pre_parse_json`). The argument model forbids
    undeclared names (see PUBLISH_CLOSED_SCHEMAS for what the published schema says about them).
    """

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        return data

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        raw = json.dumps(arguments_to_validate)
        return self.arg_model.model_validate_json(raw, strict=True).model_dump_one_level()

    def convert_result(self, result: Any) -> Any:
        """Our tools return a finished CallToolResult (`_result`): passed through as it is. The SDK would
        validate its structuredContent against the output model once more, a second walk of a big answer
        that the handler's TypedDict already shapes (the clients check it against the output schema)."""
        if isinstance(result, CallToolResult):
            return result
        return super().convert_result(result)


def strict_tool(fn: Callable[..., Any], **kwargs: Any) -> Tool:
    """`Tool.from_function` with strict arguments (see `StrictArguments`)."""
    tool = Tool.from_function(fn, **kwargs)
    lenient = tool.fn_metadata
    model = lenient.arg_model
    closed = create_model(model.__name__, __base__=model, __module__=model.__module__,
                          __cls_kwargs__={"extra": "forbid"})
    tool.fn_metadata = StrictArguments(arg_model=closed, output_schema=lenient.output_schema,
                                       output_model=lenient.output_model, wrap_output=lenient.wrap_output)
    if PUBLISH_CLOSED_SCHEMAS:
        tool.parameters = closed.model_json_schema(by_alias=True)
    return tool


def sdk_tool(runtime: Runtime, decl: ToolDecl) -> Tool:
    """The SDK tool of `decl`: its declared name, description, annotations and schemas, running its handler.
    The input schema is published as `mcp_tools.published` says (optional arguments as their plain type),
    both schemas without pydantic's `title` keywords (`mcp_tools.published.untitled`)."""
    annotations = ToolAnnotations(title=decl.title, read_only_hint=decl.read_only, destructive_hint=decl.destructive,
                                  idempotent_hint=decl.idempotent, open_world_hint=decl.open_world)
    tool = strict_tool(_bind(runtime, decl), name=decl.name, title=decl.title, description=decl.description,
                       annotations=annotations)
    tool.parameters = published.untitled(published.input_schema(decl.name, decl.input_schema or tool.parameters))
    if tool.fn_metadata.output_schema is not None:  # its titles too: bytes of every tools/list for nothing
        tool.fn_metadata.output_schema = published.untitled(tool.fn_metadata.output_schema)
    return tool


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
    # the output schema from the answer's TypedDict; none for a tool whose seed answers text (TEXT_ANSWERS)
    returns = CallToolResult if decl.name in TEXT_ANSWERS else Annotated[CallToolResult, sig.return_annotation]
    tool.__signature__ = sig.replace(return_annotation=returns)  # type: ignore[attr-defined]
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

