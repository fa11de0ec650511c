"""The MCP front: registers the declared tools of a profile over their handlers.

Each tool function the SDK sees is derived from its declaration (`mcp_tools.declare`): the handler's
signature without the services parameter, its output TypedDict as the output schema. Services
(store, forge, chain, key) are built on the first call, so a misconfigured identity is a tool error
the client can read, not a crash at start-up.

What the SDK leaves to the server, done here once for every tool, prompt and transport:
- arguments are strict: validated as the JSON the client sent (no "100" for 100, no "yes" for true)
  and undeclared names refused, with the contract's `{code: E_VALIDATION, message, hint}` answer;
- protocol errors as JSON-RPC says: an unknown tool or prompt is -32602 (not a tool result, not code 0),
  and on stdio a line that is not JSON answers -32700 and one that is not a JSON-RPC message -32600
  (`run_stdio`; the HTTP front does the same in `mcp_tools.http_app`);
- `logging` (`logging/setLevel`, handshake era only, where the SDK has not deprecated it) and the
  2026-07-28 per-request log-level opt-in: the server's own log records during a tool call go to the
  client as `notifications/message`;
- `completions` from the registry in `mcp_tools.declare` (`@completer`); a reference the server does
  not know answers an empty list.
"""

from __future__ import annotations

import contextvars
import functools
import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, ValidationError

from mcp_tools.catalog import PROFILES, extensions_for, tools_for
from mcp_tools.declare import COMPLETERS, Completer, ToolDecl

log = logging.getLogger("code3.mcp")

INSTRUCTIONS = (
    "Code3 runs open-source bounties: spec_mcp.* tools write and publish a feature spec with an on-chain "
    "bounty; server_mcp.* tools let a worker accept it, prepare a fork, open and submit a PR, and claim "
    "the payout after the merge's cooling period. Failures carry {code, message, hint}: follow the hint."
)
VALIDATION_HINT = "fix the arguments as the message says; tools/list gives each tool's input schema"
INTERNAL = {"code": "E_INTERNAL", "message": "internal error; the server log (stderr) has details",
            "hint": "retry; if it persists, report it with the server log"}

# JSON-RPC 2.0 error codes
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
MAX_COMPLETIONS = 100  # the specification's cap on `completion.values`


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


# --- strict arguments -------------------------------------------------------------------------------------------------

# Whether the published input schemas say `additionalProperties: false`. Undeclared arguments are refused
# either way; the schemas stay as declared because seed 003's `add` schema is compared verbatim.
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


def strict_tool(fn: Callable[..., Any], **kwargs: Any) -> Tool:
    """`Tool.from_function` with strict arguments (see `StrictArguments`)."""
    tool = Tool.from_function(fn, **kwargs)
    lenient = tool.fn_metadata
    model = lenient.arg_model
    closed = type(model.__name__, (model,), {"model_config": ConfigDict(extra="forbid"),
                                             "__module__": model.__module__})
    tool.fn_metadata = StrictArguments(arg_model=closed, output_schema=lenient.output_schema,
                                       output_model=lenient.output_model, wrap_output=lenient.wrap_output)
    if PUBLISH_CLOSED_SCHEMAS:
        tool.parameters = closed.model_json_schema(by_alias=True)
    return tool


def describe_argument_errors(tool: str, model: type[BaseModel], arguments: Any) -> dict[str, str]:
    """The contract's E_VALIDATION answer for arguments `model` refuses: the unknown names, then each problem."""
    declared = [field.alias or name for name, field in model.model_fields.items()]
    try:
        model.model_validate_json(json.dumps(arguments), strict=True)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    else:  # the SDK refused what the model accepts: report its text rather than nothing
        errors = []
    unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden" and e["loc"])
    problems = [f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}{_got(e)}"
                for e in errors if e["type"] != "extra_forbidden"]
    parts = []
    if unknown:
        parts.append(f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}")
    parts.extend(problems)
    message = f"invalid arguments for {tool}: " + ("; ".join(parts) or "refused by the input schema")
    if unknown:
        takes = ", ".join(declared) if declared else "no arguments"
        hint = f"remove {', '.join(unknown)}: {tool} takes {takes} (tools/list gives its input schema)"
    else:
        hint = VALIDATION_HINT
    return {"code": "E_VALIDATION", "message": message, "hint": hint}


