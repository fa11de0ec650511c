"""One cap for the whole answer line (mcp_tools/answer_size.py): every tool answer, at its largest, is at most
CODE3_MAX_ANSWER_BYTES as the JSON-RPC line a client receives, and a cut answer lets the client fetch the rest
(following the offsets it gives, nothing missed, nothing twice). By default a page arrives whole in Claude Code:
its text is under 50 000 characters (Claude Code shows the first 80 000 of an answer it saved to a file, and saves
one over 25 000 tokens), and what continues it comes first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, JSONRPCResponse, TextContent

from code3.settings import Settings
from code3.wiring import build_services
from mcp_tools import answer_size
from mcp_tools.add_demo import add
from mcp_tools.binding import StrictArguments, strict_tool
from mcp_tools.reverse_spec.batch import run_batch
from mcp_tools.reverse_spec.prepare import prepare_answer
from mcp_tools.server import build_server
from mcp_tools.services import Services
from tests.answers import error_of, error_text


def make_project(root: Path, modules: int, files: int) -> None:
    """`modules` directories of `files` Python files, module i importing module i-1 (as benchmarks do)."""
    for m in range(modules):
        for f in range(files):
            path = root / f"mod{m:03d}" / f"file{f:02d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            dep = f"from mod{m - 1:03d}.file{f:02d} import func{f}\n\n\n" if m else ""
            path.write_text(f'{dep}def func{f}(x: int, y: str = "ä\\"q") -> int:\n    """Do {m}.{f} «quoted»."""\n'
                            f"    return x + {f}\n\n\nclass Thing{f}:\n    def run(self) -> None:\n        pass\n")


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Services]:
    home = os.environ.get("CODE3_HOME") or str(tmp_path.parent / "home")  # the suite's own (tests/conftest.py)
    services = build_services(Settings.from_env(env={"CODE3_HOME": home}, project=tmp_path))
    yield services
    services.close()


def line_of(result: CallToolResult, request_id: int = 7) -> bytes:
    """The JSON-RPC line the stdio transport writes for this result (as mcp.server.runner and stdio do)."""
    body = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return JSONRPCResponse(jsonrpc="2.0", id=request_id, result=body).model_dump_json(
        by_alias=True, exclude_unset=True).encode("utf-8")


def calls(s: Services, tool: str, arguments: list[dict[str, Any]], profile: str = "all") -> list[CallToolResult]:
    """Each call through the SDK's in-memory client (which checks structuredContent against the output schema)."""
    async def go() -> list[CallToolResult]:
        async with Client(build_server(lambda: s, profile=profile, version="t"), mode="legacy") as client:
            await client.list_tools()
            return [await client.call_tool(tool, args) for args in arguments]

    return anyio.run(go)


DEFAULT_CAP = 49_152
PAGE_CHARS = 50_000  # what Claude Code shows whole of a tool's text (the first 80 000 characters of a saved file)
TEXT_TOOLS = ("add", "prepare", "generate", "batch", "diff")  # seeds 000 and 003: the answer is the text


def answer_of(result: CallToolResult) -> dict[str, Any]:
    """The answer a model sees: the text's JSON for a tool whose seed answers text (no structuredContent then),
    else structuredContent (the text its JSON too)."""
    text = result.content[0].text  # type: ignore[union-attr]
    if result.structured_content is None:
        answer: dict[str, Any] = json.loads(text)
        return answer
    assert json.loads(text) == result.structured_content
    return result.structured_content


def follow(s: Services, tool: str, first: dict[str, Any], step: Any, cap: int,
           lines: list[bytes] | None = None) -> list[dict[str, Any]]:
    """Call `tool`, then again with `step(answer)` (the next arguments, None when complete), one client session;
    every line within `cap` (and kept in `lines` when given)."""
    pages: list[dict[str, Any]] = []

    async def go() -> None:
        async with Client(build_server(lambda: s, profile="all", version="t"), mode="legacy") as client:
            await client.list_tools()
            arguments: dict[str, Any] | None = first
            while arguments is not None:
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result
                line = line_of(result)
                assert len(line) <= cap
                if lines is not None:
                    lines.append(line)
                assert (result.structured_content is None) == (tool in TEXT_TOOLS), tool
                answer = answer_of(result)
                pages.append(answer)
                arguments = step(answer, arguments)
                assert len(pages) < 500

    anyio.run(go)
    return pages


