"""End to end over stdio: real `code3 mcp` subprocesses driven by the MCP SDK client (and once by hand).

Each test builds its own throw-away project: three keys (alice sponsors, bob and carol work), alice
funded on the embedded ledger and `alice/todo-app` on the embedded forge. Every identity runs its own
server process; all of them share the project (one embedded event store, ledger and forge). The merge
webhook has no MCP tool yet, so the test reports the merge in-process through `mcp_tools.settle`, as
the webhook will.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from code3.settings import Settings
from code3.wiring import build_services
from mcp_tools.catalog import declared
from mcp_tools.lifecycle import settle
from tests.answers import error_of
from tests.conftest import STACKS
from tests.stacks import Stack

pytestmark = pytest.mark.e2e

REPO = "alice/todo-app"
AMOUNT = 1_000_000  # 1 USDT in its smallest unit
COOLING = 3600  # seconds; the test moves the ledger's clock past it
PEOPLE = ("alice", "bob", "carol")
LEGACY_VERSION = "2025-11-25"

TOOLS = declared()
SPEC_TOOLS = {"spec_mcp.specify", "spec_mcp.plan", "spec_mcp.tasks"}
PUBLISH = "spec_mcp.publish_issue_with_metadata"
SERVER_TOOLS = {"server_mcp.accept_task", "server_mcp.accept_best_task", "server_mcp.fork_and_prepare",
                "server_mcp.open_pr", "server_mcp.comment_issue", "server_mcp.submit_pr", "server_mcp.claim_payout",
                "server_mcp.withdraw_task", "server_mcp.show_bounty"}


@dataclass
class Project:
    root: Path
    addresses: dict[str, str]
    stack: Stack

    def settings(self, identity: str) -> Settings:
        return Settings(project=self.root, identity=identity, **self.stack.settings(identity))

    def env(self, identity: str) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", ""), "CODE3_HOME": os.environ["CODE3_HOME"],
                "CODE3_PROJECT": str(self.root), "CODE3_IDENTITY": identity,
                "CODE3_COOLING_PERIOD": str(COOLING), **self.stack.env(identity)}

    def server(self, identity: str, profile: str = "all") -> StdioServerParameters:
        return StdioServerParameters(command=sys.executable, args=["-m", "code3", "mcp", "--profile", profile],
                                     env=self.env(identity), cwd=self.root)


@pytest.fixture
def project(tmp_path: Path, stack: Stack) -> Project:
    root = tmp_path
    procs = {name: subprocess.Popen([sys.executable, "-m", "code3", "account", "new", name, "--project", str(root)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in PEOPLE}
    addresses = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, f"code3 account new {name} failed: {err}"
        addresses[name] = json.loads(out)["address"]
    found = Project(root, addresses, stack)
    stack.use_resolver(addresses["alice"])  # alice reports the merge below: the chain's resolver
    stack.mint(addresses["alice"], 5 * AMOUNT)
    stack.create_repo(REPO)
    return found


@asynccontextmanager
async def clients(project: Project, *identities: str, profile: str = "all", mode: str = "legacy"
                  ) -> AsyncIterator[list[Client]]:
    """One `code3 mcp` process (and SDK client) per identity, all on the same project."""
    async with AsyncExitStack() as stack:
        connected = []
        for identity in identities:
            client = await stack.enter_async_context(Client(project.server(identity, profile), mode=mode))
            connected.append(client)
        yield connected


def _text(result: Any) -> str:
    return result.content[0].text if result.content else "<no content>"


async def ok(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, f"{tool}({args}) failed: {_text(result)}"
    assert isinstance(result.structured_content, dict), f"{tool} returned no structured content: {_text(result)}"
    return result.structured_content


async def refused(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The error a tool answered; a plain-text error is returned as {code: None, text: ...} for the report."""
    result = await client.call_tool(tool, args)
    assert result.is_error, f"{tool}({args}) should have failed, got {result.structured_content}"
    error = error_of(result)
    return {"code": None, "hint": None, **error} if "text" in error else error


