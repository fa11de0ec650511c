"""The `add` tool of the add-demo seed (003): the smallest end-to-end check that a client can call tools.

It answers as the seed's TypeScript server does ("The sum of 5 + 3 = 8", numbers written as
JavaScript writes them) and takes only JSON numbers: no string or boolean is coerced.
"""

from __future__ import annotations

from typing import Annotated, TypedDict

from pydantic import Field, Strict

from domain.js_number import js_number
from mcp_tools.declare import tool

Number = Annotated[float, Strict(), Field(allow_inf_nan=False)]  # a JSON number; "5" and true are refused


class AddResult(TypedDict):
    a: float
    b: float
    sum: float


def _text(result: AddResult) -> str:
    return f"The sum of {js_number(result['a'])} + {js_number(result['b'])} = {js_number(result['sum'])}"


@tool("add", profiles=("client-local", "client-remote", "server"), read_only=True, open_world=False,
      needs_services=False, render=_text)
def add(a: Annotated[Number, Field(description="first number")],
        b: Annotated[Number, Field(description="second number")]) -> AddResult:
    """Add two numbers together and return the result"""
    return {"a": a, "b": b, "sum": a + b}
