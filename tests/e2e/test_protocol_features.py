"""The MCP front's generic features, through the SDK's own client against `build_server` (in memory, both
protocol eras): strict arguments for every declared tool, `logging`, `completions`, serverInfo per profile.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import PromptReference, ResourceTemplateReference

from adapters.keystore import Keystore
from code3 import __version__
from code3.settings import Settings
from code3.wiring import build_services
from mcp_tools import dialects
from mcp_tools.binding import Runtime, sdk_tool, strict_tool
from mcp_tools.catalog import PROFILES, declared
from mcp_tools.server import build_server
from tests.answers import error_of
from tests.e2e.test_protocol_errors import MODERN, StdioServer, request

LEGACY = "legacy"
ERAS = [LEGACY, MODERN]
SNAPSHOT = Path(__file__).resolve().parents[1] / "fixtures" / "tools_list_snapshot.json"


def factory_for(project: Path, identity: str = "alice") -> Callable[[], Any]:
    settings = Settings(project=project, identity=identity)
    Keystore(settings.keystore_dir).get_or_create(identity)
    return lambda: build_services(settings)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# --- strict arguments -------------------------------------------------------------------------------------------------

def test_every_tool_publishes_its_schema_as_declared_and_validates_it_closed() -> None:
    """The strict model changes no published input schema (seed 003's `add` schema stays the seed's); it only
    refuses what the schema does not declare."""
    from mcp.server.mcpserver.tools import Tool

    for decl in declared().values():
        fn = decl.handler if not decl.needs_services else _without_services(decl)
        strict = strict_tool(fn, name=decl.name)
        assert strict.parameters == Tool.from_function(fn, name=decl.name).parameters, decl.name
        assert strict.fn_metadata.arg_model.model_json_schema(by_alias=True)["additionalProperties"] is False


def _without_services(decl: Any) -> Callable[..., Any]:
    def fn(**kwargs: Any) -> Any:
        raise AssertionError("not called")

    fn.__name__ = decl.handler.__name__
    fn.__signature__ = decl.signature()  # type: ignore[attr-defined]
    return fn


def test_the_snapshot_of_published_schemas_still_matches() -> None:
    """tests/fixtures/tools_list_snapshot.json (the schemas before the layout refactor) for the tools whose
    signature no issue has changed since: the strict arguments left them as they were, but for pydantic's
    `title` keywords, which the published schemas no longer carry (no seed's schema has one)."""
    from mcp_tools.published import untitled

    snapshot = json.loads(SNAPSHOT.read_text())
    runtime = Runtime(lambda: None)
    published = {d.name: sdk_tool(runtime, d).parameters for d in declared().values()}  # as tools/list shows it
    for name in ("add", "server_mcp.accept_task", "server_mcp.claim_payout"):
        assert published[name] == untitled(snapshot["all"][name]), name


@pytest.mark.parametrize("era", ERAS)
def test_undeclared_arguments_are_refused_for_every_tool_and_nothing_runs(tmp_path: Path, era: str) -> None:
    server = build_server(factory_for(tmp_path))

    async def scenario() -> dict[str, Any]:
        answers = {}
        async with Client(server, mode=era) as client:
            for tool in (await client.list_tools()).tools:
                required = {name: _sample(schema) for name, schema in tool.input_schema.get("properties", {}).items()
                            if name in tool.input_schema.get("required", [])}
                try:
                    result = await client.call_tool(tool.name, {**required, "surprise": 1, "also_not": "x"})
                except MCPError as exc:  # CodeNexus answers in JSON-RPC errors
                    answers[tool.name] = {"code": exc.error.code, "details": exc.error.data["details"]}
                else:
                    answers[tool.name] = error_of(result)
        return answers

    answers = run(scenario())
    assert set(answers) == set(declared())
    for name, answer in answers.items():  # each family's dialect (mcp_tools.dialects)
        family = dialects.family(declared()[name].handler.__module__)
        if family == "codenexus":
            assert answer["code"] == -32602, (name, answer)
            said = answer["details"]
        elif family == "reverse-spec":
            assert answer["text"].startswith(f"{name} 失败: 参数无效"), (name, answer)
            said = answer["text"]
        else:
            assert answer["code"] == ("VALIDATION_ERROR" if family == "ai-loom" else "E_VALIDATION"), (name, answer)
            assert answer["hint"].startswith(f"remove also_not, surprise: {name} takes "), (name, answer)
            said = answer["message"]
        assert "also_not" in said and "surprise" in said, (name, answer)
    assert not (tmp_path / "specs").exists(), "a refused call writes nothing"


def _sample(schema: dict[str, Any]) -> Any:
    kind = schema.get("type") or next((s.get("type") for s in schema.get("anyOf", []) if s.get("type") != "null"), "")
    return {"string": "x", "number": 1, "integer": 1, "boolean": False, "object": {}, "array": []}.get(kind, "x")


@pytest.mark.parametrize("era", ERAS)
def test_strings_and_booleans_are_not_coerced(tmp_path: Path, era: str) -> None:
    server = build_server(factory_for(tmp_path))
    calls = {
        "number as a string": ("add", {"a": "100", "b": 1}, "a"),
        "boolean as a number": ("add", {"a": True, "b": 1}, "a"),
        "boolean as a string": ("spec_mcp.specify", {"feature_description": "Tags", "allow_overwrite": "yes"},
                                "allow_overwrite"),
        "boolean as an integer": ("spec_mcp.specify", {"feature_description": "Tags", "allow_overwrite": 1},
                                  "allow_overwrite"),
        "string as a number": ("spec_mcp.specify", {"feature_description": 5}, "feature_description"),
        "integer as a string": ("spec_mcp.publish_issue_with_metadata",
                                {"repo": "a/b", "feature_id": "001-x", "spec_path": "specs/001-x/spec.md",
                                 "amount": "1", "deadline_seconds": "100"}, "deadline_seconds"),
        "integer as a fraction": ("spec_mcp.publish_issue_with_metadata",
                                  {"repo": "a/b", "feature_id": "001-x", "spec_path": "specs/001-x/spec.md",
                                   "amount": "1", "deadline_seconds": 1.5}, "deadline_seconds"),
        "list as a JSON string": ("spec_mcp.publish_issue_with_metadata",
                                  {"repo": "a/b", "feature_id": "001-x", "spec_path": "specs/001-x/spec.md",
                                   "amount": "1", "labels": '["a"]'}, "labels"),
    }

    async def scenario() -> dict[str, Any]:
        async with Client(server, mode=era) as client:
            return {case: await client.call_tool(tool, args) for case, (tool, args, _) in calls.items()}

    results = run(scenario())
    for case, result in results.items():
        field = calls[case][2]
        error = error_of(result)
        assert error["code"] == "E_VALIDATION", (case, result)
        assert field in error["message"] and error["hint"], (case, result)
    assert not (tmp_path / "specs").exists()

    async def exact() -> Any:
        async with Client(server, mode=era) as client:
            return await client.call_tool("add", {"a": 12345678, "b": 1})

    added = run(exact())
    assert not added.is_error and added.content[0].text == "The sum of 12345678 + 1 = 12345679"


# --- logging ----------------------------------------------------------------------------------------------------------

def test_logging_set_level_and_messages_on_the_handshake_era(tmp_path: Path) -> None:
    server = build_server(factory_for(tmp_path))
    received: list[Any] = []

    async def on_log(params: Any) -> None:
        received.append(params)

    async def scenario() -> list[int]:
        counts = []
        async with Client(server, mode=LEGACY, logging_callback=on_log) as client:
            assert client.server_capabilities.logging is not None
            await client.call_tool("spec_mcp.plan", {"feature_id": "001-never-specified"})
            counts.append(len(received))  # nothing before logging/setLevel
            await client.set_logging_level("info")
            failed = await client.call_tool("spec_mcp.plan", {"feature_id": "001-never-specified"})
            assert failed.is_error
            counts.append(len(received))
            await client.set_logging_level("error")
            await client.call_tool("spec_mcp.plan", {"feature_id": "001-never-specified"})
            counts.append(len(received))  # info is below error: nothing more
        return counts

    counts = run(scenario())
    assert counts == [0, 1, 1], (counts, received)
    [message] = received
    assert message.level == "info" and message.logger == "code3.mcp"
    assert message.data.startswith("tool spec_mcp.plan failed: E_"), message.data


def test_logging_on_the_2026_era_is_the_requests_own_opt_in(tmp_path: Path) -> None:
    server = build_server(factory_for(tmp_path))
    received: list[Any] = []

    async def on_log(params: Any) -> None:
        received.append(params)

    async def scenario(level: str | None) -> None:
        async with Client(server, mode=MODERN, logging_callback=on_log, log_level=level) as client:  # type: ignore[arg-type]
            await client.call_tool("spec_mcp.plan", {"feature_id": "001-never-specified"})

    run(scenario(None))
    assert received == []
    run(scenario("info"))
    assert [m.level for m in received] == ["info"]
    assert received[0].data.startswith("tool spec_mcp.plan failed: E_")


def test_log_messages_reach_a_stdio_client_before_the_answer(tmp_path: Path) -> None:
    server = StdioServer(tmp_path)
    call = {"name": "spec_mcp.plan", "arguments": {"feature_id": "001-never-specified"}}
    try:
        server.handshake()
        server.ask(request(1, "tools/call", call))
        assert server.notifications == [], "nothing is sent before logging/setLevel"
        assert server.ask(request(2, "logging/setLevel", {"level": "info"}))["result"] == {}
        answer = server.ask(request(3, "tools/call", call))
        assert answer["result"]["isError"] is True
        [note] = server.notifications
        assert note["method"] == "notifications/message" and note["params"]["level"] == "info"
        assert note["params"]["data"].startswith("tool spec_mcp.plan failed: E_")
        server.notifications.clear()
        assert server.ask(request(4, "logging/setLevel", {"level": "debug"}))["result"] == {}
        server.ask(request(5, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}))
        assert all(n["params"]["logger"].split(".")[0] in ("code3", "adapters", "domain", "mcp_tools",
                                                             "projections", "scheduler")
                   for n in server.notifications), "only the project's own loggers reach the client"
    finally:
        err = server.close()
    assert "Traceback" not in err