_JSON_TYPES = {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "an array",
               dict: "an object", type(None): "null"}


def _got(error: Any) -> str:
    """", got a string" for a type error (the kind of value, never the value: it is the caller's data)."""
    if error["type"] == "missing" or "input" not in error:
        return ""
    kind = _JSON_TYPES.get(type(error["input"]))
    return f", got {kind}" if kind and error["type"].endswith(("_type", "_parsing")) else ""


# --- middleware -------------------------------------------------------------------------------------------------------

def protocol_errors(server: MCPServer) -> Callable[..., Any]:
    """Unknown tools and prompts are JSON-RPC -32602 errors, as the specification and seed 003 say.

    The SDK answers an unknown tool with an error *result* and an unknown prompt with error code 0
    and a traceback on stderr; a prompt that fails otherwise is reported without its traceback.
    """

    async def middleware(ctx: Any, call_next: Any) -> Any:
        method, params = getattr(ctx, "method", None), getattr(ctx, "params", None)
        name = params.get("name") if isinstance(params, Mapping) else None
        if method == "tools/call" and isinstance(name, str):
            if name not in {t.name for t in await server.list_tools()}:
                raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}", data={"name": name})
        elif method == "prompts/get" and isinstance(name, str):
            if name not in {p.name for p in await server.list_prompts()}:
                raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {name}", data={"name": name})
            try:
                return await call_next(ctx)
            except (MCPError, ValidationError):
                raise
            except ValueError as exc:  # missing or refused prompt arguments
                raise MCPError(code=INVALID_PARAMS, message=str(exc), data={"name": name}) from None
            except Exception:
                log.exception("prompt %s failed", name)
                raise MCPError(code=INTERNAL_ERROR, message="internal error; the server log has details") from None
        return await call_next(ctx)

    return middleware


def structured_argument_errors(models: dict[str, type[BaseModel]]) -> Callable[..., Any]:
    """The SDK reports bad arguments as plain text; give them the contract's {code, message, hint} shape.

    The answer keeps the response envelope the SDK built (`resultType` and the serverInfo stamp of the
    2026-07-28 era); only its content changes.
    """

    async def middleware(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if getattr(ctx, "method", None) != "tools/call":
            return result
        if isinstance(result, CallToolResult):
            result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        if not isinstance(result, dict) or not result.get("isError") or result.get("structuredContent") is not None:
            return result
        content = result.get("content") or []
        text = content[0].get("text", "") if content and isinstance(content[0], dict) else ""
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        name = str(params.get("name", ""))
        if "validation error" in text and name in models:
            data = describe_argument_errors(name, models[name], params.get("arguments") or {})
        else:
            data = INTERNAL
        return {**result, "content": [{"type": "text", "text": json.dumps(data, ensure_ascii=False)}],
                "structuredContent": data}

    return middleware


# --- logging to the client --------------------------------------------------------------------------------------------

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_PYTHON_LEVEL = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO + 5, "warning": logging.WARNING,
                 "error": logging.ERROR, "critical": logging.CRITICAL, "alert": logging.CRITICAL + 5,
                 "emergency": logging.CRITICAL + 10}
# Only the project's own loggers reach a client (a library's records may carry URLs or internals).
CLIENT_LOGGERS = ("code3", "adapters", "domain", "mcp_tools", "projections", "scheduler")
LEVEL_KEY = "code3.log_level"
_capture: contextvars.ContextVar[list[logging.LogRecord] | None] = contextvars.ContextVar("code3_client_log",
                                                                                          default=None)
_install_lock = threading.Lock()


class _ClientLogCapture(logging.Handler):
    """Collects the project's log records emitted while a tool runs (threads included: the worker thread
    runs in a copy of the request's context), for the request to send to its client."""

    def emit(self, record: logging.LogRecord) -> None:
        sink = _capture.get()
        if sink is not None and record.name.split(".")[0] in CLIENT_LOGGERS:
            sink.append(record)


_HANDLER = _ClientLogCapture()


