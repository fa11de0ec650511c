"""CodeNexus answers failures as JSON-RPC errors with the seed's codes and `data: {type, details, timestamp}`.

-32000 file not found, -32001 permission denied (outside the root, the state directory, a secret file),
-32002 validation failed. Every refusal happens before anything is stored.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.shared.exceptions import MCPError

from adapters.paths import PathRefused
from domain.errors import Code, Code3Error
from mcp_tools.dialects import now_z

FILE_NOT_FOUND = -32000
PERMISSION_DENIED = -32001
VALIDATION_FAILED = -32002
INVALID_PARAMS = -32602

_KINDS = {FILE_NOT_FOUND: ("File not found", "FileNotFoundError"),
          PERMISSION_DENIED: ("Permission denied", "PermissionError"),
          VALIDATION_FAILED: ("Validation failed", "ValidationError"),
          INVALID_PARAMS: ("Invalid params", "ValidationError")}
_BY_REASON = {"invalid": VALIDATION_FAILED, "outside": PERMISSION_DENIED, "forbidden": PERMISSION_DENIED,
              "not_found": FILE_NOT_FOUND, "not_regular": VALIDATION_FAILED, "too_large": VALIDATION_FAILED}
_BY_CODE = {Code.NOT_FOUND: FILE_NOT_FOUND, Code.UNAUTHORIZED: PERMISSION_DENIED}

F = TypeVar("F", bound=Callable[..., Any])




def nexus_error(code: int, details: str) -> MCPError:
    message, kind = _KINDS[code]
    return MCPError(code, message, {"type": kind, "details": details, "timestamp": now_z()})


def as_mcp_error(exc: Code3Error) -> MCPError:
    code = _BY_REASON[exc.reason] if isinstance(exc, PathRefused) else _BY_CODE.get(exc.code, VALIDATION_FAILED)
    details = f"{exc.message}; {exc.hint}" if exc.hint else exc.message
    return nexus_error(code, details)


def jsonrpc_errors(handler: F) -> F:
    """Turn the domain's and the resolver's refusals into the seed's JSON-RPC errors."""

    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except Code3Error as exc:
            raise as_mcp_error(exc) from None

    return wrapper  # type: ignore[return-value]