# --- the cap itself -----------------------------------------------------------------------------------------------

def test_the_cap_is_48_kb_unless_configured_and_refuses_nonsense() -> None:
    assert answer_size.limit({}) == DEFAULT_CAP
    assert answer_size.limit({"CODE3_MAX_ANSWER_BYTES": "524288"}) == 524_288
    for bad in ("abc", "-1", "100", "1.5"):
        with pytest.raises(answer_size.Code3Error) as caught:
            answer_size.limit({"CODE3_MAX_ANSWER_BYTES": bad})
        assert "CODE3_MAX_ANSWER_BYTES" in caught.value.message


def test_an_answer_is_serialised_once_and_its_line_size_is_what_the_transport_writes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"text": 'quotes " and \\ back\nslashes, ünïcode ✓' * 300, "n": [1, 2.5, None, True]}
    result = answer_size.answer(data)
    assert result.content[0].text == answer_size.encode(data)  # type: ignore[union-attr]
    measured = len(line_of(result, request_id=123456789))
    assert measured <= answer_size.ENVELOPE + answer_size.cost(data)
    monkeypatch.setenv("CODE3_MAX_ANSWER_BYTES", str(measured - 1))
    with pytest.raises(answer_size.AnswerTooLarge):
        answer_size.answer(data)


def test_the_sdk_does_not_validate_a_finished_answer_again() -> None:
    """The one reach into the SDK's internals: FuncMetadata.convert_result (mcp.server.mcpserver.utilities.
    func_metadata), which validates a CallToolResult's structuredContent against the output model. Our
    StrictArguments passes our finished results through; if the SDK renames the method, this fails."""
    assert callable(FuncMetadata.convert_result)
    assert StrictArguments.convert_result is not FuncMetadata.convert_result
    metadata = strict_tool(add).fn_metadata  # any declared tool: its metadata has an output model
    assert metadata.output_model is not None
    odd = CallToolResult(content=[TextContent(type="text", text="{}")], structured_content={"unexpected": 1})
    assert metadata.convert_result(odd) is odd  # the SDK's own would raise a ValidationError here
    with pytest.raises(Exception):  # noqa: B017 - whatever the SDK raises for a wrong shape
        FuncMetadata.convert_result(metadata, odd)


# --- prepare ------------------------------------------------------------------------------------------------------

