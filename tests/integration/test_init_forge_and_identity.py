"""`code3 init` puts the project's code on the embedded forge and gives every MCP client the identity it funded.

A newcomer's trial found the forge repository holding a README only (a worker's fork had no sources), a hand
push failing doctor on git's read-only objects, and a server started by an MCP client (HOME and PATH, not the
shell's CODE3_HOME or XDG_CONFIG_HOME) silently creating and signing as a second, unfunded `default`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from code3.settings import Settings

GIT = ["git", "-c", "user.name=u", "-c", "user.email=u@example.com", "-c", "commit.gpgsign=false"]
CLIENT_ENV = ("HOME", "PATH", "USER", "SHELL", "TERM", "LOGNAME")  # what the TypeScript SDK passes a server


def commit(project: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    subprocess.run([*GIT, "add", "-A"], cwd=project, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", message], cwd=project, check=True)
    return head(project)


def head(where: Path, ref: str = "HEAD") -> str:
    return subprocess.run(["git", "rev-parse", ref], cwd=where, capture_output=True, text=True,
                          check=True).stdout.strip()


def project_with_code(tmp_path: Path) -> Path:
    project = tmp_path / "todo-app"
    project.mkdir()
    subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=project, check=True)
    subprocess.run(["git", "remote", "add", "origin", "git@github.com:acme/todo-app.git"], cwd=project, check=True)
    commit(project, {"src/todo/__init__.py": "", "src/todo/store.py": "def load():\n    return []\n"}, "store")
    commit(project, {"src/todo/cli.py": "from todo.store import load\n\nprint(load())\n"}, "cli")
    return project


def code3(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "code3", *args], cwd=project, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "CODE3_PROJECT": str(project)} if env is None else env)


def forge_head(project: Path, repo: str = "acme/todo-app", branch: str = "main") -> str | None:
    from code3.wiring import local_forge

    forge = local_forge(Settings(project=project), "reader")
    try:
        return forge.branch_sha(repo, branch)
    finally:
        forge.close()


def bare(project: Path, repo: str = "acme/todo-app") -> Path:
    return project / ".code3" / "forge" / "repos" / f"{repo}.git"


def test_init_puts_the_committed_history_on_the_forge_and_forge_push_sends_later_commits(tmp_path: Path) -> None:
    project = project_with_code(tmp_path)
    (project / "notes.txt").write_text("not committed\n")
    done = code3(project, "init")
    assert done.returncode == 0, done.stderr
    assert "2 commit(s) of your branch main" in done.stdout and "uncommitted changes are not pushed" in done.stdout
    assert forge_head(project) == head(project), "the forge's default branch is the project's main"

    clone = tmp_path / "fork-like"
    subprocess.run(["git", "clone", "-q", str(bare(project)), str(clone)], check=True)
    assert (clone / "src" / "todo" / "cli.py").read_text().startswith("from todo.store import load")
    assert not (clone / "notes.txt").exists(), "the working tree's uncommitted files are not pushed"

    later = commit(project, {"src/todo/add.py": "def add(items, item):\n    return [*items, item]\n"}, "add")
    pushed = code3(project, "forge", "push")
    assert pushed.returncode == 0, pushed.stderr
    assert json.loads(pushed.stdout) | {"before": None} == {
        "repo": "acme/todo-app", "branch": "main", "state": "pushed", "before": None, "after": later, "commits": 1}
    assert forge_head(project) == later
    again = code3(project, "init")  # a rerun changes nothing in place and has nothing new to push
    assert again.returncode == 0 and "nothing to push" in again.stdout, again.stdout + again.stderr


def test_divergence_is_refused_and_merged_work_comes_back_by_pull(tmp_path: Path) -> None:
    project = project_with_code(tmp_path)
    assert code3(project, "init").returncode == 0
    other = tmp_path / "maintainer"  # merged work lands on the forge's main
    subprocess.run(["git", "clone", "-q", str(bare(project)), str(other)], check=True)
    merged = commit(other, {"src/todo/done.py": "DONE = True\n"}, "merged PR")
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=other, check=True)

    ahead = code3(project, "forge", "push")
    assert ahead.returncode == 0 and json.loads(ahead.stdout)["state"] == "forge-ahead", ahead.stdout + ahead.stderr
    assert "code3 forge pull" in json.loads(ahead.stdout)["hint"]
    pulled = code3(project, "forge", "pull")
    assert pulled.returncode == 0 and json.loads(pulled.stdout)["state"] == "pulled", pulled.stderr
    assert head(project) == merged and (project / "src" / "todo" / "done.py").exists()

    commit(other, {"src/todo/done.py": "DONE = False\n"}, "forge side")
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=other, check=True)
    mine = commit(project, {"src/todo/mine.py": "X = 1\n"}, "my side")
    before = forge_head(project)
    for action in ("push", "pull"):
        refused = code3(project, "forge", action)
        assert refused.returncode == 1 and refused.stderr.startswith("code3: E_PRECONDITION: "), refused.stderr
        assert "diverged" in refused.stderr and "\n  hint: merge the forge's branch" in refused.stderr
    assert forge_head(project) == before and head(project) == mine, "a refusal changes nothing on either side"
    rerun = code3(project, "init")
    assert rerun.returncode == 1 and "diverged" in rerun.stderr, "init's push is fast-forward only too"


FEATURE = "specs/001-greeting-helper-utilities"


def test_pull_names_every_untracked_file_in_the_merges_way_and_its_hint_works(tmp_path: Path) -> None:
    """The journey's case: the sponsor's spec directory, never committed, and a merged PR carrying a worker's copies
    of it. git refuses the fast-forward; the refusal names each file whole (a count cap, not a text cap), says how
    many are identical to the merge's, and what works (committing them would make the branches diverge)."""
    project = project_with_code(tmp_path)
    assert code3(project, "init").returncode == 0
    files = {f"{FEATURE}/spec.md": "# spec\n", f"{FEATURE}/plan.md": "# plan, the worker's\n",
             **{f"{FEATURE}/contracts/contract-with-a-rather-long-name-{n:02}.md": f"c{n}\n" for n in range(24)}}
    other = tmp_path / "maintainer"  # the merged PR lands on the forge's main
    subprocess.run(["git", "clone", "-q", str(bare(project)), str(other)], check=True)
    merged = commit(other, files, "Merge the worker's PR")
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=other, check=True)
    for name, text in files.items():  # the sponsor's untracked copies: one differs
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("# plan, the sponsor's\n" if name.endswith("plan.md") else text)
    before = head(project)

    refused = code3(project, "forge", "pull")
    assert refused.returncode == 1 and refused.stderr.startswith("code3: E_PRECONDITION: "), refused.stderr
    message, hint = refused.stderr.split("\n  hint: ", 1)
    assert "26 file(s) that are untracked in your working tree (25 of them identical to the merge's)" in message
    named = message.rsplit("git will not overwrite them (those that differ first): ", 1)[1].strip()
    shown, more = named.rsplit(" and ", 1)
    assert more == "6 more" and all(name in files for name in shown.split(", ")), named  # each path whole
    assert len(shown.split(", ")) == 20 and shown.split(", ")[0] == f"{FEATURE}/plan.md", "what differs first"
    assert "move them aside or delete them" in hint and "commit or stash" not in hint, hint
    assert head(project) == before and (project / f"{FEATURE}/plan.md").read_text() == "# plan, the sponsor's\n"

    (project / f"{FEATURE}/plan.md").write_text(files[f"{FEATURE}/plan.md"])  # now every copy is the merge's
    identical = code3(project, "forge", "pull")
    assert identical.returncode == 1 and "(all of them identical to the merge's)" in identical.stderr
    assert "delete them (nothing is lost)" in identical.stderr, identical.stderr

    aside = tmp_path / "aside"
    (project / FEATURE).rename(aside)  # what the hint says: move them aside, then pull again
    pulled = code3(project, "forge", "pull")
    assert pulled.returncode == 0 and json.loads(pulled.stdout)["state"] == "pulled", pulled.stderr
    assert head(project) == merged and (project / f"{FEATURE}/spec.md").read_text() == "# spec\n"


