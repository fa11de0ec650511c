"""ai-loom end to end, on real processes: annotations written by `code3 loom add`; the seed's three tools
answering in the seed's shapes from `code3 mcp --profile ai-loom` over stdio (both protocol eras) and from
`code3 serve` over streamable HTTP with its bearer token; REST (/api) and MCP giving the same data for
the same store on that server; and a `secret` annotation's text in no answer of any ai-loom tool or route
(nor in the server's output)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from tests.answers import error_of

pytestmark = pytest.mark.e2e

LEGACY = "2025-11-25"
SOURCE = "\n".join(f"def handler_{n}(request):  # line {n}" for n in range(1, 61)) + "\n"
SECRET = "hunter2-the-root-password-of-prod"
SEED_TOOLS = ["ai-loom.get_context", "ai-loom.list_contexts", "ai-loom.stitch"]
SEED_KEYS = {"id", "filePath", "startLine", "endLine", "comment", "tags", "priority", "createdAt", "updatedAt"}
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def env(root: Path, **extra: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "CODE3_HOME": f"{root}-home",  # the module's project's own
            "HOME": str(root), "CODE3_PROJECT": str(root),
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]), **extra}


def loom(root: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "code3", "loom", *args], capture_output=True, text=True,
                          env=env(root), cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with five annotations written by the CLI: P0/P1/P2 public ones, an internal one and a secret one."""
    root = tmp_path_factory.mktemp("loom")
    (root / "src" / "api").mkdir(parents=True)
    (root / "src" / "api" / "tree.ts").write_text(SOURCE)
    (root / "src" / "db.py").write_text(f"USER = 'app'\nPASSWORD = '{SECRET}'\n")
    loom(root, "add", "src/api/tree.ts", "12", "28", "需要分页加载，避免大目录阻塞 " + "x" * 300, "--tags", "perf",
         "--priority", "P0")
    loom(root, "add", "src/api/tree.ts", "2", "3", "handlers 2 and 3 share a cache " + "y" * 300)
    loom(root, "add", "src/api/tree.ts", "40", "41", "low priority note " + "z" * 300, "--priority", "P2")
    loom(root, "add", "src/api/tree.ts", "50", "50", "team-only: the on-call rota", "--sensitivity", "internal")
    loom(root, "add", "src/db.py", "2", "2", f"rotate {SECRET} every quarter", "--sensitivity", "secret")
    return root


def check_annotation(item: dict[str, Any]) -> None:
    """The seed's Annotation: its fields with their types (and Code3's sensitivity and anchor beside them)."""
    assert set(item) >= SEED_KEYS, item
    assert item["id"].startswith("ann_") and isinstance(item["filePath"], str)
    assert isinstance(item["startLine"], int) and isinstance(item["endLine"], int)
    assert item["startLine"] <= item["endLine"]
    assert item["comment"] is None or isinstance(item["comment"], str)
    assert isinstance(item["tags"], list) and item["priority"] in ("P0", "P1", "P2")
    assert ISO.match(item["createdAt"]) and ISO.match(item["updatedAt"])


