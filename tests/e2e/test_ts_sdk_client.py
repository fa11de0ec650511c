"""Every tool of every profile, through clients Code3 did not write: the official TypeScript SDK's `Client`
(@modelcontextprotocol/sdk, pinned; the client Claude Code and the MCP Inspector are built on) and the Python
SDK's, each over stdio (`code3 mcp --profile X`, one process per profile and identity) and streamable HTTP
(`code3 serve`, profile all, one process per identity).

Both clients list the tools first, which turns on their output-schema check: a success answer that does not
match its tool's outputSchema, or an error answer carrying structuredContent, makes the client throw its own
error (TS: -32602 "Structured content does not match the tool's output schema") instead of showing Code3's.
One scenario table runs through the four combinations: the seed 001 example calls (answers compared with the
seed's, as tests/e2e/test_seed_examples.py does), success calls of every other tool, and each family's error
cases, each asserted in that family's own dialect as the client surfaced it:
  spec_mcp / server_mcp / add: isError, the text `{code: E_*, message, hint}`, no structuredContent;
  reverse-spec (seed 000):     isError, the text `<tool> 失败: …`, no structuredContent;
  ai-loom (seed 004):          isError, the text `{code: NOT_FOUND|VALIDATION_ERROR|INTERNAL, message}`;
  CodeNexus (seed 002):        a JSON-RPC error (the client throws it) -32000/-32001/-32002 (or the protocol's
                               -326xx for a malformed argument) with data {type, details, timestamp}.
Without npm or the pinned SDK (`make test` installs it when npm is on PATH) the TypeScript rows skip with the
reason, or fail under CODE3_REQUIRE_TEST_TOOLS=1 (CI; tests/tools_needed.py). `E2E_SHOW=1 pytest -s` prints every
call's outcome.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

from adapters.keystore import Keystore
from adapters.local_ledger import LocalLedger
from code3.settings import Settings
from mcp_tools.catalog import PROFILES, TEXT_ANSWERS, declared
from tests import tools_needed
from tests.answers import error_of, error_text
from tests.e2e.test_seed_examples import (
    COOLING,
    IDENTITIES,
    ROWS_001,
    Run,
    _learn,
    _operator_before,
    compare,
)
from tests.e2e.test_seed_examples import seed_project as seed_project  # a fixture

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).parent / "ts_client" / "driver.mjs"
TOKEN = "ts-sdk-e2e-serve-token-0123456789abcdef"
MISSING_ANN = "ann_00000000000000000000000000"
APP = "import util\n\n\ndef main(argv):\n    \"\"\"Entry point.\"\"\"\n    return util.double(len(argv))\n"
UTIL = "def double(n):\n    \"\"\"Twice n.\"\"\"\n    return 2 * n\n"
MAIN_RS = "mod lib;\n\nfn main() {\n    lib::run();\n}\n"
LIB_RS = "pub fn run() {}\n"
CODENEXUS_CODES = {-32000, -32001, -32002, -32600, -32601, -32602, -32603}


# --- the scenario table ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ok:
    """A success: no isError, a structuredContent the client validated (and the seed's answer, for a seed row)."""

    seed_answer: str | None = None
    keys: frozenset[str] = frozenset()  # the top-level fields of the seed's example answer
    text: str | None = None  # the seed's exact text (seed 003's `add`)


@dataclass(frozen=True)
class Err:
    """A failure in `family`'s dialect: `code` is the E_*/ai-loom code, the JSON-RPC code, or reverse-spec's tool."""

    family: str  # code3 | reverse-spec | ai-loom | codenexus
    code: str | int


@dataclass(frozen=True)
class Call:
    profile: str
    who: str  # sponsor | worker
    tool: str
    args: Callable[[State], dict[str, Any]]
    expect: Ok | Err
    seed: str | None = None  # a seed 001 row: its operator steps and substitutions apply
    learn: Callable[[State, dict[str, Any]], None] | None = None


@dataclass
class State:
    """What the run has produced so far, for later calls' arguments."""

    run: Run = field(default_factory=Run)
    values: dict[str, str] = field(default_factory=dict)


def fixed(args: dict[str, Any]) -> Callable[[State], dict[str, Any]]:
    return lambda _: args


def keep(name: str, key: str) -> Callable[[State, dict[str, Any]], None]:
    def learn(state: State, answer: dict[str, Any]) -> None:
        state.values[name] = answer[key]
    return learn


def seed_calls() -> list[Call]:
    calls = []
    for row in ROWS_001:
        def args(state: State, text: str = row.request) -> dict[str, Any]:
            return state.run.request(text)

        def learn(state: State, answer: dict[str, Any], row: Any = row) -> None:
            _learn(row, answer, state.run)

        calls.append(Call(row.profile, row.who, row.tool, args, Ok(row.answer), seed=row.seed, learn=learn))
    return calls


def keys(names: str) -> frozenset[str]:
    return frozenset(names.split())


def _issue(state: State, number: int | None = None) -> str:
    return f"{state.run.base}/owner/repo/issues/{number if number is not None else state.run.number}"


ANNOTATION = keys("id filePath startLine endLine comment tags priority createdAt updatedAt")  # seed 004
SEED = {call.seed: call for call in seed_calls()}
LOCAL, REMOTE, SERVER = "client-local", "client-remote", "server"
E = "code3"

SCENARIO: list[Call] = [
    # --- seed 001 A (client-local) and seed 003 (add), with their errors
    SEED["A.1"], SEED["A.2"], SEED["A.3"],
    Call(LOCAL, "sponsor", "spec_mcp.plan", fixed({"feature_id": "009-missing"}), Err(E, "E_PRECONDITION")),
    Call(LOCAL, "sponsor", "spec_mcp.specify", fixed({"feature_description": "again", "feature_id": "001-login"}),
         Err(E, "E_EXISTS")),
    Call(LOCAL, "sponsor", "spec_mcp.plan", fixed({"feature_id": "003-web-ai-agent"}), Err(E, "E_EXISTS")),
    Call(LOCAL, "sponsor", "spec_mcp.tasks", fixed({"feature_id": "001-login"}), Err(E, "E_PRECONDITION")),
    # seed 001 types tech_constraints `string | null`: an explicit null is accepted
    Call(LOCAL, "sponsor", "spec_mcp.plan", fixed({"feature_id": "002-tags", "tech_constraints": None}), Ok()),
    Call(LOCAL, "sponsor", "spec_mcp.specify", fixed({"feature_description": "x", "allow_overwrite": "yes"}),
         Err(E, "E_VALIDATION")),
    Call(LOCAL, "sponsor", "add", fixed({"a": 5, "b": 3}), Ok()),
    Call(LOCAL, "sponsor", "add", fixed({"a": "abc", "b": 3}), Err(E, "E_VALIDATION")),
    # --- seed 001 B (client-remote)
    SEED["B.1"], SEED["B.2"], SEED["B.3"], SEED["B.4"],
    Call(REMOTE, "sponsor", "spec_mcp.remote_plan",
         lambda s: {"issue_url": _issue(s), "feature_id": "001-login"}, Err(E, "E_PRECONDITION")),
    Call(REMOTE, "sponsor", "spec_mcp.remote_tasks",
         lambda s: {"issue_url": _issue(s, 999), "feature_id": "003-web-ai-agent"}, Err(E, "E_NOT_FOUND")),
    Call(REMOTE, "sponsor", "spec_mcp.publish_issue_with_metadata",
         fixed({"repo": "owner/repo", "feature_id": "009-missing", "spec_path": "specs/009-missing/spec.md",
                "amount": "1"}), Err(E, "E_NOT_FOUND")),
    Call(REMOTE, "sponsor", "spec_mcp.publish_issue_with_metadata",
         fixed({"repo": "owner/repo", "feature_id": "003-web-ai-agent",
                "spec_path": "specs/003-web-ai-agent/spec.md", "amount": "-1"}), Err(E, "E_VALIDATION")),
    # seed 001 types feature_id `string | null`: an explicit null is accepted (after B.1, which numbers 004)
    Call(REMOTE, "sponsor", "spec_mcp.specify", fixed({"feature_description": "Null id", "feature_id": None}), Ok()),
    Call(REMOTE, "sponsor", "add", fixed({"a": 1.5, "b": 2}), Ok()),
    # --- seed 001 C (server, the worker)
    SEED["C.2"], SEED["C.1"],
    Call(SERVER, "worker", "server_mcp.withdraw_task", lambda s: {"task_id": f"owner/repo#{s.run.number}"}, Ok()),
    Call(SERVER, "worker", "server_mcp.accept_task", lambda s: {"task_id": f"owner/repo#{s.run.number}"}, Ok()),
    Call(SERVER, "worker", "server_mcp.accept_task", fixed({"task_id": "owner/repo#999"}), Err(E, "E_NOT_FOUND")),
    Call(SERVER, "worker", "server_mcp.withdraw_task", fixed({"task_id": "owner/repo#999"}), Err(E, "E_NOT_FOUND")),
    Call(SERVER, "worker", "server_mcp.accept_best_task", fixed({"min_amount": "not-a-number"}),
         Err(E, "E_VALIDATION")),
    Call(SERVER, "worker", "server_mcp.show_bounty", lambda s: {"bounty_id": s.run.bounty_id}, Ok()),
    Call(SERVER, "worker", "server_mcp.show_bounty", fixed({"task_id": "owner/repo#999"}), Err(E, "E_NOT_FOUND")),
    Call(SERVER, "worker", "server_mcp.fork_and_prepare", fixed({}), Err(E, "E_VALIDATION")),
    SEED["C.3"], SEED["C.4"], SEED["C.5"],
    Call(SERVER, "worker", "server_mcp.comment_issue", lambda s: {"issue_url": _issue(s, 999), "body": "hello"},
         Err(E, "E_NOT_FOUND")),
    Call(SERVER, "worker", "server_mcp.open_pr",
         fixed({"repo": "owner/repo", "branch": "no-such-branch", "title": "t", "body": "b"}), Err(E, "E_NOT_FOUND")),
    Call(SERVER, "worker", "server_mcp.fork_and_prepare",
         fixed({"repo": "owner/missing", "issue_json": {"schema": "code3/v1", "issue_number": 1,
                                                        "feature_id": "003-web-ai-agent"}}), Err(E, "E_NOT_FOUND")),
    SEED["C.6"],
    Call(SERVER, "worker", "server_mcp.claim_payout", lambda s: {"bounty_id": s.run.bounty_id},
         Err(E, "E_INVALID_STATE")),  # not merged yet
    Call(SERVER, "worker", "server_mcp.submit_pr",
         lambda s: {"bounty_id": "0x" + "0" * 64, "pr_url": f"{s.run.base}/owner/repo/pull/{s.run.pr}"},
         Err(E, "E_NOT_FOUND")),
    SEED["C.7"],
    Call(SERVER, "worker", "add", fixed({"a": -2, "b": 2}), Ok()),
    # --- seed 000 (reverse-spec)
    Call("reverse-spec", "sponsor", "prepare", fixed({"targetPath": "src"}),
         Ok(keys=keys("skeletons mergedSkeleton context filePaths"))),
    Call("reverse-spec", "sponsor", "generate", fixed({"targetPath": "src/app.py", "outputDir": "reverse"}),
         Ok(keys=keys("specPath tokenUsage confidence warnings")),
         learn=keep("spec", "specPath")),
    Call("reverse-spec", "sponsor", "diff", lambda s: {"specPath": s.values["spec"], "sourcePath": "src/app.py"}, Ok()),
    Call("reverse-spec", "sponsor", "batch", fixed({"projectRoot": "src"}), Ok()),
    Call("reverse-spec", "sponsor", "prepare", fixed({"targetPath": "src/nonexistent/"}),
         Err("reverse-spec", "prepare")),
    Call("reverse-spec", "sponsor", "prepare", fixed({}), Err("reverse-spec", "prepare")),
    Call("reverse-spec", "sponsor", "generate", fixed({"targetPath": "src/nonexistent.py"}),
         Err("reverse-spec", "generate")),
    Call("reverse-spec", "sponsor", "diff", fixed({"specPath": "reverse/missing.spec.md", "sourcePath": "src/app.py"}),
         Err("reverse-spec", "diff")),
    Call("reverse-spec", "sponsor", "batch", fixed({"projectRoot": "no-such-dir"}), Err("reverse-spec", "batch")),
    # --- seed 004 (ai-loom; the writes are in profile all only)
    Call("all", "sponsor", "ai-loom.annotate",
         fixed({"filePath": "src/app.py", "startLine": 4, "endLine": 6, "comment": "the entry point", "priority": "P0",
                "tags": ["entry"]}), Ok(keys=ANNOTATION), learn=keep("ann", "id")),
    Call("all", "sponsor", "ai-loom.annotate",
         fixed({"filePath": "src/util.py", "startLine": 1, "endLine": 3, "comment": "to delete"}), Ok(),
         learn=keep("ann2", "id")),
    Call("all", "sponsor", "ai-loom.edit", lambda s: {"id": s.values["ann"], "comment": "main()"}, Ok()),
    Call("all", "sponsor", "ai-loom.delete", lambda s: {"id": s.values["ann2"]}, Ok()),
    Call("all", "sponsor", "ai-loom.annotate",
         fixed({"filePath": "src/app.py", "startLine": 6, "endLine": 4, "comment": "backwards"}),
         Err("ai-loom", "VALIDATION_ERROR")),
    Call("all", "sponsor", "ai-loom.edit", fixed({"id": MISSING_ANN, "comment": "x"}), Err("ai-loom", "NOT_FOUND")),
    Call("all", "sponsor", "ai-loom.delete", fixed({"id": MISSING_ANN}), Err("ai-loom", "NOT_FOUND")),
    Call("ai-loom", "sponsor", "ai-loom.list_contexts", fixed({"kind": "annotation", "limit": 5, "offset": 0}),
         Ok(keys=keys("items"))),
    Call("ai-loom", "sponsor", "ai-loom.get_context", lambda s: {"id": s.values["ann"]}, Ok(keys=ANNOTATION)),
    Call("ai-loom", "sponsor", "ai-loom.stitch", fixed({"templateId": "concise", "maxChars": 800}),
         Ok(keys=keys("prompt stats"))),
    Call("ai-loom", "sponsor", "ai-loom.get_context", fixed({"id": MISSING_ANN}), Err("ai-loom", "NOT_FOUND")),
    Call("ai-loom", "sponsor", "ai-loom.get_context", fixed({"id": "nope"}), Err("ai-loom", "VALIDATION_ERROR")),
    Call("ai-loom", "sponsor", "ai-loom.stitch", fixed({"maxChars": 10}), Err("ai-loom", "VALIDATION_ERROR")),
    Call("ai-loom", "sponsor", "ai-loom.list_contexts", fixed({"limit": "many"}), Err("ai-loom", "VALIDATION_ERROR")),
    # --- seed 002 (CodeNexus): its example calls on its example files
    Call("codenexus", "sponsor", "add_tag", fixed({"file_path": "src/main.rs", "tags": ["backend", "core"]}),
         Ok(keys=keys("success message added_tags total_tags updated_at"))),
    Call("codenexus", "sponsor", "add_comment",
         fixed({"file_path": "src/main.rs", "comment": "主入口文件，包含应用启动逻辑"}),
         Ok(keys=keys("success message comment_length updated_at"))),
    Call("codenexus", "sponsor", "create_relationship",
         fixed({"source_path": "src/main.rs", "target_path": "src/lib.rs", "relationship_type": "imports",
                "description": "导入核心库函数"}), Ok(keys=keys("success message relationship"))),
    Call("codenexus", "sponsor", "describe_tag", fixed({"tag": "core", "description": "the core", "color": "#ff6b6b"}),
         Ok()),
    Call("codenexus", "sponsor", "query_files", fixed({"tags": ["backend", "core"]}),
         Ok(keys=keys("success results total_count query_time_ms"))),
    Call("codenexus", "sponsor", "derive_relationships", fixed({"path": "src"}), Ok()),
    Call("codenexus", "sponsor", "sync_renames", fixed({}), Ok()),
    Call("codenexus", "sponsor", "remove_relationship",
         fixed({"source_path": "src/main.rs", "target_path": "src/lib.rs", "relationship_type": "imports"}), Ok()),
    Call("codenexus", "sponsor", "remove_tag", fixed({"file_path": "src/main.rs", "tags": ["backend"]}), Ok()),
    Call("codenexus", "sponsor", "add_tag", fixed({"file_path": "src/missing.py", "tags": ["core"]}),
         Err("codenexus", -32000)),
    Call("codenexus", "sponsor", "add_tag", fixed({"file_path": "../outside.py", "tags": ["core"]}),
         Err("codenexus", -32001)),
    Call("codenexus", "sponsor", "add_comment", fixed({"file_path": ".code3/ledger.sqlite", "comment": "x"}),
         Err("codenexus", -32001)),
    Call("codenexus", "sponsor", "describe_tag", fixed({"tag": "core", "description": "d", "color": "red"}),
         Err("codenexus", -32002)),
    Call("codenexus", "sponsor", "add_tag", fixed({"file_path": "src/app.py", "tags": []}), Err("codenexus", -32002)),
    Call("codenexus", "sponsor", "create_relationship",
         fixed({"source_path": "src/app.py", "target_path": "src/missing.py", "relationship_type": "imports"}),
         Err("codenexus", -32000)),
    Call("codenexus", "sponsor", "add_comment", fixed({"file_path": "src/app.py"}), Err("codenexus", -32602)),
    # --- the union profiles (mcp_tools.profile_unions.UNIONS): a sponsor's tools, the code-understanding families
    Call("sponsor", "sponsor", "add", fixed({"a": 5, "b": 3}), Ok(text="The sum of 5 + 3 = 8")),
    Call("sponsor", "sponsor", "spec_mcp.specify", fixed({"feature_description": "Union profile"}), Ok()),
    Call("knowledge", "sponsor", "prepare", fixed({"targetPath": "src/app.py"}),
         Ok(keys=keys("skeletons mergedSkeleton context filePaths"))),
    Call("knowledge", "sponsor", "add_tag", fixed({"file_path": "src/missing.py", "tags": ["core"]}),
         Err("codenexus", -32000)),
]


# --- the clients ------------------------------------------------------------------------------------------------


def server_env(project: Path, identity: str) -> dict[str, str]:
    env = {**os.environ, "CODE3_PROJECT": str(project), "CODE3_IDENTITY": identity,
           "CODE3_COOLING_PERIOD": str(COOLING), "CODE3_RESOLVER": "default", "PYTHONPATH": str(ROOT)}
    env.pop("ANTHROPIC_API_KEY", None)  # reverse-spec writes offline
    return env


def typescript_sdk() -> Path:
    """The pinned SDK's npm prefix (tests/tools_needed.py: skips, or fails under CI, when npm or the SDK is missing)."""
    return tools_needed.typescript_sdk()


class TsSession:
    """One connection of the TypeScript driver (tests/e2e/ts_client/driver.mjs)."""

    def __init__(self, proc: asyncio.subprocess.Process, tools: list[str], server: dict[str, Any]) -> None:
        self.proc, self.tools, self.server = proc, tools, server

    @classmethod
    async def open(cls, config: dict[str, Any]) -> TsSession:
        proc = await asyncio.create_subprocess_exec("node", str(DRIVER), str(typescript_sdk()),
                                                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                    limit=64 * 1024 * 1024)
        session = cls(proc, [], {})
        connected = (await session._exchange(config))["connected"]
        session.tools, session.server = connected["tools"], connected["server"]
        return session

    async def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        await self.proc.stdin.drain()
        line = await asyncio.wait_for(self.proc.stdout.readline(), 120)
        assert line, f"the TypeScript driver stopped (exit {await self.proc.wait()})"
        return json.loads(line)

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return await self._exchange({"tool": tool, "arguments": args})

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert await asyncio.wait_for(self.proc.wait(), 60) == 0


class PySession:
    """One connection of the Python SDK's `Client`, answering as the TypeScript driver does."""

    def __init__(self, client: Client, tools: list[str]) -> None:
        self.client, self.tools = client, tools

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            result = await self.client.call_tool(tool, args)
        except MCPError as exc:
            return {"error": {"code": exc.code, "message": exc.message, "data": exc.data}}
        except RuntimeError as exc:  # the SDK's own output-schema check
            return {"error": {"code": None, "message": str(exc), "data": None}}
        return {"result": result.model_dump(by_alias=True, exclude_none=True, mode="json")}


class Serve:
    """`code3 serve --port 0` (profile all) acting as one identity, with a configured token."""

    def __init__(self, project: Path, identity: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "code3", "serve", "--port", "0"], cwd=project, text=True,
                                     env={**server_env(project, identity), "CODE3_SERVE_TOKEN": TOKEN},
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "code3 serve did not start"
        self.url = json.loads(line)["listening"] + "/mcp"

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.communicate(timeout=30)


class Sessions:
    """Opens one session per (profile, identity) on first use, for one client and one transport."""

    def __init__(self, client: str, transport: str, project: Path, stack: AsyncExitStack) -> None:
        self.client, self.transport, self.project, self.stack = client, transport, project, stack
        self.open: dict[tuple[str, str], Any] = {}
        self.serves: dict[str, Serve] = {}

    async def get(self, profile: str, identity: str) -> Any:
        key = (profile if self.transport == "stdio" else "all", identity)
        if key not in self.open:
            self.open[key] = await self._connect(*key)
        return self.open[key]

    async def _connect(self, profile: str, identity: str) -> Any:
        stdio = {"command": sys.executable, "args": ["-m", "code3", "mcp", "--profile", profile],
                 "env": server_env(self.project, identity), "cwd": str(self.project)}
        if self.transport == "http":
            serve = self.serves[identity] = Serve(self.project, identity)
            self.stack.callback(serve.stop)
        if self.client == "ts":
            config = {"transport": "stdio", **stdio} if self.transport == "stdio" else \
                {"transport": "http", "url": serve.url, "token": TOKEN}
            session = await TsSession.open(config)
            self.stack.push_async_callback(session.close)
            return session
        if self.transport == "stdio":
            target: Any = StdioServerParameters(**stdio)
            client = await self.stack.enter_async_context(Client(target))
        else:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = await self.stack.enter_async_context(
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120))
            client = await self.stack.enter_async_context(
                Client(streamable_http_client(serve.url, http_client=http), mode="legacy"))
        tools = [t.name for t in (await client.list_tools()).tools]  # turns the output-schema check on
        return PySession(client, tools)