def test_a_local_change_to_a_tracked_file_the_merge_changes_still_says_commit_or_stash(tmp_path: Path) -> None:
    project = project_with_code(tmp_path)
    assert code3(project, "init").returncode == 0
    other = tmp_path / "maintainer"
    subprocess.run(["git", "clone", "-q", str(bare(project)), str(other)], check=True)
    commit(other, {"src/todo/store.py": "def load():\n    return ['merged']\n"}, "merged PR")
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=other, check=True)
    (project / "src/todo/store.py").write_text("def load():\n    return ['mine']\n")
    refused = code3(project, "forge", "pull")
    assert refused.returncode == 1 and "commit or stash your changes" in refused.stderr, refused.stderr


def test_publish_warns_when_the_spec_directory_is_not_on_the_forges_default_branch(tmp_path: Path) -> None:
    """Workers fork the forge's default branch: a spec directory missing there comes back, as a worker's copies, over
    the sponsor's untracked one. The warning says what to do; done, it is gone."""
    from code3.wiring import local_forge
    from mcp_tools.lifecycle.publish import unpushed_spec_warning

    project = project_with_code(tmp_path)
    assert code3(project, "init").returncode == 0
    commit(project, {"README.md": "todo\n"}, "readme")  # the project ahead of the forge: only a push sends it
    (project / FEATURE).mkdir(parents=True)
    spec, text = f"{FEATURE}/spec.md", "# spec\n\nUsers can export their list.\n"
    (project / spec).write_text(text)
    forge = local_forge(Settings(project=project), "reader")
    services: Any = type("Services", (), {"forge": forge})()
    try:
        [said] = unpushed_spec_warning(services, "acme/todo-app", spec, text)
        assert said.startswith(f"{spec} as published is not in acme/todo-app's main on the embedded forge"), said
        assert said.endswith(f"commit {FEATURE}/ and run `code3 forge push` so workers' forks start from it"), said
        subprocess.run([*GIT, "add", FEATURE], cwd=project, check=True)
        subprocess.run([*GIT, "commit", "-q", "-m", "Specify"], cwd=project, check=True)
        assert unpushed_spec_warning(services, "acme/todo-app", spec, text), "committed is not pushed"
        assert code3(project, "forge", "push").returncode == 0
        assert unpushed_spec_warning(services, "acme/todo-app", spec, text) == []
        assert unpushed_spec_warning(services, "acme/todo-app", spec, text + "More.\n"), "another version there"
        assert unpushed_spec_warning(services, "acme/todo-app", "spec.md", text) == [], "no directory to speak of"
    finally:
        forge.close()


