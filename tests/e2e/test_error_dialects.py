"""Each family answers every failure in its seed's dialect, argument errors included, read as a client reads
them (the Python SDK's client; `tests/answers.py`): spec_mcp/server_mcp/add `{code: E_*, message, hint}`,
reverse-spec "<tool> 失败: …", ai-loom `{code: NOT_FOUND | VALIDATION_ERROR | INTERNAL, message[, hint]}`,
CodeNexus JSON-RPC errors with `data: {type, details, timestamp}`; in its own profile and in `all`."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from code3.settings import Settings
from code3.wiring import build_services
from mcp_tools import dialects
from mcp_tools.dialects import PROTOCOL_DATA
from mcp_tools.server import build_server
from tests.answers import error_of, error_text
from tests.integration.test_codenexus_tools import make_project

pytestmark = pytest.mark.e2e

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def factory(project: Path) -> Callable[[], Any]:
    settings = Settings(project=project)
    return lambda: build_services(settings)


def calls(project: Path, profile: str, *requests: tuple[str, dict[str, Any]]) -> list[Any]:
    """Each (tool, arguments) called through the SDK's client: its result, or the MCPError it raised."""

    async def scenario() -> list[Any]:
        answers: list[Any] = []
        async with Client(build_server(factory(project), profile=profile, version="t"), mode="legacy") as client:
            await client.list_tools()  # as a client does before calling (it turns on output-schema checks)
            for tool, arguments in requests:
                try:
                    answers.append(await client.call_tool(tool, arguments))
                except MCPError as exc:
                    answers.append(exc)
        return answers

    return asyncio.run(scenario())


def assert_nexus(error: Any, code: int) -> None:
    assert isinstance(error, MCPError), f"a CodeNexus failure is a JSON-RPC error, got {error!r}"
    assert error.error.code == code, error.error
    data = error.error.data  # seed 002's keys, and the protocol's own a client reads (an unknown resource's uri)
    assert isinstance(data, dict) and set(data) - PROTOCOL_DATA == {"type", "details", "timestamp"}, data
    assert data["type"] and data["details"] and TIMESTAMP.match(data["timestamp"]), data


@pytest.mark.parametrize("profile", ["client-local", "all"])
def test_spec_and_add_failures_are_code_message_hint_json(tmp_path: Path, profile: str) -> None:
    missing, argument, unknown_name, add_text = calls(
        tmp_path, profile, ("spec_mcp.plan", {"feature_id": "001-nothing"}), ("add", {"a": "abc", "b": 1}),
        ("add", {"a": 1, "b": 2, "c": 3}), ("add", {"a": "5", "b": 3}))
    error = error_of(missing)
    assert error["code"].startswith("E_") and error["code"] != "E_VALIDATION", error
    assert "001-nothing" in error["message"] and error["hint"], error
    error = error_of(argument)
    assert error["code"] == "E_VALIDATION" and "a:" in error["message"] and "got a string" in error["message"]
    assert error["hint"], error
    error = error_of(unknown_name)
    assert error["code"] == "E_VALIDATION" and error["hint"].startswith("remove c: add takes a, b"), error
    assert set(error_of(add_text)) == {"code", "message", "hint"}


@pytest.mark.parametrize("profile", ["reverse-spec", "all"])
def test_reverse_spec_failures_are_the_seeds_texts_argument_errors_too(tmp_path: Path, profile: str) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("def f():\n    return 1\n")
    missing, wrong_type, absent, unknown = calls(
        tmp_path, profile, ("prepare", {"targetPath": "src/nonexistent"}), ("prepare", {"targetPath": 5}),
        ("diff", {"specPath": "x.spec.md"}), ("generate", {"targetPath": "src", "surprise": True}))
    assert error_text(missing) == "prepare 失败: 目标路径不存在: src/nonexistent"
    assert error_of(missing) == {"text": error_text(missing)}, "a plain text, not JSON"
    for result, tool, field in ((wrong_type, "prepare", "targetPath"), (absent, "diff", "sourcePath"),
                                (unknown, "generate", "surprise")):
        text = error_text(result)
        assert text.startswith(f"{tool} 失败: 参数无效"), text
        assert field in text and "E_VALIDATION" not in text and not text.lstrip().startswith("{"), text


@pytest.mark.parametrize("profile", ["ai-loom", "all"])
def test_ai_loom_failures_use_the_seeds_three_codes_argument_errors_included(tmp_path: Path, profile: str) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    answers = calls(tmp_path, profile, ("ai-loom.get_context", {"id": "ann_00000000000000000000000000"}),
                    ("ai-loom.get_context", {"id": "nope"}), ("ai-loom.stitch", {"maxChars": "800"}),
                    ("ai-loom.list_contexts", {"limit": 1, "page": 2}), ("ai-loom.get_context", {}))
    not_found, bad_id, *argument_errors = (error_of(a) for a in answers)
    assert not_found["code"] == "NOT_FOUND" and not_found["message"], not_found
    assert bad_id["code"] == "VALIDATION_ERROR", bad_id
    for error in argument_errors:
        assert error["code"] == "VALIDATION_ERROR" and error["hint"], error
        assert set(error) <= {"code", "message", "hint"}, error
    assert "maxChars" in argument_errors[0]["message"] and "page" in argument_errors[1]["message"]


def test_ai_loom_hint_only_where_one_helps() -> None:
    from domain.errors import Code
    from mcp_tools.ai_loom.errors import LoomError

    assert LoomError(Code.NOT_FOUND, "no annotation x").as_dict() == {"code": "NOT_FOUND", "message": "no annotation x"}
    assert LoomError(Code.VALIDATION, "m", "h").as_dict() == {"code": "VALIDATION_ERROR", "message": "m", "hint": "h"}


