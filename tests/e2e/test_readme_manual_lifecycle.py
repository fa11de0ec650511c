"""docs/lifecycle.md's "Running the lifecycle by hand", run literally: accounts, faucet, repository, `code3 serve` and
`code3 worker` in the background, two MCP clients, the merge, and the worker paying the winner.

The shell block is read from docs/lifecycle.md (between `<!-- manual-lifecycle -->` markers), so the page
cannot drift from what works. It runs as one bash script with `code3` on the PATH; two substitutions only: serve
listens on a free port (`--port 0`, the page's default 8765 may be taken on a shared machine), and the
comment line where the user drives the tools becomes a wait while this test does it with the MCP SDK's
client over stdio (`code3 mcp --profile client-remote` as alice, `--profile server` as bob).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from adapters.ledger_tables import ESCROW
from adapters.local_ledger import LocalLedger
from domain.bounties.contract import Status

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
DRIVE = "# drive the tools from two MCP clients"
AMOUNT = 1_000_000


def manual_block() -> list[str]:
    page = (ROOT / "docs" / "lifecycle.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- manual-lifecycle -->\s*```sh\n(.*?)```\s*<!-- /manual-lifecycle -->", page, re.DOTALL)
    assert block, "docs/lifecycle.md has no manual lifecycle block between <!-- manual-lifecycle --> markers"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_block_drives_the_tools_where_its_comment_says_and_ends_with_the_payout() -> None:
    lines = manual_block()
    assert sum(line.startswith(DRIVE) for line in lines) == 1, lines
    assert any("code3 serve &" in line for line in lines) and any("code3 worker &" in line for line in lines)
    assert any(line.startswith("code3 forge merge ") for line in lines)


def _wait_for(what: str, check: Any, timeout: float, log: Path) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}:\n{log.read_text(errors='replace')}")


def test_the_readme_manual_lifecycle_runs_through_the_merge_and_the_payout(tmp_path: Path) -> None:
    ready, go = tmp_path / "ready", tmp_path / "go"
    lines = []
    for line in manual_block():
        if line.startswith(DRIVE):
            lines += [f"touch {ready}", f"while [ ! -e {go} ]; do sleep 0.1; done"]
        else:
            lines.append(line.replace("code3 serve &", "code3 serve --port 0 &"))
    merge_url = next(line.split()[3] for line in lines if line.startswith("code3 forge merge "))
    script = "set -e\n" + "\n".join(lines) + f"\ntouch {tmp_path / 'done'}\nwait\n"
    env = {**os.environ, "PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}", "HOME": str(tmp_path)}
    for name in ("CODE3_PROJECT", "CODE3_IDENTITY", "CODE3_RESOLVER", "CODE3_SERVE_TOKEN", "GITHUB_WEBHOOK_SECRET"):
        env.pop(name, None)
    log = tmp_path / "script.log"
    with log.open("w") as out:
        shell = subprocess.Popen(["bash", "-c", script], cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
    project = tmp_path / "demo-project"
    try:
        _wait_for("the setup lines", lambda: ready.exists() or shell.poll() is not None, 120, log)
        assert shell.poll() is None, f"the block failed before the clients:\n{log.read_text()}"
        _wait_for("serve's ready line", lambda: '"listening"' in log.read_text(), 60, log)
        pr_url, bounty_id = asyncio.run(_drive(project, env))
        assert pr_url == merge_url, f"docs/lifecycle.md merges {merge_url}, the PR is {pr_url}"
        go.touch()
        _wait_for("the merge and the advance", lambda: (tmp_path / "done").exists() or shell.poll() is not None,
                  120, log)
        assert shell.poll() is None, f"the block failed after the clients:\n{log.read_text()}"

        def paid() -> bool:
            ledger = LocalLedger(project / ".code3" / "ledger.sqlite")
            try:
                return ledger.get_bounty(bounty_id).status is Status.PAID
            finally:
                ledger.close()

        _wait_for("the worker's payout", paid, 90, log)
        ledger = LocalLedger(project / ".code3" / "ledger.sqlite")
        try:
            bob = ledger.get_bounty(bounty_id).winner
            assert bob is not None and ledger.balance(bob, "USDT") == AMOUNT and ledger.balance(ESCROW, "USDT") == 0
        finally:
            ledger.close()
    finally:
        if shell.poll() is None:
            os.killpg(shell.pid, signal.SIGTERM)
            try:
                shell.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(shell.pid, signal.SIGKILL)
                shell.wait()
    assert not (project / ".code3" / "keys").exists(), "no key in the project"
    dead = subprocess.run([str(ROOT / ".venv" / "bin" / "code3"), "webhooks", "list"], capture_output=True,
                          env={**env, "CODE3_PROJECT": str(project)}, text=True, timeout=60)
    assert dead.returncode == 0 and json.loads(dead.stdout) == [], f"a webhook was dead-lettered: {dead.stdout}"


async def _drive(project: Path, env: dict[str, str]) -> tuple[str, str]:
    def params(identity: str, profile: str) -> StdioServerParameters:
        return StdioServerParameters(command=str(ROOT / ".venv" / "bin" / "code3"), args=["mcp", "--profile", profile],
                                     env={**env, "CODE3_PROJECT": str(project), "CODE3_IDENTITY": identity,
                                          "CODE3_COOLING_PERIOD": "30"}, cwd=project)

    async def ok(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await client.call_tool(tool, args)
        assert not result.is_error, f"{tool}: {result.content}"
        return result.structured_content

    async with Client(params("alice", "client-remote")) as alice:
        spec = await ok(alice, "spec_mcp.specify", {"feature_description": "Users can export their to-do list as CSV"})
        fid = spec["feature_id"]
        published = await ok(alice, "spec_mcp.publish_issue_with_metadata", {
            "repo": "alice/todo-app", "feature_id": fid, "spec_path": spec["paths"]["spec"], "amount": str(AMOUNT),
            "asset": "USDT", "network": "testnet"})
    number, bounty_id = published["issue"]["number"], published["bounty"]["bounty_id"]
    assert number == 1
    async with Client(params("bob", "server")) as bob:
        await ok(bob, "server_mcp.accept_task", {"task_id": f"alice/todo-app#{number}"})
        prepared = await ok(bob, "server_mcp.fork_and_prepare", {"repo": "alice/todo-app", "issue_json": {
            "schema": "code3/v1", "feature_id": fid, "issue_number": number}})
        (Path(prepared["workdir"]) / "export.py").write_text("def export_csv(todos):\n    return ''\n")
        pr = await ok(bob, "server_mcp.open_pr", {"repo": "alice/todo-app", "branch": prepared["branch"],
                                                  "title": "feat: CSV export", "body": f"Implements {fid}"})
        await ok(bob, "server_mcp.submit_pr", {"bounty_id": bounty_id, "pr_url": pr["pr_url"]})
    return pr["pr_url"], bounty_id
