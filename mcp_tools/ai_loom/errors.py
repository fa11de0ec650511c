"""The seed's error codes (NOT_FOUND, VALIDATION_ERROR, INTERNAL) over the project's coded errors."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from domain.errors import Code, Code3Error

log = logging.getLogger("code3.ai_loom")
F = TypeVar("F", bound=Callable[..., Any])
LOOM_CODES = {Code.NOT_FOUND: "NOT_FOUND", Code.VALIDATION: "VALIDATION_ERROR", Code.UNAUTHORIZED: "VALIDATION_ERROR",
              Code.EXISTS: "VALIDATION_ERROR", Code.IDEMPOTENT_REJECTED: "VALIDATION_ERROR",
              Code.PRECONDITION: "VALIDATION_ERROR"}
HTTP_STATUS = {"NOT_FOUND": 404, "VALIDATION_ERROR": 422, "INTERNAL": 500}


class LoomError(Code3Error):
    """A Code3Error answered with the ai-loom seed's code."""

    def __init__(self, code: Code, message: str, hint: str = "") -> None:
        super().__init__(code, message, hint)
        self.loom_code = LOOM_CODES.get(code, "INTERNAL")

    def as_dict(self) -> dict[str, str]:
        """The seed's `{code, message}`, with a hint where one helps."""
        answer = {"code": self.loom_code, "message": self.message}
        return {**answer, "hint": self.hint} if self.hint else answer


def loom_errors(handler: F) -> F:
    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except LoomError:
            raise
        except Code3Error as exc:
            raise LoomError(exc.code, exc.message, exc.hint) from None
        except Exception as exc:
            from mcp_tools.conflicts import write_conflict

            if (conflict := write_conflict(exc)) is not None:  # a lost write race: retry, not INTERNAL
                raise LoomError(conflict.code, conflict.message, conflict.hint) from None
            log.exception("ai-loom handler %s failed", handler.__name__)
            raise LoomError(Code.INTERNAL, "internal error; the server log (stderr) has details",
                            "retry; if it persists, report it with the server log") from None

    return wrapper  # type: ignore[return-value]
