"""CodeNexus end to end: `code3 mcp --profile codenexus` driven by the SDK's client over stdio (both
protocol eras) and over streamable HTTP; a change made by a second process (the CLI) reaches a
subscribed client."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.integration.test_codenexus_tools import make_project

pytestmark = pytest.mark.e2e

LEGACY = "2025-11-25"
SEED_SCHEMAS = {
    "add_tag": {"required": ["file_path", "tags"], "tags": {"type": "array", "minItems": 1}},
    "add_comment": {"required": ["comment", "file_path"], "comment": {"type": "string", "maxLength": 2000}},
    "create_relationship": {"required": ["relationship_type", "source_path", "target_path"],
                            "relationship_type": {"enum": ["imports", "calls", "configures", "depends_on"]},
                            "description": {"type": "string", "maxLength": 500}},
    "query_files": {"required": [], "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                    "tags": {"type": "array"}, "relationship_type": {"enum": ["imports", "calls", "configures",
                                                                              "depends_on"]}},
}


def env(root: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "CODE3_HOME": os.environ["CODE3_HOME"],
            "CODE3_PROJECT": str(root), "CODE3_NEXUS_POLL_S": "0.1",
            "PYTHONPATH": str(Path(__file__).resolve().parents[2])}


def server(root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "code3", "mcp", "--profile", "codenexus"],
                                 env=env(root), cwd=root)


def cli(root: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "code3", "nexus", *args, "--project", str(root)],
                          capture_output=True, text=True, env=env(root), timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")


async def _exercise(client: Client) -> None:
    info = client.server_info
    assert (info.name, info.version, info.description) == ("CodeNexus", "1.0.0", "代码库关系管理工具")
    caps = client.server_capabilities
    assert caps.resources.subscribe and caps.resources.list_changed
    assert caps.tools.list_changed and caps.prompts.list_changed
    listed = {t.name: t for t in (await client.list_tools()).tools}
    for name, expected in SEED_SCHEMAS.items():
        schema = listed[name].input_schema
        assert sorted(schema.get("required", [])) == expected["required"], name
        for prop, facets in expected.items():
            if prop != "required":
                assert facets.items() <= schema["properties"][prop].items(), (name, prop)
    tagged = await client.call_tool("add_tag", {"file_path": "src/main.rs", "tags": ["backend", "core"]})
    assert tagged.structured_content["added_tags"] == ["backend", "core"]
    await client.call_tool("add_comment", {"file_path": "src/main.rs", "comment": "主入口文件，包含应用启动逻辑"})
    await client.call_tool("create_relationship", {"source_path": "src/main.rs", "target_path": "src/lib.rs",
                                                   "relationship_type": "imports", "description": "导入核心库函数"})
    found = (await client.call_tool("query_files", {"comment_contains": "启动"})).structured_content
    assert found["total_count"] == 1 and found["results"][0]["file_path"] == "src/main.rs"
    listed = {r.uri: r.name for r in (await client.list_resources()).resources}
    assert listed["codenexus://file/src/main.rs"] == "File Metadata: src/main.rs" and "codenexus://tags" in listed
    templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
    assert templates == {"codenexus://file/{+path}", "codenexus://relationships/{+path}"}
    meta = json.loads((await client.read_resource("codenexus://file/src/main.rs")).contents[0].text)
    assert meta["tags"] == ["backend", "core"] and meta["relationships"][0]["target"] == "src/lib.rs"
    rel = json.loads((await client.read_resource("codenexus://relationships/src/lib.rs")).contents[0].text)
    assert rel["relationship_count"] == {"outgoing": 0, "incoming": 1, "total": 1}
    tags = json.loads((await client.read_resource("codenexus://tags")).contents[0].text)
    assert tags["total_count"] == 2
    prompt = await client.get_prompt("analyze_file_relationships", {"file_path": "src/main.rs"})
    assert "出向关系：src/lib.rs (imports: 导入核心库函数)" in prompt.messages[0].content.text
    prompt = await client.get_prompt("suggest_refactoring", {"scope": "project"})
    assert "文件数量：2" in prompt.messages[0].content.text
    for call, code in ((lambda: client.call_tool("add_tag", {"file_path": "../x", "tags": ["ab"]}), -32001),
                       (lambda: client.call_tool("add_tag", {"file_path": "src/none.rs", "tags": ["ab"]}), -32000),
                       (lambda: client.call_tool("add_tag", {"file_path": "src/main.rs", "tags": ["AB"]}), -32002),
                       (lambda: client.call_tool("add_comment", {"file_path": "src/main.rs", "comment": "x" * 2001}),
                        -32002),
                       (lambda: client.call_tool("add_tag", {"file_path": "src/main.rs"}), -32602),
                       (lambda: client.read_resource("codenexus://file/src/none.rs"), -32000),
                       (lambda: client.read_resource("codenexus://file/.code3/events.sqlite"), -32001)):
        with pytest.raises(MCPError) as caught:
            await call()
        assert caught.value.error.code == code
        assert set(caught.value.error.data) == {"type", "details", "timestamp"}


def test_every_tool_resource_and_prompt_answers_over_stdio_in_both_eras(root: Path) -> None:
    async def main() -> None:
        async with Client(server(root), mode="legacy") as client:
            assert client.protocol_version == LEGACY
            await _exercise(client)
        async with Client(server(root)) as client:
            assert client.protocol_version != LEGACY
            tags = json.loads((await client.read_resource("codenexus://tags")).contents[0].text)
            assert tags["total_count"] == 2

    anyio.run(main)


def test_a_subscribed_legacy_client_hears_of_another_process_s_add_tag(root: Path) -> None:
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            heard.append(str(message.params.uri))

    async def main() -> None:
        async with Client(server(root), mode="legacy", message_handler=on_message) as client:
            await client.read_resource("codenexus://file/src/main.rs")
            await client.session.subscribe_resource("codenexus://file/src/main.rs")
            await anyio.to_thread.run_sync(lambda: cli(root, "tag", "src/main.rs", "backend"))
            with anyio.fail_after(10):
                while "codenexus://file/src/main.rs" not in heard:
                    await anyio.sleep(0.05)
            await client.session.unsubscribe_resource("codenexus://file/src/main.rs")
            heard.clear()
            await anyio.to_thread.run_sync(lambda: cli(root, "comment", "src/main.rs", "主入口"))
            await anyio.sleep(1.0)
            assert "codenexus://file/src/main.rs" not in heard

    anyio.run(main)


def test_a_listening_2026_client_hears_of_another_process_s_add_tag(root: Path) -> None:
    async def main() -> None:
        async with Client(server(root)) as client:
            uri = "codenexus://relationships/src/lib.rs"
            async with client.listen(resource_subscriptions=[uri]) as subscription:
                await anyio.to_thread.run_sync(lambda: cli(root, "relate", "src/main.rs", "src/lib.rs", "imports"))
                with anyio.fail_after(10):
                    async for event in subscription:
                        if getattr(event, "uri", None) == uri:
                            break

    anyio.run(main)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_url(root: Path) -> Iterator[str]:
    import uvicorn

    from code3.settings import Settings
    from code3.wiring import build_services
    from mcp_tools.server import build_server

    settings = Settings(project=root)
    app = build_server(lambda: build_services(settings), profile="codenexus").streamable_http_app()
    port = _free_port()
    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not web.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    web.should_exit = True
    thread.join(10)


def test_every_tool_resource_and_prompt_answers_over_streamable_http(http_url: str) -> None:
    async def main() -> None:
        async with Client(http_url, mode="legacy") as client:
            await _exercise(client)

    anyio.run(main)


def test_resources_list_pages_the_files_with_metadata(root: Path) -> None:
    from code3.settings import Settings
    from code3.wiring import build_services
    from mcp_tools.codenexus.tools import add_tag
    from mcp_tools.server import build_server

    settings = Settings(project=root)
    s = build_services(settings)
    for i in range(105):
        (root / f"gen/f{i:03d}.py").parent.mkdir(exist_ok=True)
        (root / f"gen/f{i:03d}.py").write_text("")
        add_tag(s, f"gen/f{i:03d}.py", ["generated"])
    s.close()

    async def main() -> None:
        async with Client(build_server(lambda: build_services(settings), profile="codenexus"), mode="legacy") as c:
            first = await c.list_resources()
            assert first.resources[0].uri == "codenexus://tags" and len(first.resources) == 101
            assert first.next_cursor == "100"
            second = await c.list_resources(cursor=first.next_cursor)
            assert [r.uri for r in second.resources][-1] == "codenexus://file/gen/f104.py"
            assert len(second.resources) == 5 and second.next_cursor is None
            with pytest.raises(MCPError) as caught:
                await c.list_resources(cursor="nonsense")
            assert caught.value.error.code == -32602

    anyio.run(main)


def test_a_subscribed_client_over_streamable_http_hears_of_another_process_s_write(http_url: str, root: Path) -> None:
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            heard.append(str(message.params.uri))

    async def main() -> None:
        async with Client(http_url, mode="legacy", message_handler=on_message) as client:
            await client.session.subscribe_resource("codenexus://relationships/src/lib.rs")
            await anyio.to_thread.run_sync(lambda: cli(root, "relate", "src/main.rs", "src/lib.rs", "calls"))
            with anyio.fail_after(10):
                while "codenexus://relationships/src/lib.rs" not in heard:
                    await anyio.sleep(0.05)

    anyio.run(main)


WEIRD = [None, 0, -1, 10**20, True, 1.5, "", " ", "x" * 5000, "../x", "/etc/passwd", "a\x00b", "💥/启动",
         ".code3/events.sqlite", "src/main.rs", [], ["ab", 5], [""] * 60, {}, {"a": 1}]


def test_no_argument_makes_a_codenexus_tool_answer_an_internal_error(root: Path) -> None:
    """A small fuzz: every tool, every argument, odd values; each answer is a result or a seed error."""
    from code3.settings import Settings
    from code3.wiring import build_services
    from mcp_tools.server import build_server

    settings = Settings(project=root)
    server = build_server(lambda: build_services(settings), profile="codenexus")

    async def main() -> None:
        async with Client(server, mode="legacy") as client:
            for tool in (await client.list_tools()).tools:
                names = list(tool.input_schema.get("properties", {}))
                base = {n: "src/main.rs" if "path" in n else ["ab"] if n == "tags" else "imports"
                        if n == "relationship_type" else "x" for n in tool.input_schema.get("required", [])}
                for name in names:
                    for value in WEIRD:
                        try:
                            result = await client.call_tool(tool.name, {**base, name: value})
                        except MCPError as exc:
                            assert exc.error.code in (-32000, -32001, -32002, -32602), (tool.name, name, value, exc)
                            continue
                        assert not result.is_error, (tool.name, name, value, result)

    anyio.run(main)
