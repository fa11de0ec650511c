"""The add-demo seed's tool answers exactly as its TypeScript server: JavaScript's number formatting,
JSON numbers only."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_tools.server import build_server
from tests.answers import error_of


def _call(arguments: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(build_server(lambda: None, profile="client-local", version="t"), mode="legacy") as c:
            return await c.call_tool("add", arguments)

    return anyio.run(go)


@pytest.mark.parametrize(("a", "b", "text"), [
    (5, 3, "The sum of 5 + 3 = 8"),
    (12345678, 1, "The sum of 12345678 + 1 = 12345679"),
    (100000, 900000, "The sum of 100000 + 900000 = 1000000"),
    (0.1, 0.2, "The sum of 0.1 + 0.2 = 0.30000000000000004"),
    (1e21, 0, "The sum of 1e+21 + 0 = 1e+21"),
    (-2.5, 1e-7, "The sum of -2.5 + 1e-7 = -2.4999999"),
    (1e308, 1e308, "The sum of 1e+308 + 1e+308 = Infinity"),
])
def test_add_answers_the_seeds_text_with_numbers_written_as_javascript_writes_them(a: float, b: float,
                                                                                  text: str) -> None:
    result = _call({"a": a, "b": b})
    assert not result.is_error and result.content[0].text == text


@pytest.mark.parametrize("value", ["5", True, None, [5]])
def test_add_refuses_what_is_not_a_json_number(value: Any) -> None:
    result = _call({"a": value, "b": 3})
    assert error_of(result)["code"] == "E_VALIDATION"
