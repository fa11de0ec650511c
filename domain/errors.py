"""Error codes of the Code3 contract and the exception that carries them to the MCP boundary."""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

T = TypeVar("T")


class Code(StrEnum):
    NOT_FOUND = "E_NOT_FOUND"
    EXISTS = "E_EXISTS"
    PRECONDITION = "E_PRECONDITION"
    GH_RATE_LIMIT = "E_GH_RATE_LIMIT"
    CHAIN_TX_FAILED = "E_CHAIN_TX_FAILED"
    IDEMPOTENT_REJECTED = "E_IDEMPOTENT_REJECTED"
    INVALID_STATE = "E_INVALID_STATE"
    COOLING = "E_COOLING"
    UNAUTHORIZED = "E_UNAUTHORIZED"
    VALIDATION = "E_VALIDATION"
    INTERNAL = "E_INTERNAL"


class Code3Error(Exception):
    """A failure the client can act on: a code from the contract, what happened, and what to do next."""

    def __init__(self, code: Code, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code.value, "message": self.message, "hint": self.hint}


def present(value: T | None, what: str) -> T:
    """An invariant the code relies on (never an `assert`, which `python -O` strips): the value, or an
    E_INTERNAL error naming what was missing."""
    if value is None:
        raise Code3Error(Code.INTERNAL, f"internal invariant broken: {what} is missing",
                         "retry; if it persists, report it with the server log")
    return value
