"""The MCP front: a profile's declared tools, resources, prompts and completions on the SDK's MCPServer.

Tools are listed from the manifest (`mcp_tools.manifest`), derived from their declarations, and each is built
(`mcp_tools.binding`) and its family imported on its first call: a start-up imports no family. Services (store,
forge, chain, key) are built on the first call too, so a misconfigured identity is a tool error the client can
read, not a crash at start-up.

What the SDK leaves to the server, done here once for every tool, prompt and transport:
- arguments are strict (`mcp_tools.binding.StrictArguments`), and refused ones answer the contract's
  `{code: E_VALIDATION, message, hint}` (`Code3Server.call_tool`); a failure is `isError` with the error in
  its text only, never structuredContent (see `mcp_tools.binding.error_result`);
- protocol errors as JSON-RPC says: an unknown tool or prompt is -32602 (not a tool result, not code 0),
  and on stdio a line that is not JSON answers -32700 and one that is not a JSON-RPC message -32600
  (`mcp_tools.stdio`; the HTTP front does the same in `mcp_tools.http.jsonrpc`);
- `logging` to the client (`mcp_tools.client_logging`);
- `completions` from the registry in `mcp_tools.declare` (`@completer`); a reference the server does
  not know answers an empty list.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import Tool as ListedTool
from pydantic import BaseModel, ValidationError

from mcp_tools import client_logging, dialects, sdk_internals
from mcp_tools.binding import Runtime, error_result, sdk_tool
from mcp_tools.catalog import INSTRUCTIONS, PROFILES, declaration, extensions_for
from mcp_tools.declare import COMPLETERS, Completer
from mcp_tools.dialects import INTERNAL_ERROR, INVALID_PARAMS
from mcp_tools.manifest import Entry, build

log = logging.getLogger("code3.mcp")

VALIDATION_HINT = "fix the arguments as the message says; tools/list gives each tool's input schema"

MAX_COMPLETIONS = 100  # the specification's cap on `completion.values`


class Code3Server(MCPServer):
    """An MCPServer whose tools are listed from manifest entries and built, their family imported, on their
    first call (`built`). What is listed and what runs come from the same declaration through
    `mcp_tools.binding.sdk_tool`."""

    def __init__(self, entries: Iterable[Entry], runtime: Runtime, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._entries = {entry.name: entry for entry in entries}
        self._runtime = runtime
        self._built: dict[str, Tool] = {}
        self._fixtures: dict[str, Tool] = {}
        sdk_internals.serve_tool_input_schema(self, self.tool_input_schema)

    def add_fixture(self, tool: Tool) -> None:
        """A tool Code3 does not declare, run as the SDK runs it: the MCP conformance suite's diagnostic tools
        (`scripts/conformance_server.py`), so the suite exercises this front (logging, errors, transports)."""
        if tool.name in self._entries:
            raise ValueError(f"{tool.name} is a Code3 tool")
        self._fixtures[tool.name] = tool

    async def list_tools(self) -> list[ListedTool]:
        from mcp_tools.manifest import listed

        return [entry.listed for entry in self._entries.values()] + [listed(t) for t in self._fixtures.values()]

    def tool_names(self, package: str = "") -> set[str]:
        """This server's tools, or those declared in `package` (a module prefix such as "mcp_tools.codenexus")."""
        return {name for name, entry in self._entries.items() if entry.module.startswith(package)}

    def built(self, name: str) -> Tool | None:
        """The SDK tool `name`, built on first use; None when this server has no such tool."""
        tool = self._built.get(name) or self._fixtures.get(name)
        if tool is None and name in self._entries:
            tool = self._built[name] = sdk_tool(self._runtime, declaration(name, self._entries[name].module))
        return tool

    def tool_input_schema(self, name: str) -> dict[str, Any] | None:
        """Asked by the 2026-07-28 HTTP transport before a call (Mcp-Param headers): from the listing."""
        entry = self._entries.get(name)
        if entry is None:
            fixture = self._fixtures.get(name)
            return None if fixture is None else fixture.parameters
        return entry.listed.input_schema

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self.built(name)
        if tool is None:
            raise ToolError(f"Unknown tool: {name}")
        if context is None:
            context = Context(mcp_server=self, subscriptions=sdk_internals.subscriptions(self))
        if name in self._fixtures:  # not Code3's: the SDK's own answers
            return await tool.run(arguments, context, convert_result=True)
        module = self._entries[name].module
        decl_text = declaration(name, module).error_text
        try:
            return await tool.run(arguments, context, convert_result=True)
        except UnexpectedToolError:
            log.exception("tool %s raised an unexpected exception", name)
            return error_result(dialects.internal(name, module, decl_text))
        except ToolError as exc:  # the SDK refused the arguments (a handler's own failures are answers)
            if not isinstance(exc.__cause__, ValidationError):
                raise
            message, hint = describe_argument_errors(name, tool.fn_metadata.arg_model, arguments)
            return error_result(dialects.refused_arguments(name, module, message, hint, decl_text))