async def publish_bounty(alice: Client, description: str, network: str = "local") -> dict[str, Any]:
    """specify → plan → tasks → publish as alice; returns the publish answer plus feature_id and publish args."""
    spec = await ok(alice, "spec_mcp.specify", {"feature_description": description})
    fid = spec["feature_id"]
    await ok(alice, "spec_mcp.plan", {"feature_id": fid})
    await ok(alice, "spec_mcp.tasks", {"feature_id": fid})
    args = {"repo": REPO, "feature_id": fid, "spec_path": spec["paths"]["spec"], "amount": str(AMOUNT),
            "asset": "USDT", "network": network, "mode": "contest"}  # bob and carol both work on it
    published = await ok(alice, PUBLISH, args)
    return {**published, "feature_id": fid, "args": args}


async def prepare_and_open_pr(worker: Client, who: str, fid: str, number: int) -> str:
    prepared = await ok(worker, "server_mcp.fork_and_prepare",
                        {"repo": REPO, "issue_json": {"schema": "code3/v1", "feature_id": fid, "issue_number": number}})
    assert prepared["prepared"] is True
    (Path(prepared["workdir"]) / "export.py").write_text(f"def export_csv(todos):  # by {who}\n    return ''\n")
    pr = await ok(worker, "server_mcp.open_pr", {"repo": REPO, "branch": prepared["branch"],
                                                 "title": f"feat: CSV export ({who})", "body": f"Implements {fid}"})
    return pr["pr_url"]


@STACKS
def test_mcp_clients_drive_the_whole_lifecycle_over_stdio(project: Project) -> None:
    async def scenario() -> None:
        async with clients(project, "alice", "bob", "carol") as (alice, bob, carol):
            for client in (alice, bob, carol):
                assert client.protocol_version == LEGACY_VERSION

            published = await publish_bounty(alice, "Users can export their to-do list as CSV. Exports include dates",
                                             project.stack.network)
            again = await ok(alice, PUBLISH, published["args"])
            assert again == {k: v for k, v in published.items() if k not in ("feature_id", "args")}
            fid, number = published["feature_id"], published["issue"]["number"]
            bounty_id = published["bounty"]["bounty_id"]
            task_id = f"{REPO}#{number}"

            accepted = await ok(bob, "server_mcp.accept_task", {"task_id": task_id})
            assert accepted["bounty_id"] == bounty_id
            assert await ok(bob, "server_mcp.accept_task", {"task_id": task_id}) == accepted
            picked = await ok(carol, "server_mcp.accept_best_task", {})
            assert picked["selected_task_id"] == task_id and picked["bounty_id"] == bounty_id

            prs: dict[str, str] = {}
            for who, worker in (("bob", bob), ("carol", carol)):
                prs[who] = await prepare_and_open_pr(worker, who, fid, number)
                args = {"bounty_id": bounty_id, "pr_url": prs[who]}
                submitted = await ok(worker, "server_mcp.submit_pr", args)
                assert submitted["tx_hash"]
                assert (await ok(worker, "server_mcp.submit_pr", args))["tx_hash"] == submitted["tx_hash"]
            assert prs["bob"] != prs["carol"]
            other = await refused(bob, "server_mcp.submit_pr", {"bounty_id": bounty_id, "pr_url": prs["carol"]})
            assert other["code"] == "E_IDEMPOTENT_REJECTED", other

            project.stack.merge_pr(prs["bob"])
            services = build_services(project.settings("alice"))
            try:
                merged = settle.mark_merged(services, prs["bob"], delivery_id="e2e-delivery-1")
            finally:
                services.close()
            assert merged["state"] == "COOLING_DOWN" and merged["winner"] == project.addresses["bob"], merged

            cooling = await refused(bob, "server_mcp.claim_payout", {"bounty_id": bounty_id})
            assert cooling["code"] == "E_COOLING", cooling
            project.stack.advance(project.stack.cooling_period + 1)
            loser = await refused(carol, "server_mcp.claim_payout", {"bounty_id": bounty_id})
            assert loser["code"] == "E_UNAUTHORIZED", loser
            paid = await ok(bob, "server_mcp.claim_payout", {"bounty_id": bounty_id})
            assert paid["amount"] == str(AMOUNT) and paid["asset"] == "USDT"
            assert (await ok(bob, "server_mcp.claim_payout", {"bounty_id": bounty_id}))["tx_hash"] == paid["tx_hash"]

            services = build_services(project.settings("alice"))
            try:
                balance = services.chain.balance
                assert balance(project.addresses["bob"], "USDT") == AMOUNT
                assert balance(project.addresses["carol"], "USDT") == 0
                assert balance(project.addresses["alice"], "USDT") == 4 * AMOUNT
                assert "paid" in services.forge.get_issue(REPO, number).labels
            finally:
                services.close()
            assert project.stack.escrow() == 0

    asyncio.run(scenario())


