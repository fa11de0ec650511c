"""The README's quick start, run literally: from a git repository to an MCP client publishing a bounty.

The shell steps are read from the README (between `<!-- quickstart -->` markers), so the README cannot
drift from what works. Only its two placeholder paths are substituted (this checkout, a fresh git
repository); `claude` is a stand-in on PATH that records its arguments (Claude Code is not installed
here), and `make … install` runs only when it would not reinstall (that needs PyPI). Then the server
entry `code3 init` wrote into `.mcp.json` is started with the MCP SDK client, which publishes the seed's
example bounty.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from domain.bounties.metadata import IssueMetadata

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CODE3_PLACEHOLDER = "/path/to/code3"
PROJECT_PLACEHOLDER = "/path/to/your-project"
CLAUDE_STUB = """#!/bin/sh
printf '%s\\n' "$@" > "$CLAUDE_ARGS"
"""


def quickstart_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- quickstart -->\s*```sh\n(.*?)```\s*<!-- /quickstart -->", readme, re.DOTALL)
    assert block, "the README has no quick start block between <!-- quickstart --> markers"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_the_quick_start_takes_at_most_three_commands() -> None:
    commands = quickstart_commands()
    assert 1 <= len(commands) <= 3, commands
    assert any("code3 init" in c for c in commands) and any(c.startswith("claude mcp add") for c in commands)


def _make_would_reinstall() -> bool:
    return subprocess.run(["make", "-q", "-C", str(ROOT), "install"], capture_output=True).returncode != 0


def test_the_readme_quick_start_publishes_the_seeds_bounty_from_a_fresh_git_repository(tmp_path: Path) -> None:
    project = tmp_path / "todo-app"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "remote", "add", "origin", "git@github.com:acme/todo-app.git"], cwd=project, check=True)
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "claude").write_text(CLAUDE_STUB)
    (stubs / "claude").chmod(0o755)
    env = {"PATH": f"{stubs}:{os.environ['PATH']}", "HOME": str(tmp_path), "CLAUDE_ARGS": str(tmp_path / "claude-args")}

    lines = []
    for command in quickstart_commands():
        if command.startswith("make ") and _make_would_reinstall():
            continue  # the virtual environment is older than pyproject.toml: reinstalling needs PyPI
        lines.append(command.replace(CODE3_PLACEHOLDER, str(ROOT)).replace(PROJECT_PLACEHOLDER, str(project)))
    script = "set -e\n" + "\n".join(lines) + "\n"
    ran = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, f"quick start failed:\n{script}\n{ran.stdout}\n{ran.stderr}"

    printed = re.search(r"^  (claude mcp add .*)$", ran.stdout, re.MULTILINE)
    assert printed, ran.stdout
    recorded = (tmp_path / "claude-args").read_text().splitlines()
    assert ["claude", *recorded] == shlex.split(printed.group(1)), "the README's line differs from what init prints"
    config = json.loads((project / ".mcp.json").read_text())
    server = config["mcpServers"]["code3"]
    assert server["env"]["CODE3_PROJECT"] == str(project)
    assert "/.code3/" in (project / ".git" / "info" / "exclude").read_text().splitlines(), "state is never committed"
    assert not (project / ".gitignore").exists(), "init leaves the tracked files alone"
    keys = tmp_path / ".config" / "code3" / "keys"  # CODE3_HOME's default under HOME: outside the work tree
    assert [p.name for p in keys.iterdir()] == ["default.key"] and not (project / ".code3" / "keys").exists()
    assert "acme/todo-app" in ran.stdout

    published = asyncio.run(_publish_through(server, project, home=tmp_path))
    assert published["success"] is True and published["issue"]["number"] == 1
    assert published["issue"]["url"].endswith("/acme/todo-app/issues/1")


async def _publish_through(server: dict[str, Any], project: Path, home: Path) -> dict[str, Any]:
    params = StdioServerParameters(command=server["command"], args=server["args"],
                                   env={**server["env"], "PATH": os.environ["PATH"], "HOME": str(home)}, cwd=project)
    async with Client(params) as client:
        spec = await client.call_tool("spec_mcp.specify", {"feature_description": "Web AI agent project management"})
        assert not spec.is_error, spec.content
        fid = spec.structured_content["feature_id"]
        assert fid == "001-web-ai-agent"
        result = await client.call_tool("spec_mcp.publish_issue_with_metadata", {
            "repo": "acme/todo-app", "feature_id": fid, "spec_path": f"specs/{fid}/spec.md", "amount": "5000000",
            "asset": "USDT", "network": "testnet", "labels": ["code3", "open"]})  # the README's 5 USDT
        assert not result.is_error, result.content
        answer = result.structured_content
        assert answer["bounty"]["amount_display"] == "5 USDT"
        assert not [w for w in answer.get("warnings", []) if "CODE3_AMOUNT_WARN_BELOW" in w], answer
        from code3.settings import Settings
        from code3.wiring import local_forge

        forge = local_forge(Settings(project=project), "reader")
        try:
            meta = IssueMetadata.from_body(forge.get_issue("acme/todo-app", answer["issue"]["number"]).body)
        finally:
            forge.close()
        assert meta is not None and meta.bounty.network == "testnet" and meta.bounty.chain == "code3-local"
        return answer


def _rpc(proc: subprocess.Popen[str], message: dict[str, Any]) -> dict[str, Any] | None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    if "id" not in message:
        return None
    while True:
        answer = json.loads(proc.stdout.readline())
        if answer.get("id") == message["id"]:
            return answer


def test_a_fresh_project_specifies_without_an_identity_and_the_first_signing_tool_creates_it(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "CODE3_PROJECT": str(tmp_path), "CODE3_HOME": os.environ["CODE3_HOME"]}
    from code3.settings import Settings
    from code3.wiring import local_forge

    forge = local_forge(Settings(project=tmp_path), "default")
    forge.create_repo("default/app")  # so that publish reaches the chain, the first step that signs
    forge.close()
    keys = Settings(project=tmp_path).keystore_dir
    assert not keys.exists()
    proc = subprocess.Popen([str(ROOT / ".venv" / "bin" / "python"), "-m", "code3", "mcp"], cwd=tmp_path, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"jsonrpc": "2.0", "method": "tools/call"}
        specified = _rpc(proc, {**call, "id": 2, "params": {"name": "spec_mcp.specify", "arguments": {
            "feature_description": "Web AI agent project management"}}})
        assert specified is not None and specified["result"].get("isError") is not True, specified
        assert specified["result"]["structuredContent"]["feature_id"] == "001-web-ai-agent"
        assert not keys.exists(), "specify signs nothing: no key is created"
        published = _rpc(proc, {**call, "id": 3, "params": {"name": "spec_mcp.publish_issue_with_metadata",
                                                            "arguments": {
            "repo": "default/app", "feature_id": "001-web-ai-agent", "spec_path": "specs/001-web-ai-agent/spec.md",
            "amount": "1", "asset": "USDT", "network": "testnet"}}})
        assert published is not None
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert [p.name for p in keys.iterdir()] == ["default.key"], "the first signing tool created the key"
    assert not (tmp_path / ".code3" / "keys").exists(), "never in the work tree"
    assert err.count("created the identity 'default'") == 1, err  # created on first use: stderr says so