# --- checking an answer ---------------------------------------------------------------------------------------


def problems_of(call: Call, outcome: dict[str, Any], state: State) -> list[str]:
    """What is wrong with the client's outcome for `call` (empty: as expected)."""
    expect = call.expect
    if "error" in outcome:
        error = outcome["error"]
        if not isinstance(expect, Err) or expect.family != "codenexus":
            return [f"the client threw {error['code']}: {error['message'][:300]}"]
        found = []
        if error["code"] != expect.code:
            found.append(f"JSON-RPC code {error['code']} (expected {expect.code}): {error['message'][:200]}")
        data = error.get("data")
        if not (isinstance(data, dict) and {"type", "details", "timestamp"} <= set(data)):
            found.append(f"error data {data!r} lacks type/details/timestamp")
        elif data["details"][:30] not in error["message"]:  # clients such as Claude Code show the message only
            found.append(f"the message {error['message'][:200]!r} lacks the details' gist {data['details'][:80]!r}")
        return found
    result = outcome["result"]
    if isinstance(expect, Ok):
        if result.get("isError"):
            return [f"failed: {json.dumps(result.get('content'), ensure_ascii=False)[:300]}"]
        answer = result.get("structuredContent")
        if call.tool in TEXT_ANSWERS:  # seeds 000 and 003: the text is the answer, no structuredContent
            if answer is not None:
                return [f"structuredContent where the seed answers text: {result!r:.300}"]
            text = result["content"][0]["text"]
            if expect.text is not None:
                return [] if text == expect.text else [f"the text {text!r:.200}, not the seed's {expect.text!r}"]
            if call.tool == "add":
                return [] if text.startswith("The sum of ") else [f"not the seed's add text: {text!r:.200}"]
            answer = json.loads(text)
        if not isinstance(answer, dict):
            return [f"no structuredContent: {result!r:.300}"]
        if call.learn:
            call.learn(state, answer)
        if not expect.keys <= answer.keys():
            return [f"lacks the seed's fields {sorted(expect.keys - answer.keys())}: {answer!r:.300}"]
        if expect.seed_answer is None:
            return []
        return compare(state.run.expected(expect.seed_answer), answer)  # the extras: test_seed_examples
    if expect.family == "codenexus":
        return [f"answered a result, not a JSON-RPC error: {result!r:.300}"]
    try:
        answer = CallToolResult.model_validate(result)
        text, error = error_text(answer), error_of(answer)
    except AssertionError as exc:
        return [str(exc)[:300]]
    if expect.family == "reverse-spec":
        return [] if text.startswith(f"{expect.code} 失败: ") and len(text) > len(f"{expect.code} 失败: ") else \
            [f"not the seed's '{expect.code} 失败: …' text: {text[:200]!r}"]
    if "code" not in error:
        return [f"not the family's JSON error: {text[:200]!r}"]
    found = [] if error["code"] == expect.code else [f"code {error['code']} (expected {expect.code}): {error}"]
    if not error["message"]:
        found.append("an empty message")
    if expect.family == "code3" and not error.get("hint"):
        found.append(f"no hint: {error}")
    if expect.family == "ai-loom" and expect.code not in ("NOT_FOUND", "VALIDATION_ERROR", "INTERNAL"):
        found.append("not one of seed 004's codes")
    return found