def test_every_seed_error_case_answers_its_code(project: Project) -> None:
    async def scenario() -> dict[str, dict[str, Any]]:
        answers: dict[str, dict[str, Any]] = {}
        async with clients(project, "alice", "bob", "carol") as (alice, bob, carol):
            spec = {"feature_description": "Users can tag to-dos", "feature_id": "001-tags"}
            await ok(alice, "spec_mcp.specify", spec)
            answers["specify twice"] = await refused(alice, "spec_mcp.specify", spec)
            answers["plan before specify"] = await refused(alice, "spec_mcp.plan", {"feature_id": "002-unspecified"})
            answers["tasks before plan"] = await refused(alice, "spec_mcp.tasks", {"feature_id": "001-tags"})
            answers["accept unknown task"] = await refused(bob, "server_mcp.accept_task", {"task_id": f"{REPO}#99"})
            answers["claim unknown bounty"] = await refused(bob, "server_mcp.claim_payout", {"bounty_id": "999"})

            published = await publish_bounty(alice, "Users can export their to-do list as CSV")
            number, bounty_id = published["issue"]["number"], published["bounty"]["bounty_id"]
            await ok(bob, "server_mcp.accept_task", {"task_id": f"{REPO}#{number}"})
            carol_pr = await prepare_and_open_pr(carol, "carol", published["feature_id"], number)
            answers["submit without accepting"] = await refused(carol, "server_mcp.submit_pr",
                                                                {"bounty_id": bounty_id, "pr_url": carol_pr})

            answers["missing argument"] = await refused(alice, "spec_mcp.specify", {})
            answers["wrong type"] = await refused(alice, "spec_mcp.specify", {"feature_description": 3})
            answers["path outside the project"] = await refused(
                alice, PUBLISH, {**published["args"], "spec_path": "../../etc/passwd"})
            answers["bad task_id"] = await refused(bob, "server_mcp.accept_task", {"task_id": "nope"})
        return answers

    answers = asyncio.run(scenario())
    expected = {
        "specify twice": "E_EXISTS", "plan before specify": "E_PRECONDITION", "tasks before plan": "E_PRECONDITION",
        "accept unknown task": "E_NOT_FOUND", "claim unknown bounty": "E_NOT_FOUND",
        "submit without accepting": "E_INVALID_STATE", "missing argument": "E_VALIDATION",
        "wrong type": "E_VALIDATION", "path outside the project": "E_VALIDATION", "bad task_id": "E_VALIDATION",
    }
    got = {case: (answer.get("code"), bool(answer.get("hint"))) for case, answer in answers.items()}
    assert got == {case: (code, True) for case, code in expected.items()}, json.dumps(answers, indent=1)