async def exercise_the_seed(client: Client) -> dict[str, Any]:
    """Every seed tool in the seed's shape; what it answered (to compare with REST)."""
    assert sorted(t.name for t in (await client.list_tools()).tools) == SEED_TOOLS or client.server_info.name == "code3"
    first = (await client.call_tool("ai-loom.list_contexts", {"kind": "annotation", "limit": 2})).structured_content
    assert set(first) == {"items", "nextOffset"} and first["nextOffset"] == 2 and len(first["items"]) == 2
    rest = (await client.call_tool("ai-loom.list_contexts", {"offset": 2})).structured_content
    assert set(rest) == {"items"}, "no nextOffset on the last page"
    items = first["items"] + rest["items"]
    assert len(items) == 5
    for item in items:
        check_annotation(item)
    assert [i["priority"] for i in items] == sorted(i["priority"] for i in items), "priority, then file, then line"
    by_sensitivity = {i["sensitivity"]: i for i in items}
    assert by_sensitivity["secret"]["comment"] is None and by_sensitivity["internal"]["comment"] is None
    one = await client.call_tool("ai-loom.get_context", {"id": items[0]["id"]})
    assert not one.is_error and one.structured_content == items[0]
    assert json.loads(one.content[0].text) == items[0]
    stitched = (await client.call_tool("ai-loom.stitch", {"templateId": "concise"})).structured_content
    assert isinstance(stitched["prompt"], str)
    assert set(stitched["stats"]) == {"annotations", "chars", "files", "truncated"}
    assert stitched["stats"]["chars"] == len(stitched["prompt"]) <= 4000
    assert stitched["stats"]["truncated"] is False and stitched["dropped"] == []
    assert "team-only" not in stitched["prompt"], "internal stays out unless the server shares it"
    ids = [i["id"] for i in items]
    whole = (await client.call_tool("ai-loom.stitch", {"templateId": "detailed", "annotationIds": ids,
                                                       "maxChars": 200000})).structured_content
    budget = len(whole["prompt"]) - 1
    tight = (await client.call_tool("ai-loom.stitch", {"templateId": "detailed", "maxChars": budget,
                                                       "annotationIds": ids})).structured_content
    assert whole["stats"]["truncated"] is False and whole["stats"]["annotations"] == 4
    assert len(tight["prompt"]) <= budget and tight["stats"]["truncated"] is True
    eligible = [i["id"] for i in items if i["sensitivity"] != "internal"]
    kept = tight["stats"]["annotations"]
    assert kept >= 1 and tight["dropped"] == eligible[kept:], "whole annotations, the lowest priority dropped first"
    for arguments, code in (({"id": "ann_00000000000000000000000000"}, "NOT_FOUND"), ({"id": "nope"},
                                                                                      "VALIDATION_ERROR")):
        refused = await client.call_tool("ai-loom.get_context", arguments)
        assert error_of(refused)["code"] == code
    refused = await client.call_tool("ai-loom.stitch", {"maxChars": 10})
    assert error_of(refused)["code"] == "VALIDATION_ERROR"
    return {"list": (await client.call_tool("ai-loom.list_contexts", {})).structured_content, "one": items[0],
            "stitch": (await client.call_tool("ai-loom.stitch", {"maxChars": 1500})).structured_content}


def test_the_seed_tools_answer_in_the_seeds_shapes_over_stdio_in_both_eras(root: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "code3", "mcp", "--profile", "ai-loom"],
                                   env=env(root), cwd=root)

    async def main() -> None:
        for mode in ("legacy", "auto"):
            async with Client(params, mode=mode) as client:
                assert (client.protocol_version == LEGACY) == (mode == "legacy")
                assert client.server_info.name == "ai-loom"
                tools = (await client.list_tools()).tools
                assert sorted(t.name for t in tools) == SEED_TOOLS and all(t.annotations.read_only_hint for t in tools)
                await exercise_the_seed(client)

    anyio.run(main)


class Serve:
    """`code3 serve --port 0` in its own process, with a configured token."""

    TOKEN = "ai-loom-e2e-serve-token-0123456789"

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "code3", "serve", "--port", "0"], cwd=root, text=True,
                                     env=env(root, CODE3_SERVE_TOKEN=self.TOKEN), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"code3 serve did not start: {self.proc.stderr.read() if self.proc.stderr else ''}"
        ready = json.loads(line)
        self.url = ready["listening"]
        assert ready["api"] == f"{self.url}/api" and ready["token_from"] == "CODE3_SERVE_TOKEN"
        self.auth = {"Authorization": f"Bearer {self.TOKEN}"}

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=30)
        return out + err

    def mcp(self) -> Any:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers=self.auth, timeout=60)
        return http, streamable_http_client(f"{self.url}/mcp", http_client=http)


@pytest.fixture(scope="module")
def served(root: Path) -> Iterator[Serve]:
    serve = Serve(root)
    yield serve
    output = serve.stop()
    assert SECRET not in output, "the secret reaches no log line of the server"