def test_logging_set_level_is_not_a_2026_method(tmp_path: Path) -> None:
    server = StdioServer(tmp_path)
    try:
        answer = server.ask(request(1, "logging/setLevel", {"level": "info"}, era=MODERN))
        assert answer["error"]["code"] == -32601
    finally:
        server.close()


# --- completions ------------------------------------------------------------------------------------------------------

def _with_test_references(server: Any) -> Any:
    """A prompt and a resource template naming the arguments Code3 completes (families will declare their own)."""

    @server.prompt(name="review_feature")
    def review_feature(feature_id: str, task_id: str = "") -> str:
        return f"review {feature_id} {task_id}"

    @server.resource("code3test://bounty/{bounty_id}/{repo}")
    def bounty(bounty_id: str, repo: str) -> str:
        return bounty_id

    return server


@pytest.mark.parametrize("era", ERAS)
def test_completions_offer_feature_ids_task_ids_bounty_ids_and_repositories(world: Any, era: str) -> None:
    published = world.published()
    specified = world.specified("Users can tag their to-dos")
    task_id, bounty_id = f"alice/todo-app#{published['issue']['number']}", published["bounty"]["bounty_id"]
    server = _with_test_references(build_server(lambda: world.services("alice")))
    prompt = PromptReference(name="review_feature")
    template = ResourceTemplateReference(uri="code3test://bounty/{bounty_id}/{repo}")

    async def scenario() -> dict[str, Any]:
        async with Client(server, mode="auto" if era == MODERN else LEGACY) as client:  # auto: server/discover
            assert client.protocol_version == (MODERN if era == MODERN else "2025-11-25")
            assert client.server_capabilities.completions is not None
            asks = {
                "feature ids": (prompt, "feature_id", ""),
                "feature ids by prefix": (prompt, "feature_id", specified["feature_id"][:5]),
                "no such feature": (prompt, "feature_id", "9"),
                "task ids": (prompt, "task_id", "alice/"),
                "bounty ids": (template, "bounty_id", ""),
                "repositories": (template, "repo", "ALICE"),
                "an argument the prompt does not have": (prompt, "bounty_id", ""),
                "an unknown prompt": (PromptReference(name="nope"), "feature_id", ""),
                "an unknown template": (ResourceTemplateReference(uri="code3test://nope/{x}"), "x", ""),
            }
            answers = {}
            for case, (ref, name, value) in asks.items():
                answers[case] = (await client.complete(ref, {"name": name, "value": value})).completion
            return answers

    answers = run(scenario())
    features = sorted([published["feature_id"], specified["feature_id"]]) if "feature_id" in published else None
    values = {case: completion.values for case, completion in answers.items()}
    if features:
        assert values["feature ids"] == features
    assert specified["feature_id"] in values["feature ids"]
    assert values["feature ids by prefix"] == [specified["feature_id"]]
    assert values["no such feature"] == []
    assert values["task ids"] == [task_id]
    assert values["bounty ids"] == [str(bounty_id)]
    assert values["repositories"] == ["alice/todo-app"]
    for case in ("an argument the prompt does not have", "an unknown prompt", "an unknown template"):
        assert values[case] == [], case
    assert answers["feature ids"].total == len(values["feature ids"]) and answers["feature ids"].has_more is False


# --- serverInfo -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("profile", list(PROFILES))
def test_each_profile_answers_its_own_server_info(tmp_path: Path, profile: str, era: str) -> None:
    name, version = PROFILES[profile]
    server = build_server(factory_for(tmp_path), profile=profile, version=__version__)

    async def scenario() -> Any:
        # "auto" discovers (server/discover, stamped with serverInfo); "legacy" initializes
        async with Client(server, mode="auto" if era == MODERN else LEGACY) as client:
            assert (client.protocol_version == MODERN) == (era == MODERN)
            return client.server_info

    info = run(scenario())
    assert info is not None and (info.name, info.version) == (name, version or __version__)


def test_the_2026_era_stamps_server_info_on_every_result(tmp_path: Path) -> None:
    server = StdioServer(tmp_path, profile="server")
    try:
        answer = server.ask(request(1, "tools/list", era=MODERN))
    finally:
        server.close()
    name, version = PROFILES["server"]
    assert answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": name,
                                                                                 "version": version or __version__}