def test_stdout_carries_json_rpc_only(project: Project) -> None:
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": LEGACY_VERSION, "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 5, "b": 3}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "spec_mcp.plan", "arguments": {"feature_id": "001-never-specified"}}},
    ]
    env = {**project.env("alice"), "CODE3_LOG_LEVEL": "DEBUG"}  # plenty of logging, all of it for stderr
    proc = subprocess.Popen([sys.executable, "-m", "code3", "mcp", "--profile", "all"], env=env, cwd=project.root,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    lines: list[str] = []
    responses: dict[int, dict[str, Any]] = {}
    try:
        for request in requests:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            if "id" not in request:
                continue
            while request["id"] not in responses:  # read up to this request's answer
                line = proc.stdout.readline()
                assert line, f"stdout closed before the answer to {request['method']}"
                lines.append(line)
                message = json.loads(line)
                if "id" in message:
                    responses[message["id"]] = message
        out, err = proc.communicate(timeout=30)  # closes stdin: the server must exit cleanly
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    lines += out.splitlines(keepends=True)
    assert proc.returncode == 0, err
    for line in lines:
        assert json.loads(line).get("jsonrpc") == "2.0", f"not JSON-RPC on stdout: {line!r}"
    assert responses[1]["result"]["protocolVersion"] == LEGACY_VERSION
    assert {t["name"] for t in responses[2]["result"]["tools"]} == set(TOOLS)
    assert responses[3]["result"]["content"][0]["text"] == "The sum of 5 + 3 = 8"
    failed = responses[4]["result"]
    assert error_of(failed)["code"] == "E_PRECONDITION"
    assert "E_PRECONDITION" in err, "the failed call's log line belongs on stderr"


def test_profiles_expose_only_their_tools(project: Project) -> None:
    remote = {"spec_mcp.remote_plan", "spec_mcp.remote_tasks"}
    reverse_spec = {"prepare", "generate", "batch", "diff"}
    expected = {
        "client-local": SPEC_TOOLS | {"add"},
        "client-remote": {"spec_mcp.specify", PUBLISH, "add"} | remote,
        "server": SERVER_TOOLS | {"add"},
        "reverse-spec": reverse_spec,
        "all": set(TOOLS),  # every declared tool, whatever family declares it
    }
    assert SPEC_TOOLS | SERVER_TOOLS | {PUBLISH, "add"} | remote | reverse_spec <= expected["all"]

    async def listing(profile: str) -> list[Any]:
        async with clients(project, "alice", profile=profile) as (client,):
            return list((await client.list_tools()).tools)

    async def scenario() -> dict[str, list[Any]]:
        found = await asyncio.gather(*(listing(profile) for profile in expected))
        return dict(zip(expected, found, strict=True))

    listed = asyncio.run(scenario())
    assert {profile: {t.name for t in tools} for profile, tools in listed.items()} == expected
    for profile, tools in listed.items():
        for tool in tools:
            assert tool.annotations is not None, f"{tool.name} ({profile}) has no annotations"
            assert isinstance(tool.annotations.idempotent_hint, bool), f"{tool.name} ({profile}) lacks idempotentHint"
            assert tool.annotations.idempotent_hint == TOOLS[tool.name].idempotent, tool.name
    not_idempotent = {t.name for t in listed["all"] if not t.annotations.idempotent_hint}
    assert not_idempotent == {"server_mcp.accept_best_task", "server_mcp.comment_issue", "generate"}


def test_newer_protocol_version_works_too(project: Project) -> None:
    async def scenario() -> None:
        async with clients(project, "alice", mode="auto") as (client,):
            print(f"negotiated protocol version: {client.protocol_version}")
            assert client.protocol_version > LEGACY_VERSION  # versions are dates: the newer one was chosen
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == set(TOOLS)
            added = await client.call_tool("add", {"a": 5, "b": 3})
            assert not added.is_error and _text(added) == "The sum of 5 + 3 = 8"
            failed = await refused(client, "spec_mcp.plan", {"feature_id": "001-never-specified"})
            assert failed["code"] == "E_PRECONDITION" and failed["hint"]

    started = time.monotonic()
    asyncio.run(scenario())
    print(f"auto-mode session took {time.monotonic() - started:.1f} s")