# --- refused arguments ------------------------------------------------------------------------------------------------

def describe_argument_errors(tool: str, model: type[BaseModel], arguments: Any) -> tuple[str, str]:
    """(message, hint) for arguments `model` refuses: the unknown names, then each problem. The family's dialect
    (`mcp_tools.dialects.refused_arguments`) wraps them."""
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
    return message, hint


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
                raise dialects.rpc_error(INVALID_PARAMS, f"Unknown tool: {name}",
                                         f"Unknown tool: {name}; tools/list gives this server's tools")
        elif method == "prompts/get" and isinstance(name, str):
            if name not in {p.name for p in await server.list_prompts()}:
                raise dialects.rpc_error(INVALID_PARAMS, f"Unknown prompt: {name}",
                                         f"Unknown prompt: {name}; prompts/list gives this server's prompts")
            try:
                return await call_next(ctx)
            except (MCPError, ValidationError):
                raise
            except ValueError as exc:  # missing or refused prompt arguments
                raise dialects.rpc_error(INVALID_PARAMS, str(exc), f"prompt {name}: {exc}") from None
            except Exception:
                log.exception("prompt %s failed", name)
                raise dialects.rpc_error(INTERNAL_ERROR, "internal error; the server log has details") from None
        return await call_next(ctx)

    return middleware


async def error_data(ctx: Any, call_next: Any) -> Any:
    """Every JSON-RPC error a request meets carries seed 002's `data: {type, details, timestamp}`
    (`mcp_tools.dialects`): the SDK's -32601 (its data the method name) and -32602 for malformed params
    (no data), the front's own errors, and an unexpected exception (the SDK's code 0) as -32603."""
    try:
        return await call_next(ctx)
    except MCPError as exc:
        data = dialects.with_data(exc.error.code, exc.error.message, exc.error.data)
        if data is None:
            raise
        raise MCPError(exc.error.code, dialects.gist(exc.error.message, data["details"]), data) from None
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in e["loc"]) or "params" for e in exc.errors(include_url=False)})
        raise dialects.rpc_error(INVALID_PARAMS, "Invalid request parameters",
                                 f"{getattr(ctx, 'method', '')}: invalid {', '.join(fields)[:500]}") from None
    except Exception:
        if getattr(ctx, "request_id", None) is None:  # a notification: nothing is answered
            raise
        log.exception("request %s failed", getattr(ctx, "method", "?"))
        raise dialects.rpc_error(INTERNAL_ERROR, "Internal error", dialects.INTERNAL_MESSAGE) from None


# --- completions ------------------------------------------------------------------------------------------------------

def completers_for(profile: str) -> dict[str, Completer]:
    """argument name -> completer, for the families this profile exposes."""
    from mcp_tools import completions  # noqa: F401  (the built-in completers)
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
                 version: str = "0", tools: Iterable[Entry] | None = None) -> Code3Server:
    """The MCP server of `profile`. `tools` is the manifest (`mcp_tools.manifest.cached`, which the CLI passes);
    without it the manifest is built in this process, which imports every family."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    name, profile_version = PROFILES[profile]
    runtime = runtime or Runtime(factory)
    entries = [entry for entry in (build() if tools is None else tools) if profile in entry.profiles]
    server = Code3Server(entries, runtime, name=name, version=profile_version or version,
                         instructions=INSTRUCTIONS[profile])
    server.middleware.extend([error_data, protocol_errors(server), client_logging.client_logging])
    client_logging.install_capture()
    sdk_internals.lowlevel(server).add_request_handler("logging/setLevel", _set_level_params(),
                                                       client_logging.set_logging_level)
    _register_completions(server, runtime, profile)
    for register in extensions_for(profile):
        register(server, runtime)
    return server


def _set_level_params() -> type[BaseModel]:
    from mcp.types import SetLevelRequestParams

    return SetLevelRequestParams