@pytest.mark.parametrize("profile", ["codenexus", "all"])
def test_codenexus_failures_are_json_rpc_errors_with_the_seeds_data(tmp_path: Path, profile: str) -> None:
    root = make_project(tmp_path / "project")
    answers = calls(root, profile, ("add_tag", {"file_path": "src/none.rs", "tags": ["ab"]}),
                    ("add_tag", {"file_path": "../x", "tags": ["ab"]}),
                    ("add_tag", {"file_path": "src/main.rs", "tags": ["AB"]}),
                    ("add_tag", {"file_path": "src/main.rs"}), ("query_files", {"limit": "5"}),
                    ("add_tag", {"file_path": "src/main.rs", "tags": ["ab"], "extra": 1}),
                    ("no_such_tool", {}))
    for answer, code in zip(answers, (-32000, -32001, -32002, -32602, -32602, -32602, -32602), strict=True):
        assert_nexus(answer, code)
    assert "tags" in answers[3].error.data["details"] and "limit" in answers[4].error.data["details"]
    assert "extra" in answers[5].error.data["details"]


def test_a_crash_outside_a_handler_answers_in_the_familys_dialect() -> None:
    """`mcp_tools.dialects.internal`: what the front answers when a tool fails unexpectedly."""
    import json

    assert json.loads(dialects.internal("add", "mcp_tools.add_demo"))["code"] == "E_INTERNAL"
    assert json.loads(dialects.internal("ai-loom.stitch", "mcp_tools.ai_loom.tools"))["code"] == "INTERNAL"
    assert dialects.internal("prepare", "mcp_tools.reverse_spec.prepare").startswith("prepare 失败: 内部错误")
    with pytest.raises(MCPError) as caught:
        dialects.internal("add_tag", "mcp_tools.codenexus.tools")
    assert_nexus(caught.value, -32603)


def test_unknown_prompts_and_resources_carry_the_data_in_memory(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")

    async def scenario() -> list[Any]:
        errors = []
        async with Client(build_server(factory(root), profile="codenexus", version="t"), mode="legacy") as client:
            for call in (lambda: client.get_prompt("nope", {}),
                         lambda: client.get_prompt("analyze_file_relationships", {}),
                         lambda: client.read_resource("codenexus://nope")):
                try:
                    await call()
                except MCPError as exc:
                    errors.append(exc)
        return errors

    errors = asyncio.run(scenario())
    assert [e.error.code for e in errors][:2] == [-32602, -32602] and len(errors) == 3, errors
    for error in errors:
        assert_nexus(error, error.error.code)


@pytest.mark.parametrize(("raised", "code"), [
    (RuntimeError("boom"), -32603),  # the SDK would answer code 0 (and nothing of the seed's data)
    (MCPError(-32601, "Method not found", "nope/nothing"), -32601),  # the SDK's data is the method name
    (MCPError(-32602, "Invalid request parameters", ""), -32602),
])
def test_every_json_rpc_error_a_request_meets_carries_the_data(raised: Exception, code: int) -> None:
    """`mcp_tools.server.error_data`, the outermost middleware: what the SDK raises below it, reshaped."""
    from types import SimpleNamespace

    from mcp_tools.server import error_data

    async def call_next(ctx: Any) -> Any:
        raise raised

    with pytest.raises(MCPError) as caught:
        asyncio.run(error_data(SimpleNamespace(method="x/y", request_id=1), call_next))
    assert_nexus(caught.value, code)
    assert "boom" not in caught.value.error.data["details"], "an exception's own text stays in the server log"
    if code == -32601:
        assert "nope/nothing" in caught.value.error.data["details"]


def test_malformed_params_are_minus_32602_with_the_data() -> None:
    from types import SimpleNamespace

    from pydantic import BaseModel

    from mcp_tools.server import error_data

    class Params(BaseModel):
        name: str

    async def call_next(ctx: Any) -> Any:
        return Params.model_validate({"name": 5})

    with pytest.raises(MCPError) as caught:
        asyncio.run(error_data(SimpleNamespace(method="tools/call", request_id=1), call_next))
    assert_nexus(caught.value, -32602)
    assert "name" in caught.value.error.data["details"]


def test_a_refusal_from_outside_a_handler_answers_in_the_familys_dialect() -> None:
    """`mcp_tools.dialects.failure`: a coded refusal raised before a family's handler runs (the state guard
    while the services are built) reads like that family's other failures."""
    import json

    from domain.errors import Code, Code3Error
    from mcp_tools.reverse_spec.common import failed

    refused = Code3Error(Code.PRECONDITION, "refusing Code3 state: .code3 is a link", "remove the link")
    assert json.loads(dialects.failure("mcp_tools.lifecycle.specs", refused))["code"] == "E_PRECONDITION"
    loom = json.loads(dialects.failure("mcp_tools.ai_loom.tools", refused))
    assert loom == {"code": "VALIDATION_ERROR", "message": refused.message, "hint": "remove the link"}
    assert dialects.failure("mcp_tools.reverse_spec.prepare", refused, failed("prepare")) == \
        "prepare 失败: refusing Code3 state: .code3 is a link"
    with pytest.raises(MCPError) as caught:
        dialects.failure("mcp_tools.codenexus.tools", refused)
    assert_nexus(caught.value, -32002)
    assert "remove the link" in caught.value.error.data["details"]
