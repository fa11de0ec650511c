"""What a model behind Claude Code is shown of Code3's answers: the seed's text where a seed answers text (Claude
Code shows structuredContent instead of the text whenever there is one), errors whose JSON-RPC message carries
the detail (Claude Code shows `MCP error -32000: <message>` and drops `data`), paged answers that say first how
they continue, instructions Claude Code keeps whole (its first 2 048 characters), and the union profiles."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_tools import answer_size, dialects
from mcp_tools.catalog import INSTRUCTIONS, INSTRUCTIONS_MAX, PROFILES, TEXT_ANSWERS, declared
from mcp_tools.profile_unions import UNIONS
from mcp_tools.server import build_server


def _listed(profile: str) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        return {t.name: t for t in await build_server(lambda: None, profile=profile, version="t").list_tools()}

    return anyio.run(go)


def test_add_answers_seed_003s_text_alone_and_declares_no_output_schema() -> None:
    async def go() -> Any:
        async with Client(build_server(lambda: None, profile="sponsor", version="t"), mode="legacy") as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            return listed["add"], await client.call_tool("add", {"a": 5, "b": 3})

    tool, result = anyio.run(go)
    assert tool.output_schema is None
    assert not result.is_error and result.structured_content is None
    assert [c.text for c in result.content] == ["The sum of 5 + 3 = 8"]  # seed 003's answer, what the model reads


def test_only_the_tools_whose_seed_answers_text_lack_an_output_schema() -> None:
    tools = _listed("all")
    assert set(tools) >= TEXT_ANSWERS
    assert {name for name, tool in tools.items() if tool.output_schema is None} == TEXT_ANSWERS


def test_a_text_only_answer_carries_its_payload_once() -> None:
    data = {"context": 'a "quoted" line\n' * 100}
    with answer_size.text_only():
        alone = answer_size.answer(data)
        single = answer_size.cost(data)
    both = answer_size.answer(data)
    assert alone.structured_content is None and json.loads(alone.content[0].text) == data  # type: ignore[union-attr]
    assert both.structured_content == data
    assert answer_size.cost(data) - single == len(answer_size.encode(data).encode())


def test_the_default_cap_keeps_a_page_under_what_claude_code_shows_whole() -> None:
    cap = answer_size.limit({})
    assert cap - answer_size.ENVELOPE < 50_000  # characters of text at most (a character is at least a byte)
    assert (cap - answer_size.ENVELOPE) / 4 < 25_000  # estimated tokens, JSON escapes counted


def test_a_cut_page_says_first_how_it_continues(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODE3_MAX_ANSWER_BYTES", "4096")
    page = {"items": [{"note": "x" * 300} for _ in range(40)], "total": 40}
    cut = answer_size.cut_page(page, "items", 0)
    assert list(cut)[:3] == ["nextOffset", "truncated", "omitted"] and cut["nextOffset"] == len(cut["items"])
    whole = answer_size.cut_page({"items": [1, 2], "nextOffset": 2}, "items", 0)
    assert next(iter(whole)) == "nextOffset"  # a page with a next one says so first too
    report = answer_size.cut_lists({"message": "m", "moved": ["y" * 300] * 40}, ("moved",), {"since": "abc"})
    assert list(report)[:3] == ["truncated", "omitted", "since"]


@pytest.mark.parametrize(("code", "details"), [
    (dialects.FILE_NOT_FOUND, "'src/x.py' does not exist and has no metadata"),
    (dialects.PERMISSION_DENIED, "'../etc/passwd' is outside the project root"),
    (dialects.VALIDATION_FAILED, "tags must be 1 to 20 names"),
])
def test_a_codenexus_errors_message_carries_the_details_gist_and_keeps_the_seeds_code_and_data(
        code: int, details: str) -> None:
    error = dialects.nexus_error(code, details).error
    label = {dialects.FILE_NOT_FOUND: "File not found", dialects.PERMISSION_DENIED: "Permission denied",
             dialects.VALIDATION_FAILED: "Validation failed"}[code]
    assert error.code == code and error.message == f"{label}: {details}"
    assert error.data["details"] == details and set(error.data) == {"type", "details", "timestamp"}


def test_a_long_detail_is_cut_in_the_message_and_kept_whole_in_data() -> None:
    error = dialects.rpc_error(dialects.VALIDATION_FAILED, "Validation failed", "d" * 5000).error
    assert len(error.message) < 400 and error.message.endswith("…") and len(error.data["details"]) == 5000
    assert dialects.rpc_error(-32602, "Unknown tool: x", "Unknown tool: x; see tools/list").error.message == \
        "Unknown tool: x"  # a message that already says what failed is kept


@pytest.mark.parametrize("profile", list(PROFILES))
def test_every_profiles_instructions_fit_what_claude_code_keeps(profile: str) -> None:
    assert len(INSTRUCTIONS[profile]) <= INSTRUCTIONS_MAX, (profile, len(INSTRUCTIONS[profile]))


@pytest.mark.parametrize("union", list(UNIONS))
def test_a_union_profile_serves_every_tool_of_its_members_and_code3s_server_info(union: str) -> None:
    members = UNIONS[union]
    wanted = {name for name, decl in declared().items() if decl.profiles & set(members)}
    assert set(_listed(union)) == wanted and PROFILES[union] == ("code3", None)


def test_the_sponsor_and_knowledge_profiles_hold_what_their_names_promise() -> None:
    sponsor, knowledge = set(_listed("sponsor")), set(_listed("knowledge"))
    assert {"spec_mcp.specify", "spec_mcp.plan", "spec_mcp.tasks", "spec_mcp.publish_issue_with_metadata",
            "spec_mcp.remote_plan", "spec_mcp.remote_tasks", "add"} <= sponsor
    assert not {name for name in sponsor if name.startswith("server_mcp.")}
    assert {"prepare", "generate", "batch", "diff", "add_tag", "query_files", "ai-loom.stitch"} <= knowledge
    assert not {name for name in knowledge if name.startswith(("spec_mcp.", "server_mcp."))}


def test_the_protocols_own_error_data_is_kept_beside_seed_002s_keys() -> None:
    data = dialects.with_data(-32022, "Unsupported protocol version",
                              {"supported": ["2026-07-28"], "requested": "v9", "internal": "x"})
    assert data is not None and data["supported"] == ["2026-07-28"] and data["requested"] == "v9"
    assert "internal" not in data and {"type", "details", "timestamp"} <= set(data) and "v9" in data["details"]
    missing = dialects.with_data(-32021, "Missing capability", {"requiredCapabilities": {"sampling": {}}})
    assert missing is not None and missing["requiredCapabilities"] == {"sampling": {}}
