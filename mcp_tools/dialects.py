"""Each tool family's error dialect, for the failures the MCP front answers itself (refused arguments, a
crash outside a handler) and for JSON-RPC errors.

A family answers every failure as its seed does, wherever the failure is caught:
- `code3` (seeds 001 and 003: spec_mcp.*, server_mcp.*, add): `{code: E_*, message, hint}` as JSON text;
- `ai-loom` (seed 004): `{code: NOT_FOUND | VALIDATION_ERROR | INTERNAL, message[, hint]}` as JSON text;
- `reverse-spec` (seed 000): the seed's plain text, "<tool> 失败: <详情>";
- `codenexus` (seed 002): a JSON-RPC error whose `data` is `{type, details, timestamp}`, with the seed's codes
  (-32000 file not found, -32001 permission denied: outside the root, the state directory, a secret file; -32002
  validation failed), a refusal turned into one by `as_mcp_error` (here, since the MCP front needs it too, for a
  refusal raised outside the family's handlers; mcp_tools/codenexus/errors.py wraps the handlers with it).

A tool failure is `isError` with the error in the text only (`mcp_tools.binding.error_result`). Every
JSON-RPC error a Code3 server sends, in any profile, carries CodeNexus's `data: {type, details, timestamp}`
(`rpc_error`): a superset of JSON-RPC that the CodeNexus profile needs and no other client minds. Its `message`
carries the details' gist too ("File not found: 'src/x.py' does not exist…"): clients such as Claude Code show
a model `MCP error -32000: <message>` and drop `data`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from mcp.shared.exceptions import MCPError

from adapters.paths import PathRefused
from domain.errors import Code, Code3Error

CODE3, AI_LOOM, REVERSE_SPEC, CODENEXUS = "code3", "ai-loom", "reverse-spec", "codenexus"
_PACKAGES = {"mcp_tools.ai_loom": AI_LOOM, "mcp_tools.reverse_spec": REVERSE_SPEC, "mcp_tools.codenexus": CODENEXUS}

# JSON-RPC 2.0 and seed 002's error codes -> the `type` their data carries
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
FILE_NOT_FOUND, PERMISSION_DENIED, VALIDATION_FAILED = -32000, -32001, -32002
_TYPES = {PARSE_ERROR: "ParseError", INVALID_REQUEST: "InvalidRequest", METHOD_NOT_FOUND: "MethodNotFound",
          INVALID_PARAMS: "ValidationError", INTERNAL_ERROR: "InternalError", FILE_NOT_FOUND: "FileNotFoundError",
          PERMISSION_DENIED: "PermissionError", VALIDATION_FAILED: "ValidationError"}
# the messages of the CodeNexus errors a handler raises (`nexus_error`), and which of them answers a refusal
_NEXUS_MESSAGES = {FILE_NOT_FOUND: "File not found", PERMISSION_DENIED: "Permission denied",
                   VALIDATION_FAILED: "Validation failed", INVALID_PARAMS: "Invalid params"}
_BY_REASON = {"invalid": VALIDATION_FAILED, "outside": PERMISSION_DENIED, "forbidden": PERMISSION_DENIED,
              "not_found": FILE_NOT_FOUND, "not_regular": VALIDATION_FAILED, "too_large": VALIDATION_FAILED}
_BY_CODE = {Code.NOT_FOUND: FILE_NOT_FOUND, Code.UNAUTHORIZED: PERMISSION_DENIED}
DATA_KEYS = frozenset({"type", "details", "timestamp"})
# the protocol's own error data a client reads to recover, kept beside seed 002's keys: an unsupported protocol
# version's `supported` and `requested` (to pick another), a missing client capability's `requiredCapabilities`,
# an unknown resource's `uri` (SEP-2164)
PROTOCOL_DATA = frozenset({"supported", "requested", "requiredCapabilities", "uri"})

INTERNAL_MESSAGE = "internal error; the server log (stderr) has details"
INTERNAL_HINT = "retry; if it persists, report it with the server log"


def family(module: str) -> str:
    """The family of the tool declared in `module` (a handler's `__module__`)."""
    for package, name in _PACKAGES.items():
        if module == package or module.startswith(package + "."):
            return name
    return CODE3


def now_z() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def error_data(code: int, details: str) -> dict[str, str]:
    """Seed 002's `data` of a JSON-RPC error."""
    return {"type": _TYPES.get(code, "ProtocolError"), "details": details, "timestamp": now_z()}


GIST_CHARS = 300  # of the details a message repeats; `data.details` keeps them whole


def gist(message: str, details: str) -> str:
    """`message` with the gist of `details` when it is a bare label ("File not found", "Invalid params"): what a
    client that shows only the message needs to act. A message that already says more (a colon) is kept."""
    if not details or details == message or ":" in message:
        return message
    body = details if details.startswith(message) else f"{message}: {details}"
    room = len(message) + 2 + GIST_CHARS
    return body if len(body) <= room else body[:room - 1] + "…"


def rpc_error(code: int, message: str, details: str | None = None) -> MCPError:
    """A JSON-RPC error with seed 002's `data`, its message carrying the details' gist (`gist`)."""
    return MCPError(code, gist(message, details or message), error_data(code, details or message))


def nexus_error(code: int, details: str) -> MCPError:
    """A CodeNexus error (one of the seed's codes, or INVALID_PARAMS) with its message and seed 002's `data`."""
    return rpc_error(code, _NEXUS_MESSAGES[code], details)


def as_mcp_error(exc: Code3Error) -> MCPError:
    """A refusal (the domain's, or the path resolver's `PathRefused`) as the CodeNexus error the seed answers."""
    code = _BY_REASON[exc.reason] if isinstance(exc, PathRefused) else _BY_CODE.get(exc.code, VALIDATION_FAILED)
    details = f"{exc.message}; {exc.hint}" if exc.hint else exc.message
    return nexus_error(code, details)


def with_data(code: int, message: str, data: Any) -> dict[str, Any] | None:
    """`data` as seed 002 shapes it: kept when it already is, else built from what it said (a method name,
    the SDK's empty string) and the message, keeping the protocol's own data a client recovers with
    (`PROTOCOL_DATA`). None when it already has the shape."""
    if isinstance(data, dict) and set(data) >= DATA_KEYS:
        return None
    if isinstance(data, str) and data:
        details = f"{message}: {data}"
    elif isinstance(data, dict) and isinstance(data.get("name"), str):
        details = f"{message} (name: {data['name']})" if data["name"] not in message else message
    elif isinstance(data, dict) and isinstance(data.get("supported"), list):
        versions = ", ".join(str(v) for v in data["supported"])
        details = f"{message}: {data.get('requested')!s:.80} is not one of {versions}"
    else:
        details = message
    kept = {k: v for k, v in data.items() if k in PROTOCOL_DATA} if isinstance(data, dict) else {}
    return {**kept, **error_data(code, details)}


def _text(data: dict[str, str]) -> str:
    return json.dumps(data, ensure_ascii=False)


def refused_arguments(tool: str, module: str, message: str, hint: str, error_text: Any = None) -> str:
    """The text of a refused-arguments answer in the family's dialect; raises the JSON-RPC error for CodeNexus."""
    match family(module):
        case "codenexus":
            raise rpc_error(INVALID_PARAMS, "Invalid params", f"{message}; {hint}")
        case "ai-loom":
            return _text({"code": "VALIDATION_ERROR", "message": message, "hint": hint})
        case "reverse-spec":
            return _seed_text(tool, f"参数无效 (invalid arguments): {message.split(': ', 1)[-1]}", hint, error_text)
        case _:
            return _text({"code": "E_VALIDATION", "message": message, "hint": hint})


def failure(module: str, exc: Any, error_text: Any = None) -> str:
    """The text of a coded failure (a Code3Error) in the family's dialect, wherever it was raised: a refusal
    from outside the family's own handlers (the state guard while the services are built, say) reads like the
    family's others. Raises the JSON-RPC error for CodeNexus."""
    match family(module):
        case "codenexus":
            raise as_mcp_error(exc) from None
        case "ai-loom":
            from mcp_tools.ai_loom.errors import LoomError

            loom = exc if isinstance(exc, LoomError) else LoomError(exc.code, exc.message, exc.hint)
            return _text(loom.as_dict())
    if error_text is not None:
        return str(error_text(exc))
    return _text(exc.as_dict())


def internal(tool: str, module: str, error_text: Any = None) -> str:
    """The text of an unexpected failure in the family's dialect (details stay in the server log); raises the
    JSON-RPC error for CodeNexus."""
    match family(module):
        case "codenexus":
            raise rpc_error(INTERNAL_ERROR, "Internal error", INTERNAL_MESSAGE)
        case "ai-loom":
            return _text({"code": "INTERNAL", "message": INTERNAL_MESSAGE, "hint": INTERNAL_HINT})
        case "reverse-spec":
            return _seed_text(tool, "内部错误: the server log (stderr) has the stack trace", "", error_text)
        case _:
            return _text({"code": "E_INTERNAL", "message": INTERNAL_MESSAGE, "hint": INTERNAL_HINT})


def _seed_text(tool: str, message: str, hint: str, error_text: Any) -> str:
    """Seed 000's "<tool> 失败: <详情>", through the declaration's own `error_text` when it has one."""
    detail = f"{message} ({hint})" if hint else message
    if error_text is not None:
        return str(error_text(Code3Error(Code.VALIDATION, detail, "")))
    return f"{tool} 失败: {detail}"
