"""A newcomer's hour (issue 17): `code3 init` leaves tracked files alone (its ignore rule goes into
`.git/info/exclude`, so checking out another tag still works; a tracked `.mcp.json` is not rewritten), and
no command that does not sign creates a key (read-only tools of every family, `account fund` of a missing
account), so no fund-holding `default` appears as a side effect."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from code3.settings import Settings
from tests.stdio_calls import call_tools

GIT = ["git", "-c", "user.name=u", "-c", "user.email=u@example.com", "-c", "commit.gpgsign=false"]


def code3(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "code3", *args], cwd=project, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "CODE3_PROJECT": str(project)})


def test_init_changes_no_tracked_file_and_another_tag_can_be_checked_out(tmp_path: Path) -> None:
    project = tmp_path / "app"
    project.mkdir()
    subprocess.run([*GIT, "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("*.pyc\n")
    (project / ".mcp.json").write_text('{"mcpServers": {}}\n')
    subprocess.run([*GIT, "add", "-A"], cwd=project, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "v1"], cwd=project, check=True)
    subprocess.run([*GIT, "tag", "v1"], cwd=project, check=True)
    (project / ".gitignore").write_text("*.pyc\nbuild/\n")
    subprocess.run([*GIT, "commit", "-q", "-am", "v2"], cwd=project, check=True)

    done = code3(project, "init")
    assert done.returncode == 0, done.stderr
    assert "is tracked by git: left alone" in done.stdout
    assert subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True,
                          check=True).stdout == "", "init changed no tracked file and left nothing untracked"
    assert "/.code3/" in (project / ".git" / "info" / "exclude").read_text().splitlines()
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {}}
    switched = subprocess.run(["git", "checkout", "-q", "v1"], cwd=project, capture_output=True, text=True)
    assert switched.returncode == 0, switched.stderr
    assert code3(project, "init").returncode == 0, "init again, on the other tag, changes nothing in place"
    assert subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True,
                          check=True).stdout == ""


def _mcp(project: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return call_tools(project, {**os.environ, "CODE3_PROJECT": str(project)}, calls)


def test_read_only_tools_and_the_faucet_create_no_key(tmp_path: Path) -> None:
    project = tmp_path / "app"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def main():\n    return 1\n")
    keys = Settings(project=project).keystore_dir
    answers = _mcp(project, [("prepare", {"targetPath": "src/app.py"}), ("query_files", {}),
                             ("ai-loom.list_contexts", {}), ("spec_mcp.specify", {"feature_description": "CSV export"}),
                             ("add", {"a": 1, "b": 2})])
    for answer in answers:
        assert "result" in answer and answer["result"].get("isError") is not True, answer
    assert not keys.exists() or list(keys.iterdir()) == [], "a read-only tool created a key"

    fund = code3(project, "account", "fund", "alice", "--amount", "5")
    assert fund.returncode != 0 and "E_NOT_FOUND" in fund.stderr and "code3 account new alice" in fund.stderr
    assert not keys.exists() or list(keys.iterdir()) == [], "the faucet created a key"
    address = "0x" + "ab" * 32
    funded = code3(project, "account", "fund", address, "--amount", "5")
    assert funded.returncode == 0, funded.stderr
    assert json.loads(funded.stdout)["address"] == address and json.loads(funded.stdout)["balance"] == 5
    assert not keys.exists() or list(keys.iterdir()) == [], "funding an address created no key"