def _install_capture() -> None:
    with _install_lock:
        root = logging.getLogger()
        if _HANDLER not in root.handlers:
            root.addHandler(_HANDLER)


def _let_records_through(level: str) -> None:
    """Create records down to `level` for the client without changing what stderr shows: the stderr handlers
    keep the threshold the root logger had."""
    wanted = _PYTHON_LEVEL[level]
    root = logging.getLogger()
    with _install_lock:
        if root.getEffectiveLevel() <= wanted:
            return
        for handler in root.handlers:
            if handler is not _HANDLER and handler.level == logging.NOTSET:
                handler.setLevel(root.getEffectiveLevel())
        root.setLevel(wanted)


def _mcp_level(levelno: int) -> str:
    return next((name for name in reversed(LEVELS) if levelno >= _PYTHON_LEVEL[name]), "debug")


def _connection_state(ctx: Any) -> dict[str, Any]:
    """Per-connection scratch state (the SDK's `Connection.state`), or a throw-away dict without one."""
    connection = getattr(ctx.session, "_connection", None)
    state = getattr(connection, "state", None)
    return state if isinstance(state, dict) else {}


def _allowed_levels(ctx: Any) -> frozenset[str]:
    from mcp.server.connection import allowed_log_levels
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:  # the request's own `_meta` opt-in
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        meta = params.get("_meta")
        return frozenset(allowed_log_levels(ctx.protocol_version, meta if isinstance(meta, Mapping) else None))
    chosen = _connection_state(ctx).get(LEVEL_KEY)  # set by logging/setLevel; nothing is sent before it
    return frozenset(LEVELS[LEVELS.index(chosen):]) if chosen in LEVELS else frozenset()


async def set_logging_level(ctx: Any, params: Any) -> Any:
    from mcp.types import EmptyResult

    _connection_state(ctx)[LEVEL_KEY] = params.level
    _let_records_through(params.level)
    return EmptyResult()


async def client_logging(ctx: Any, call_next: Any) -> Any:
    """During a tool call, send the server's log records the client asked for as `notifications/message`."""
    if getattr(ctx, "method", None) != "tools/call" or getattr(ctx, "request_id", None) is None:
        return await call_next(ctx)
    levels = _allowed_levels(ctx)
    if not levels:
        return await call_next(ctx)
    _let_records_through(min(levels, key=LEVELS.index))
    sink: list[logging.LogRecord] = []
    token = _capture.set(sink)
    try:
        return await call_next(ctx)
    finally:
        _capture.reset(token)
        await _send_records(ctx, sink, levels)


async def _send_records(ctx: Any, records: list[logging.LogRecord], levels: frozenset[str]) -> None:
    from mcp.types import LoggingMessageNotification, LoggingMessageNotificationParams

    for record in records:
        level = _mcp_level(record.levelno)
        if level not in levels:
            continue
        note = LoggingMessageNotification(params=LoggingMessageNotificationParams(
            level=level, logger=record.name, data=record.getMessage()))  # the message only: no traceback
        try:
            await ctx.session.send_notification(note, related_request_id=ctx.request_id)
        except Exception:  # a client that left does not fail the call it made
            log.debug("could not send a log record to the client", exc_info=True)
            return


# --- completions ------------------------------------------------------------------------------------------------------

def completers_for(profile: str) -> dict[str, Completer]:
    """argument name -> completer, for the families this profile exposes."""
    from mcp_tools import completions  # noqa: F401  (the built-in completers)
    from mcp_tools.catalog import declared

    declared()
    return {argument: fn for argument, profiles, fn in COMPLETERS if profile in profiles}


async def _ref_arguments(server: MCPServer, ref: Any) -> set[str] | None:
    """The argument names of the prompt or resource template `ref` names, or None if it names none of ours."""
    from mcp.shared.uri_template import UriTemplate

    if getattr(ref, "type", None) == "ref/prompt":
        for prompt in await server.list_prompts():
            if prompt.name == ref.name:
                return {a.name for a in prompt.arguments or []}
        return None
    if getattr(ref, "type", None) == "ref/resource":
        for template in await server.list_resource_templates():
            if template.uri_template == ref.uri:
                return set(UriTemplate.parse(template.uri_template).variable_names)
    return None