def test_a_project_without_commits_gets_a_readme_that_its_first_push_replaces(tmp_path: Path) -> None:
    project = tmp_path / "empty"
    project.mkdir()
    subprocess.run([*GIT, "init", "-q", "-b", "trunk"], cwd=project, check=True)
    done = code3(project, "init")
    assert done.returncode == 0, done.stderr
    assert "no commit yet" in done.stdout and "code3 forge push" in done.stdout
    assert forge_head(project, "default/empty", "trunk") is not None, "a README on the project's own branch"
    first = commit(project, {"app.py": "print('hi')\n"}, "first")
    pushed = code3(project, "forge", "push")
    assert pushed.returncode == 0 and json.loads(pushed.stdout)["state"] == "pushed", pushed.stderr
    assert forge_head(project, "default/empty", "trunk") == first


def _check(project: Path, name: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = code3(project, "doctor", "--json", env=env)
    return next(c for c in json.loads(done.stdout) if c["name"] == name)


def test_doctor_accepts_gits_read_only_objects_and_still_flags_a_loose_key(tmp_path: Path) -> None:
    project = project_with_code(tmp_path)
    assert code3(project, "init").returncode == 0
    commit(project, {"src/todo/more.py": "MORE = 1\n"}, "more")
    assert code3(project, "forge", "push").returncode == 0
    assert _check(project, "file modes")["ok"] is True, "after init and forge push"

    commit(project, {"src/todo/hand.py": "HAND = 1\n"}, "pushed by hand")
    subprocess.run(["git", "push", "-q", str(bare(project)), "main"], cwd=project, check=True, umask=0o022)
    objects = [p for p in (bare(project) / "objects").rglob("*") if p.is_file() and p.stat().st_mode & 0o044]
    assert objects, "git wrote world-readable objects (0444), as a push with umask 022 does"
    (bare(project) / "refs" / "heads" / "main").chmod(0o600)  # the one non-object file git rewrote
    assert _check(project, "file modes")["ok"] is True, "git's own read-only objects are git's normal"

    key = Settings(project=project).keystore_dir / "default.key"
    key.chmod(0o644)
    flagged = _check(project, "file modes")
    assert flagged["ok"] is False and str(key) in flagged["detail"], flagged
    key.chmod(0o600)
    (project / ".code3" / "events.sqlite").chmod(0o644)
    flagged = _check(project, "file modes")
    assert flagged["ok"] is False and "events.sqlite" in flagged["detail"], flagged


def test_a_code3_home_inside_a_work_tree_is_refused_by_init_and_by_the_server(tmp_path: Path) -> None:
    project = project_with_code(tmp_path)
    inside = project / "keys-home"
    env = {**os.environ, "CODE3_PROJECT": str(project), "CODE3_HOME": str(inside)}
    refused = code3(project, "init", env=env)
    assert refused.returncode == 1 and refused.stderr.startswith("code3: E_PRECONDITION: CODE3_HOME "), refused.stderr
    assert "inside the git work tree" in refused.stderr and "\n  hint: set CODE3_HOME" in refused.stderr
    assert not inside.exists() and not (project / ".code3").exists() and not (project / ".mcp.json").exists()

    other = tmp_path / "other-repo"
    subprocess.run([*GIT, "init", "-q", str(other)], check=True)
    server = subprocess.run([sys.executable, "-m", "code3", "mcp"], cwd=tmp_path, capture_output=True, text=True,
                            input="", timeout=60, env={**env, "CODE3_HOME": str(other / "deep" / "home")})
    assert server.returncode == 1 and server.stdout == "", "refused before any JSON-RPC line"
    assert server.stderr.startswith("code3: E_PRECONDITION: CODE3_HOME ") and str(other) in server.stderr


def _serve(entry: dict[str, Any], env: dict[str, str], calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The entry's command and arguments with exactly `env`, as an MCP client starts it: raw JSON-RPC lines."""
    proc = subprocess.Popen([entry["command"], *entry["args"]], env=env, cwd="/", stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    answers = []
    try:
        messages = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            *({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": n, "arguments": a}}
              for i, (n, a) in enumerate(calls))]
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            while "id" in message:
                answer = json.loads(proc.stdout.readline())
                if answer.get("id") == message["id"]:
                    answers.append(answer)
                    break
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()  # type: ignore[union-attr]
    return answers[1:]


def _publish(project: Path, entry: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    specified, published = _serve(entry, env, [
        ("spec_mcp.specify", {"feature_description": "CSV export"}),
        ("spec_mcp.publish_issue_with_metadata", {
            "repo": "acme/todo-app", "feature_id": "001-csv-export", "spec_path": "specs/001-csv-export/spec.md",
            "amount": "1", "asset": "USDT", "network": "testnet"})])
    assert specified["result"].get("isError") is not True, specified
    return dict(published["result"])


@pytest.fixture
def shell_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's HOME; CODE3_HOME set in their shell only (e.g. by XDG_CONFIG_HOME): not ~/.config/code3."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "CODE3_KEYSTORE", "CODE3_IDENTITY"):
        monkeypatch.delenv(name, raising=False)
    return home


def test_the_entry_carries_code3_home_and_a_client_started_server_signs_as_the_funded_identity(
        tmp_path: Path, shell_home: Path, code3_home: Path) -> None:
    project = project_with_code(tmp_path)
    done = code3(project, "init")
    assert done.returncode == 0, done.stderr
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["code3"]
    assert entry["env"] == {"CODE3_PROJECT": str(project), "CODE3_HOME": str(code3_home)}
    assert entry["args"][-3:] == ["mcp", "--profile", "sponsor"], "the default role is the sponsor"
    funded = json.loads((project / ".code3" / "init.json").read_text())["identities"]["default"]["address"]

    client = {k: os.environ[k] for k in CLIENT_ENV if k in os.environ} | {"HOME": str(shell_home)}
    answer = _publish(project, entry, {**client, **entry["env"]})
    assert answer.get("isError") is not True, answer
    from code3.wiring import ledger

    chain = ledger(Settings(project=project))
    try:
        assert [b.sponsor for b in chain.list_bounties()] == [funded], "signed as the identity init funded"
    finally:
        chain.close()


def test_a_server_that_would_create_a_second_default_answers_an_error_instead(
        tmp_path: Path, shell_home: Path, code3_home: Path) -> None:
    project = project_with_code(tmp_path)
    assert code3(project, "init").returncode == 0
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["code3"]
    client = {k: os.environ[k] for k in CLIENT_ENV if k in os.environ} | {"HOME": str(shell_home)}
    without = {k: v for k, v in entry["env"].items() if k != "CODE3_HOME"}  # an entry written by hand, say
    answer = _publish(project, entry, {**client, **without})
    assert answer["isError"] is True and "structuredContent" not in answer, answer
    error = json.loads(answer["content"][0]["text"])
    default_home = shell_home / ".config" / "code3"
    assert error["code"] == "E_NOT_FOUND" and f"CODE3_HOME {default_home}" in error["message"], error
    assert f"CODE3_HOME={code3_home}" in error["hint"] and "code3 init" in error["hint"], error
    assert not (default_home / "keys").exists(), "no second, unfunded default was created"


def test_the_default_home_is_not_written_and_a_worker_gets_its_own_entry(tmp_path: Path, shell_home: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODE3_HOME")  # the default, ~/.config/code3 under the (test's) HOME
    project = project_with_code(tmp_path)
    assert code3(project, "init").returncode == 0
    worker = code3(project, "init", "--role", "worker", "--identity", "bob")
    assert worker.returncode == 0, worker.stderr
    assert "claude mcp add code3-worker -e CODE3_PROJECT=" in worker.stdout
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["code3"]["env"] == {"CODE3_PROJECT": str(project)}, "the default CODE3_HOME is not written"
    assert servers["code3-worker"]["args"][-3:] == ["mcp", "--profile", "server"]
    assert servers["code3-worker"]["env"] == {"CODE3_PROJECT": str(project), "CODE3_IDENTITY": "bob"}
    keys = sorted(p.name for p in (shell_home / ".config" / "code3" / "keys").iterdir())
    assert keys == ["bob.key", "default.key"]
    for role, args in (("knowledge", ["--profile", "knowledge"]), ("all", [])):
        assert code3(project, "init", "--role", role).returncode == 0
        entry = json.loads((project / ".mcp.json").read_text())["mcpServers"][f"code3-{role}"]
        assert entry["args"][entry["args"].index("mcp") + 1:] == args, (role, entry)
    bad = code3(project, "init", "--role", "judge")
    assert bad.returncode == 1 and "E_VALIDATION" in bad.stderr