def test_prepare_pages_follow_to_the_whole_answer_nothing_missed_nothing_twice(
        s: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_project(tmp_path, 20, 10)
    cap = 16_384
    monkeypatch.setenv("CODE3_MAX_ANSWER_BYTES", str(cap))
    whole = prepare_answer(s, ".")

    def step(answer: dict[str, Any], args: dict[str, Any]) -> dict[str, Any] | None:
        more = answer.get("continuation")
        assert more is None or more["hint"]
        return None if more is None else {**args, "offset": more["offset"], "contextOffset": more["contextOffset"]}

    pages = follow(s, "prepare", {"targetPath": "."}, step, cap)
    assert len(pages) > 3
    assert [k for p in pages for k in p["skeletons"]] == whole["skeletons"]
    assert [k for p in pages for k in p["filePaths"]] == whole["filePaths"]
    assert "".join(p["context"]["text"] for p in pages) == whole["context"]["text"]
    assert {p["mergedSkeleton"]["hash"] for p in pages} == {whole["mergedSkeleton"]["hash"]}
    assert "continuation" not in pages[-1] and all("continuation" in p for p in pages[:-1])


def test_a_default_prepare_page_of_a_200_file_tree_arrives_whole_in_claude_code(
        s: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each page's text (what the model reads: no structuredContent) is under 50 000 characters and 25 000
    estimated tokens, JSON escapes counted, with `continuation` its first key; the wire carries the text once."""
    make_project(tmp_path, 20, 10)
    monkeypatch.delenv("CODE3_MAX_ANSWER_BYTES", raising=False)
    whole = prepare_answer(s, ".")
    lines: list[bytes] = []

    def step(answer: dict[str, Any], args: dict[str, Any]) -> dict[str, Any] | None:
        more = answer.get("continuation")
        return None if more is None else {**args, "offset": more["offset"], "contextOffset": more["contextOffset"]}

    pages = follow(s, "prepare", {"targetPath": "."}, step, DEFAULT_CAP, lines)
    assert len(pages) > 1 and len(whole["filePaths"]) == 200
    for line in lines:
        text = json.loads(line)["result"]["content"][0]["text"]
        assert len(text) < PAGE_CHARS and len(text) / 4 < 25_000
    assert all(next(iter(p)) == "continuation" for p in pages[:-1]) and "continuation" not in pages[-1]
    assert "".join(p["context"]["text"] for p in pages) == whole["context"]["text"]
    assert [k for p in pages for k in p["filePaths"]] == whole["filePaths"]
    shown = sum(len(json.loads(line)["result"]["content"][0]["text"]) for line in lines)
    assert sum(len(line) for line in lines) < 1.5 * shown  # no second copy of the payload on the wire


def test_prepare_of_a_big_project_is_within_the_default_cap_over_stdio(tmp_path: Path) -> None:
    """The real line `code3 mcp` writes on stdout for prepare of 1 500 files (about 3 MB uncut)."""
    project = tmp_path / "big"
    make_project(project, 150, 10)
    env = {**os.environ, "CODE3_PROJECT": str(project)}
    env.pop("CODE3_MAX_ANSWER_BYTES", None)
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "prepare",
                                                                      "arguments": {"targetPath": "."}}},
    ]
    proc = subprocess.Popen([sys.executable, "-m", "code3", "mcp", "--profile", "reverse-spec"], cwd=project,
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()
    lines: dict[int, bytes] = {}
    while 2 not in lines:
        raw = proc.stdout.readline()
        assert raw, proc.stderr.read().decode() if proc.stderr else ""
        message = json.loads(raw)
        if "id" in message:
            lines[message["id"]] = raw.rstrip(b"\n")
    proc.stdin.close()
    proc.wait(timeout=30)
    proc.stdout.close()
    if proc.stderr is not None:
        proc.stderr.close()
    line = lines[2]
    assert len(line) <= DEFAULT_CAP
    result = json.loads(line)["result"]
    assert not result.get("isError"), result
    assert "structuredContent" not in result  # seed 000: the text is the answer
    text = result["content"][0]["text"]
    assert len(text) < PAGE_CHARS and next(iter(json.loads(text))) == "continuation"
    assert json.loads(text)["continuation"]["omittedFiles"] > 0


# --- batch --------------------------------------------------------------------------------------------------------

def test_batch_pages_the_run_it_made_nothing_missed_nothing_twice(
        s: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_project(tmp_path, 120, 1)
    cap = 4096
    monkeypatch.setenv("CODE3_MAX_ANSWER_BYTES", str(cap))

    def step(answer: dict[str, Any], args: dict[str, Any]) -> dict[str, Any] | None:
        more = answer.get("continuation")
        return None if more is None else {"projectRoot": ".", "offset": more["offset"]}

    pages = follow(s, "batch", {"projectRoot": "."}, step, cap)
    assert len(pages) > 2
    assert all(next(iter(p)) == "continuation" for p in pages[:-1])  # first: where a cut-short reader finds it
    for key in ("order", "successful"):
        listed = [m for p in pages for m in p[key]]
        assert len(listed) == len(set(listed)) == 120, key
    assert [m for p in pages for m in p["order"]] == pages[0]["order"] + [m for p in pages[1:] for m in p["order"]]
    assert all(p["totalModules"] == 120 for p in pages)
    assert not any(p["skipped"] for p in pages)  # the pages are the first run's, not a re-run's
    again = run_batch(s)
    assert len(again["skipped"]) == 120


def test_batch_with_an_offset_and_no_run_to_page_says_so(s: Services, tmp_path: Path) -> None:
    make_project(tmp_path, 2, 1)
    [result] = calls(s, "batch", [{"offset": 3}])
    assert "run batch" in error_text(result)


# --- ai-loom ------------------------------------------------------------------------------------------------------

def annotate_many(s: Services, tmp_path: Path, count: int, comment_chars: int) -> list[str]:
    from mcp_tools.ai_loom import tools as loom

    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "big.py").write_text("".join(f"line_{n} = {n}\n" for n in range(1, count + 2)))
    return [loom.annotate(s, "src/big.py", n + 1, n + 1, f"note {n} " + '"quoted" ü ' * (comment_chars // 12))["id"]
            for n in range(count)]


def test_list_contexts_keeps_next_offset_when_the_cap_cuts_the_last_page(
        s: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    annotate_many(s, tmp_path, 60, 1500)
    cap = 32_768
    monkeypatch.setenv("CODE3_MAX_ANSWER_BYTES", str(cap))

    def step(answer: dict[str, Any], args: dict[str, Any]) -> dict[str, Any] | None:
        if answer.get("truncated"):
            assert answer["omitted"] > 0 and "nextOffset" in answer
        return None if "nextOffset" not in answer else {"limit": 200, "offset": answer["nextOffset"]}

    pages = follow(s, "ai-loom.list_contexts", {"limit": 200}, step, cap)  # one page of 200 is the last page
    ids = [item["id"] for p in pages for item in p["items"]]
    assert len(pages) > 2 and len(ids) == len(set(ids)) == 60
    assert all(next(iter(p)) == "nextOffset" for p in pages[:-1])


def test_stitch_at_its_largest_fits_and_names_what_the_cap_left_out(
        s: Services, tmp_path: Path) -> None:
    annotate_many(s, tmp_path, 150, 3000)
    [result] = calls(s, "ai-loom.stitch", [{"maxChars": 200_000}])
    assert len(line_of(result)) <= DEFAULT_CAP
    answer = result.structured_content
    assert answer is not None and answer["truncated"] is True and answer["omitted"] > 0
    assert answer["stats"]["annotations"] + len(answer["dropped"]) == 150
    [rest] = calls(s, "ai-loom.stitch", [{"maxChars": 200_000, "annotationIds": answer["dropped"]}])
    assert len(line_of(rest)) <= DEFAULT_CAP
    assert rest.structured_content is not None and rest.structured_content["stats"]["annotations"] > 0


# --- every other tool: past the cap, a coded error within it ------------------------------------------------------

def test_an_answer_no_tool_can_cut_is_refused_within_the_cap(
        s: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    [ann_id] = annotate_many(s, tmp_path, 1, 3900)
    cap = 4096
    monkeypatch.setenv("CODE3_MAX_ANSWER_BYTES", str(cap))
    for tool, arguments in (("ai-loom.get_context", {"id": ann_id}), ("ai-loom.list_contexts", {})):
        [result] = calls(s, tool, [arguments])
        assert len(line_of(result)) <= cap
        refused = error_of(result)  # in the family's dialect
        assert refused["code"] == "VALIDATION_ERROR" and "CODE3_MAX_ANSWER_BYTES" in refused["message"]


def test_a_codenexus_answer_past_the_cap_is_its_json_rpc_error(
        s: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_tools.codenexus import tools as nexus

    for n in range(4):
        (tmp_path / f"f{n}.py").write_text("x = 1\n")
        nexus.add_comment(s, f"f{n}.py", 'a "quoted" comment, ü ' * 80)
    cap = 4096
    monkeypatch.setenv("CODE3_MAX_ANSWER_BYTES", str(cap))

    async def go() -> MCPError:
        async with Client(build_server(lambda: s, profile="codenexus", version="t"), mode="legacy") as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("query_files", {"comment_contains": "quoted"})
            return caught.value

    error = anyio.run(go)
    assert error.error.code == -32002
    assert set(error.error.data) == {"type", "details", "timestamp"}
    assert "CODE3_MAX_ANSWER_BYTES" in error.error.data["details"]


def test_query_files_at_its_largest_is_cut_and_next_offset_fetches_the_rest(s: Services, tmp_path: Path) -> None:
    """100 results (the most a page holds) with comments of 2 000 characters: about 800 KB uncut."""
    from mcp_tools.codenexus import tools as nexus

    for n in range(100):
        (tmp_path / f"f{n:03d}.py").write_text("x = 1\n")
        nexus.add_comment(s, f"f{n:03d}.py", f"file {n}: " + "wörd \"quoted\" " * 140)

    def step(answer: dict[str, Any], args: dict[str, Any]) -> dict[str, Any] | None:
        if answer.get("truncated"):
            assert answer["omitted"] > 0 and "next_offset" in answer
        return None if "next_offset" not in answer else {**args, "offset": answer["next_offset"]}

    pages = follow(s, "query_files", {"comment_contains": "quoted", "limit": 100}, step, DEFAULT_CAP)
    paths = [r["file_path"] for p in pages for r in p["results"]]
    assert len(pages) > 2 and sorted(paths) == [f"f{n:03d}.py" for n in range(100)] and len(set(paths)) == 100
    assert pages[0]["truncated"] is True and pages[0]["total_count"] == 100
    assert all(next(iter(p)) == "next_offset" for p in pages[:-1])  # first: where a cut-short reader finds it


def test_every_declared_tool_is_bounded_whatever_its_handler_answers() -> None:
    """The cap sits where every tool's success is answered (binding's `_result`): each declared tool, its
    handler swapped for one answering 600 KB, is refused within the cap in its family's dialect."""
    import dataclasses

    from mcp.types import JSONRPCError

    from mcp_tools import dialects
    from mcp_tools.binding import Runtime
    from mcp_tools.catalog import declared

    runtime = Runtime(lambda: None)
    tools = declared()
    assert len(tools) > 30
    for name, decl in tools.items():
        def huge(*_: Any, **__: Any) -> dict[str, Any]:
            return {"blob": 'x"' * 200_000}

        huge.__module__ = decl.handler.__module__
        fake = dataclasses.replace(decl, handler=huge, needs_services=False, render=None)
        family = dialects.family(decl.handler.__module__)
        if family == dialects.CODENEXUS:
            with pytest.raises(MCPError) as caught:
                runtime.call(fake, {})
            line = JSONRPCError(jsonrpc="2.0", id=7, error=caught.value.error).model_dump_json(
                by_alias=True, exclude_unset=True).encode()
            assert caught.value.error.code == -32002, name
        else:
            result = runtime.call(fake, {})
            line = line_of(result)
            text = error_text(result)
            assert "CODE3_MAX_ANSWER_BYTES" in text, name
            if family == dialects.AI_LOOM:
                assert error_of(result)["code"] == "VALIDATION_ERROR", name
            elif family == dialects.REVERSE_SPEC:
                assert text.startswith(f"{name} 失败: "), name
            else:
                assert error_of(result)["code"] == "E_VALIDATION", name
        assert len(line) <= DEFAULT_CAP, name


def test_a_sync_renames_report_past_the_cap_counts_what_it_left_out(
        s: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write cannot be asked again: its report is cut to its leading moves, the rest counted, and where to
    list them said (`since`); every file's metadata moved all the same."""
    from adapters.git import git
    from mcp_tools.codenexus import tools as nexus

    names = [f"pkg/a_rather_long_module_name_{n:03d}.py" for n in range(60)]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"value = {names.index(name)}\n")
    (tmp_path / ".gitignore").write_text(".code3/\n")
    git("init", "-q", cwd=tmp_path)
    git("add", "-A", cwd=tmp_path)
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "initial", cwd=tmp_path)
    for name in names:
        nexus.add_tag(s, name, ["moved"])
    git("mv", "pkg", "renamed_package", cwd=tmp_path)
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "move", cwd=tmp_path)
    cap = 4096
    monkeypatch.setenv("CODE3_MAX_ANSWER_BYTES", str(cap))
    [result] = calls(s, "sync_renames", [{}], profile="codenexus")
    assert len(line_of(result)) <= cap
    report = result.structured_content
    assert report is not None and report["truncated"] is True and report["since"]
    assert 0 < len(report["moved"]) < 60 and len(report["moved"]) + report["omitted"] == 60
    assert "60 renamed files" in report["message"]
    monkeypatch.delenv("CODE3_MAX_ANSWER_BYTES")
    found = nexus.query_files(s, tags=["moved"], limit=100)["results"]
    assert sorted(r["file_path"] for r in found) == sorted(n.replace("pkg/", "renamed_package/") for n in names)
