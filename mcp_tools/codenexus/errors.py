"""CodeNexus's handlers answer a refusal as a JSON-RPC error with the seed's code and `data: {type, details,
timestamp}`: `jsonrpc_errors` wraps each one. Every refusal happens before anything is stored.

The codes, `nexus_error` and the translation of a refusal (`as_mcp_error`) are the CodeNexus dialect's, in
mcp_tools/dialects.py, which the MCP front uses too for a refusal raised outside the handlers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from domain.errors import Code3Error
from mcp_tools.dialects import as_mcp_error

F = TypeVar("F", bound=Callable[..., Any])


def jsonrpc_errors(handler: F) -> F:
    """Turn the domain's and the resolver's refusals into the seed's JSON-RPC errors."""

    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except Code3Error as exc:
            raise as_mcp_error(exc) from None

    return wrapper  # type: ignore[return-value]