def operator_before(seed: str, project: Path, run: Run) -> None:
    """The merge and the clock before the claim (test_seed_examples), reported by the embedded ledger's resolver:
    `default`, recorded here when no serve or worker process has recorded one yet."""
    if seed == "C.7":
        settings = Settings(project=project, cooling_period=COOLING)
        ledger = LocalLedger(settings.state_dir / "ledger.sqlite")
        try:
            if ledger.config().resolver is None:
                ledger.initialize_roles(Keystore(settings.keystore_dir).get_or_create("default").address)
        finally:
            ledger.close()
    _operator_before(next(r for r in ROWS_001 if r.seed == seed), project, run)


async def run_scenario(client: str, transport: str, project: Path) -> list[str]:
    state = State()
    problems: list[str] = []
    async with AsyncExitStack() as stack:
        sessions = Sessions(client, transport, project, stack)
        for index, call in enumerate(SCENARIO):
            if call.seed:
                operator_before(call.seed, project, state.run)
            session = await sessions.get(call.profile, IDENTITIES[call.who])
            assert call.tool in session.tools, f"{call.tool} is not listed by profile {call.profile}"
            outcome = await session.call(call.tool, call.args(state))
            if os.environ.get("E2E_SHOW"):
                print(index, call.tool, json.dumps(outcome, ensure_ascii=False)[:400])
            problems += [f"#{index} [{call.profile}] {call.tool} {call.expect}: {p}"
                         for p in problems_of(call, outcome, state)]
        if client == "ts" and transport == "stdio":
            for (profile, _), session in sessions.open.items():
                assert session.server["name"] == PROFILES[profile][0], session.server
    return problems


