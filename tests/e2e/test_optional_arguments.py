"""Optional arguments as generic clients fill them (`mcp_tools.published`): published as their plain type, they
still accept an explicit null (the strict check is a superset of the published schema), the seed's nullable
ones (seed 001's `feature_id`, `tech_constraints`) too, and a string is still refused for a number."""

from __future__ import annotations

import asyncio
import json
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from pydantic import ValidationError

from code3.settings import Settings
from code3.wiring import build_services
from mcp_tools.binding import Runtime, sdk_tool
from mcp_tools.catalog import declared
from mcp_tools.published import NULLABLE
from mcp_tools.server import build_server
from tests.answers import error_of

pytestmark = pytest.mark.e2e

SAMPLES = {"string": "x", "number": 1, "integer": 1, "boolean": False, "array": [], "object": {}}


def _admits_none(annotation: Any) -> bool:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in typing.get_args(
        annotation)


def nullable_parameters() -> list[tuple[str, str]]:
    return sorted((decl.name, name) for decl in declared().values()
                  for name, parameter in decl.signature().parameters.items() if _admits_none(parameter.annotation))


def test_every_optional_argument_accepts_an_explicit_null_whatever_its_published_type() -> None:
    runtime = Runtime(lambda: None)
    checked = nullable_parameters()
    assert ("ai-loom.stitch", "maxChars") in checked and ("spec_mcp.specify", "feature_id") in checked
    for tool_name, argument in checked:
        tool = sdk_tool(runtime, declared()[tool_name])
        schema = tool.parameters
        published = schema["properties"][argument]
        assert ("anyOf" in published) == ((tool_name, argument) in NULLABLE), (tool_name, argument, published)
        arguments = {name: SAMPLES.get(schema["properties"][name].get("type"), "x") for name in schema["required"]}
        arguments[argument] = None
        try:
            tool.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            about = [e for e in exc.errors() if e["loc"] and e["loc"][0] == argument]
            assert not about, f"{tool_name} refuses an explicit null {argument}: {about}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("\n".join(f"line {n}" for n in range(1, 41)) + "\n")
    return tmp_path


def _calls(project: Path, *requests: tuple[str, dict[str, Any]]) -> list[Any]:
    settings = Settings(project=project)

    async def scenario() -> list[Any]:
        server = build_server(lambda: build_services(settings), profile="ai-loom", version="t")
        async with Client(server, mode="legacy") as client:
            await client.list_tools()
            return [await client.call_tool(tool, arguments) for tool, arguments in requests]

    return asyncio.run(scenario())


def test_stitch_max_chars_as_a_number_a_null_or_omitted_and_never_a_string(project: Path) -> None:
    number, null, omitted, listed, string = _calls(
        project, ("ai-loom.stitch", {"maxChars": 800}), ("ai-loom.stitch", {"maxChars": None, "templateId": None}),
        ("ai-loom.stitch", {}), ("ai-loom.list_contexts", {"limit": None, "offset": None, "kind": None}),
        ("ai-loom.stitch", {"maxChars": "800"}))
    for result in (number, null, omitted, listed):
        assert not result.is_error and result.structured_content is not None, result.content[0].text
    assert json.loads(null.content[0].text)["prompt"] == json.loads(omitted.content[0].text)["prompt"]
    error = error_of(string)
    assert error["code"] == "VALIDATION_ERROR" and "maxChars" in error["message"], error