def rank(candidates: Iterable[str], typed: str) -> tuple[list[str], int]:
    """Candidates that start with what was typed (case-insensitively), sorted and de-duplicated; at most
    MAX_COMPLETIONS of them, with how many there were."""
    prefix = typed.casefold()
    found = sorted({c for c in candidates if c.casefold().startswith(prefix)})
    return found[:MAX_COMPLETIONS], len(found)


def _register_completions(server: MCPServer, runtime: Runtime, profile: str) -> None:
    from mcp.types import Completion

    completers = completers_for(profile)

    @server.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> Completion | None:
        known = await _ref_arguments(server, ref)
        completer = completers.get(argument.name)
        if known is None or argument.name not in known or completer is None:
            return None  # the SDK answers an empty list
        resolved = dict(getattr(context, "arguments", None) or {})
        try:
            candidates = await anyio.to_thread.run_sync(
                runtime.run, lambda s: list(completer(s, argument.value, resolved)))
        except Exception:
            log.exception("completing %s failed", argument.name)
            return None
        values, total = rank(candidates, argument.value)
        return Completion(values=values, total=total, has_more=total > len(values))


# --- the server -------------------------------------------------------------------------------------------------------

def build_server(factory: Callable[[], Any], profile: str = "all", runtime: Runtime | None = None,
                 version: str = "0") -> MCPServer:
    name, profile_version = PROFILES.get(profile, ("code3", None))
    runtime = runtime or Runtime(factory)
    tools = []
    for decl in tools_for(profile):
        annotations = ToolAnnotations(title=decl.title, readOnlyHint=decl.read_only,
                                      destructiveHint=decl.destructive, idempotentHint=decl.idempotent,
                                      openWorldHint=decl.open_world)
        tools.append(strict_tool(_bind(runtime, decl), name=decl.name, title=decl.title,
                                 description=decl.description, annotations=annotations))
    models = {tool.name: tool.fn_metadata.arg_model for tool in tools}
    server: MCPServer = MCPServer(name, version=profile_version or version, instructions=INSTRUCTIONS, tools=tools)
    server.middleware.extend([protocol_errors(server), client_logging, structured_argument_errors(models)])
    _install_capture()
    _lowlevel(server).add_request_handler("logging/setLevel", _set_level_params(), set_logging_level)
    _register_completions(server, runtime, profile)
    for register in extensions_for(profile):
        register(server, runtime)
    return server


def _set_level_params() -> type[BaseModel]:
    from mcp.types import SetLevelRequestParams

    return SetLevelRequestParams


def _lowlevel(server: MCPServer) -> Any:
    """The SDK's low-level server under an MCPServer: where request handlers are added and stdio is run."""
    return server._lowlevel_server


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


# --- stdio ------------------------------------------------------------------------------------------------------------

def unreadable_message_error(exc: Exception) -> Any | None:
    """The JSON-RPC error for a stdio line the SDK could not read as a message (it hands the reader's
    exception over and, by default, answers nothing): -32700 for a line that is not JSON, -32600 for JSON
    that is not a JSON-RPC message (with the line's id when it has a usable one)."""
    from mcp.types import ErrorData, JSONRPCError

    errors = exc.errors(include_url=False) if isinstance(exc, ValidationError) else []
    if not errors or any(e["type"] == "json_invalid" for e in errors):
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error"))
    request_id = None
    for e in errors:
        candidate = e.get("input")
        if isinstance(candidate, dict):
            value = candidate.get("id")
            if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
                request_id = value
            break
    return JSONRPCError(jsonrpc="2.0", id=request_id,
                        error=ErrorData(code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 message"))


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


async def serve_stdio(server: MCPServer) -> None:
    """`MCPServer.run()` over stdio, with unreadable lines answered (see `unreadable_message_error`)."""
    from mcp.server.stdio import stdio_server

    lowlevel = _lowlevel(server)
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[Any](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_answer_unreadable, read_stream, send, write_stream)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())
            tg.cancel_scope.cancel()


def run_stdio(server: MCPServer) -> None:
    anyio.run(serve_stdio, server)