def test_the_seed_tools_answer_over_streamable_http_and_rest_gives_the_same_data(served: Serve) -> None:
    async def main() -> dict[str, Any]:
        http, transport = served.mcp()
        async with http, Client(transport, mode="legacy") as client:
            assert client.server_info.name == "code3"
            return await exercise_the_seed(client)

    via_mcp = anyio.run(main)
    with httpx.Client(base_url=f"{served.url}/api", headers=served.auth, timeout=60) as api:
        assert api.get("/annotations").json() == via_mcp["list"]
        assert api.get(f"/annotations/{via_mcp['one']['id']}").json() == via_mcp["one"]
        assert api.post("/stitch", json={"maxChars": 1500}).json() == via_mcp["stitch"]
        spec = api.get("/openapi.json").json()
        assert set(spec["paths"]) == {"/annotations", "/annotations/{annotation_id}", "/stitch"}
    with httpx.Client(base_url=f"{served.url}/api", timeout=60) as anonymous:
        for path in ("/annotations", "/openapi.json", "/docs"):
            assert anonymous.get(path).status_code == 401, path


def test_a_secret_annotations_text_is_in_no_answer_of_any_tool_or_route(served: Serve, root: Path) -> None:
    """Every ai-loom MCP tool (the seed's three and the writes) and every REST route, on the real server."""
    answers: list[str] = []

    async def main() -> tuple[str, str]:
        http, transport = served.mcp()
        async with http, Client(transport, mode="legacy") as client:
            async def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
                result = await client.call_tool(tool, arguments)
                answers.append(json.dumps(result.model_dump(mode="json"), ensure_ascii=False))
                assert not result.is_error, result.content[0].text
                return result.structured_content

            made = await call("ai-loom.annotate", {"filePath": "src/db.py", "startLine": 1, "endLine": 2,
                                                   "comment": f"over MCP: {SECRET}", "sensitivity": "secret",
                                                   "tags": ["db"], "clientKey": "secret-mcp"})
            await call("ai-loom.annotate", {"filePath": "src/db.py", "startLine": 1, "endLine": 2,
                                            "comment": f"over MCP: {SECRET}", "sensitivity": "secret",
                                            "tags": ["db"], "clientKey": "secret-mcp"})  # the idempotent repeat
            listed = await call("ai-loom.list_contexts", {"limit": 200})
            secrets = [i["id"] for i in listed["items"] if i["sensitivity"] == "secret"]
            assert len(secrets) == 2
            for ann_id in secrets:
                await call("ai-loom.get_context", {"id": ann_id})
            for template in ("concise", "detailed"):
                await call("ai-loom.stitch", {"templateId": template})
                await call("ai-loom.stitch", {"templateId": template, "annotationIds": secrets, "maxChars": 200000})
            await call("ai-loom.edit", {"id": made["id"], "priority": "P0", "tags": ["db", "prod"]})
            await call("ai-loom.edit", {"id": made["id"], "comment": f"still {SECRET}"})
            return made["id"], secrets[0] if secrets[0] != made["id"] else secrets[1]

    via_mcp, via_cli = anyio.run(main)
    with httpx.Client(base_url=f"{served.url}/api", headers=served.auth, timeout=60) as api:
        made = api.post("/annotations", json={"filePath": "src/db.py", "startLine": 2, "endLine": 2,
                                              "comment": f"over REST: {SECRET}", "sensitivity": "secret"})
        assert made.status_code == 201
        responses = [made, api.get("/annotations", params={"limit": 200}), api.get("/openapi.json"), api.get("/docs")]
        for ann_id in (via_mcp, via_cli, made.json()["id"]):
            responses += [api.get(f"/annotations/{ann_id}"),
                          api.patch(f"/annotations/{ann_id}", json={"priority": "P2"}),
                          api.post("/stitch", json={"annotationIds": [ann_id], "templateId": "detailed"})]
        responses += [api.post("/stitch", json={}), api.post("/stitch", json={"templateId": "detailed"})]
        responses += [api.delete(f"/annotations/{ann_id}") for ann_id in (via_mcp, made.json()["id"])]
        for response in responses:
            assert response.status_code < 300, (response.request.url, response.text)
            answers.append(response.text)
    assert len(answers) == 28
    leaked = [a[:200] for a in answers if SECRET in a]
    assert not leaked, leaked
    shown = subprocess.run([sys.executable, "-m", "code3", "loom", "show", via_cli, "--reveal"], capture_output=True,
                           text=True, env=env(root), cwd=root, timeout=60)
    assert SECRET in shown.stdout, "the owner's CLI opens it (--reveal): the text is kept, only never sent"