def test_the_scenario_drives_every_tool_of_every_profile_with_successes_and_errors() -> None:
    tools = declared()
    assert {call.tool for call in SCENARIO} == set(tools), "every declared tool is called"
    for name, decl in tools.items():
        assert {c.tool for c in SCENARIO if c.tool == name and isinstance(c.expect, Ok)}, f"{name}: no success row"
        assert any(c.profile in decl.profiles for c in SCENARIO if c.tool == name)
    assert {call.profile for call in SCENARIO} == set(PROFILES)
    families = {call.expect.family for call in SCENARIO if isinstance(call.expect, Err)}
    assert families == {"code3", "reverse-spec", "ai-loom", "codenexus"}
    named = {(c.tool, json.dumps(c.args(State()), sort_keys=True)) for c in SCENARIO
             if isinstance(c.expect, Err) and c.tool in ("spec_mcp.plan", "add", "ai-loom.get_context")}
    assert ("spec_mcp.plan", '{"feature_id": "009-missing"}') in named  # the issue's three cases
    assert ("add", '{"a": "abc", "b": 3}') in named
    assert ("ai-loom.get_context", json.dumps({"id": MISSING_ANN})) in named


@pytest.fixture
def project(seed_project: Path) -> Path:
    (seed_project / "src").mkdir()
    (seed_project / "src" / "app.py").write_text(APP)
    (seed_project / "src" / "util.py").write_text(UTIL)
    (seed_project / "src" / "main.rs").write_text(MAIN_RS)  # seed 002's example files
    (seed_project / "src" / "lib.rs").write_text(LIB_RS)
    git = ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid"]
    for args in (["init", "-q"], ["add", "src"], ["commit", "-q", "-m", "src"]):  # sync_renames reads git
        subprocess.run([*git, *args], cwd=seed_project, check=True, capture_output=True, timeout=60)
    return seed_project


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("client", ["ts", "python"])
def test_every_tool_answers_through_an_independent_client_as_its_family_defines(
        client: str, transport: str, project: Path) -> None:
    if client == "ts":
        typescript_sdk()
    problems = asyncio.run(run_scenario(client, transport, project))
    assert not problems, f"{len(problems)} of {len(SCENARIO)} calls:\n" + "\n".join(problems)
