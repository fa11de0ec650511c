"""The `add` tool of the add-demo seed (003): the smallest end-to-end check that a client can call tools.

It answers as the seed's TypeScript server does ("The sum of 5 + 3 = 8", numbers written as
JavaScript writes them) and takes only JSON numbers: no string or boolean is coerced.
"""

from __future__ import annotations

import math
from typing import Annotated, TypedDict

from pydantic import Field, Strict

from domain.knowledge.js_number import js_number
from mcp_tools.declare import tool

Number = Annotated[float, Strict(), Field(allow_inf_nan=False)]  # a JSON number; "5" and true are refused


class AddResult(TypedDict):
    a: float
    b: float
    sum: float | None  # null when the sum is not a finite number (JSON has no Infinity; the text says it)


def _text(result: AddResult) -> str:
    total = result["a"] + result["b"]  # Infinity when it overflows, as JavaScript writes it
    return f"The sum of {js_number(result['a'])} + {js_number(result['b'])} = {js_number(total)}"


# seed 003's ListTools answer, published verbatim (the signature below validates the same two numbers)
SEED_SCHEMA = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
               "required": ["a", "b"]}


@tool("add", profiles=("client-local", "client-remote", "server"), read_only=True, open_world=False,
      needs_services=False, render=_text, input_schema=SEED_SCHEMA)
def add(a: Annotated[Number, Field(description="first number")],
        b: Annotated[Number, Field(description="second number")]) -> AddResult:
    """Add two numbers together and return the result"""
    total = a + b
    return {"a": a, "b": b, "sum": total if math.isfinite(total) else None}
