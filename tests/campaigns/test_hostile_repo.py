"""Hostile repository campaign: a repository commits every kind of planted Code3 state — a key, a serve
token, a webhook secret, a tracked ledger, `.code3` linked to a tracked directory, `.code3/keys` linked
likewise, `specs` linked out of the project — or leaves a FIFO where a state file should be. Each is opened
as a user would: `code3 init`, `code3 worker --once`, `code3 serve` (and a request when it starts), and a
tool of every family over `code3 mcp`.

Nothing planted is adopted (the planted key's address appears nowhere Code3 writes), nothing secret is
written where git would see it (`git status --porcelain --ignored --untracked-files=all` lists no new file
holding a secret or named like one), and every refusal is a coded error that says what to do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapters.keystore import Keystore
from code3.settings import Settings
from tests.stdio_calls import call_tools

pytestmark = pytest.mark.e2e

GIT = ["git", "-c", "user.name=mallory", "-c", "user.email=m@example.com", "-c", "commit.gpgsign=false"]
TOOLS = [("spec_mcp.specify", {"feature_description": "Users can export their to-do list as CSV"}),  # code3
         ("server_mcp.accept_best_task", {}),  # code3, signing
         ("prepare", {"targetPath": "app.py"}),  # reverse-spec
         ("query_files", {}),  # CodeNexus
         ("ai-loom.list_contexts", {})]  # ai-loom
WAYS_OUT = ("rm ", "git rm", "chmod", "code3 account migrate", "remove the link")
SECRET_NAMES = ("serve_token", "webhook_secret", "hook_secrets", "forge_hooks", "annotations.aead.key")


def plant_key(repo: Path, tmp: Path) -> dict[str, str]:
    attacker = Keystore(tmp / "mallory-keys").new("default")
    (repo / ".code3" / "keys").mkdir(parents=True)
    (repo / ".code3" / "keys" / "default.key").write_bytes((tmp / "mallory-keys" / "default.key").read_bytes())
    return {"address": attacker.address, "private": attacker.private_key_hex}


def plant_file(name: str, text: str) -> Callable[[Path, Path], dict[str, str]]:
    def plant(repo: Path, tmp: Path) -> dict[str, str]:
        (repo / ".code3").mkdir(exist_ok=True)
        (repo / ".code3" / name).write_text(text)
        return {"planted": text}
    return plant


def plant_state_link(repo: Path, tmp: Path) -> dict[str, str]:
    (repo / "published").mkdir()
    (repo / "published" / "README.md").write_text("published with every push\n")
    (repo / ".code3").symlink_to("published")
    return {}


def plant_keys_link(repo: Path, tmp: Path) -> dict[str, str]:
    (repo / "published").mkdir()
    (repo / "published" / "README.md").write_text("published with every push\n")
    (repo / ".code3").mkdir()
    (repo / ".code3" / "keys").symlink_to("../published")
    return {}


def plant_specs_link(repo: Path, tmp: Path) -> dict[str, str]:
    outside = tmp / "outside"
    outside.mkdir()
    (outside / "victim.md").write_text("not the project's\n")
    (repo / "specs").symlink_to(outside)
    return {}


def plant_fifo(repo: Path, tmp: Path) -> dict[str, str]:
    """Not committed (git keeps no FIFO): left in the work tree where the event store should be."""
    return {}


PLANTS: dict[str, Callable[[Path, Path], dict[str, str]]] = {
    "key": plant_key,
    "serve_token": plant_file("serve_token", "planted-serve-token-0123456789abcdef"),
    "webhook_secret": plant_file("webhook_secret", "planted-webhook-secret-0123456789"),
    "tracked_ledger": plant_file("ledger.sqlite", "a ledger the author prepared"),
    "state_link": plant_state_link,
    "keys_link": plant_keys_link,
    "specs_link": plant_specs_link,
    "fifo": plant_fifo,
}


def hostile_repo(kind: str, tmp: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp / "hostile"
    repo.mkdir()
    subprocess.run([*GIT, "init", "-q"], cwd=repo, check=True)
    (repo / "app.py").write_text("def main():\n    return 1\n")
    planted = PLANTS[kind](repo, tmp)
    subprocess.run([*GIT, "add", "-A", "-f"], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "a helpful repository"], cwd=repo, check=True)
    if kind == "fifo":
        (repo / ".code3").mkdir(mode=0o700)
        os.mkfifo(repo / ".code3" / "events.sqlite", 0o600)
    return repo, planted


def code3(repo: Path, env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "code3", *args], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=timeout)


def refused_with_a_way_out(text: str) -> bool:
    return "refusing Code3 state" in text and any(way in text for way in WAYS_OUT)


def mcp_calls(repo: Path, env: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    return list(zip([name for name, _ in TOOLS], call_tools(repo, env, TOOLS), strict=True))


def serve_once(repo: Path, env: dict[str, str]) -> tuple[int | None, str]:
    """Start `code3 serve`; when it starts, a request with its token. (exit status or None, what it said)."""
    proc = subprocess.Popen([sys.executable, "-m", "code3", "serve", "--port", "0"], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline()
        if not line:
            return proc.wait(timeout=30), proc.stderr.read() if proc.stderr else ""
        ready = json.loads(line)
        token = Path(ready["token_file"]).read_text().strip()
        answer = httpx.post(ready["mcp"], headers={"Authorization": f"Bearer {token}",
                                                   "Accept": "application/json, text/event-stream"},
                            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                                "protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "hostile", "version": "0"}}}, timeout=30)
        assert answer.status_code == 200, answer.text
        return None, line
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)
        proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()] if root.exists() else []


def new_entries(repo: Path, before: set[str]) -> list[str]:
    listed = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    return [line[3:] for line in listed if line[3:] not in before]


@pytest.mark.parametrize("kind", list(PLANTS))
def test_a_hostile_repository_plants_nothing_and_learns_nothing(kind: str, tmp_path: Path) -> None:
    repo, planted = hostile_repo(kind, tmp_path)
    home = tmp_path / "code3-home"
    env = {**os.environ, "CODE3_HOME": str(home), "HOME": str(tmp_path), "CODE3_PROJECT": str(repo)}
    for name in ("CODE3_IDENTITY", "CODE3_KEYSTORE", "CODE3_SERVE_TOKEN", "GITHUB_WEBHOOK_SECRET", "CODE3_RESOLVER"):
        env.pop(name, None)
    before = {line[3:] for line in subprocess.run(["git", "status", "--porcelain", "--ignored",
                                                   "--untracked-files=all"], cwd=repo, capture_output=True,
                                                  text=True, check=True).stdout.splitlines()}
    outside = sorted(p.read_text() for p in files_under(tmp_path / "outside"))
    refused = kind != "specs_link"  # a link out of specs/ is the resolver's to refuse, tool by tool

    init = code3(repo, env, "init")
    with ThreadPoolExecutor(3) as pool:  # then the three long-lived commands, side by side as a user runs them
        running = pool.submit(code3, repo, env, "worker", "--once"), pool.submit(serve_once, repo, env), \
            pool.submit(mcp_calls, repo, env)
    worker, (served, said), answers = (job.result() for job in running)

    if refused:
        for what, proc in (("init", init), ("worker --once", worker)):
            assert proc.returncode != 0 and proc.stderr.startswith("code3: E_PRECONDITION: "), (what, proc.stderr)
            assert refused_with_a_way_out(proc.stderr) and "\n  hint: " in proc.stderr, (what, proc.stderr)
        assert served not in (None, 0) and refused_with_a_way_out(said), said
        for name, answer in answers:
            text = json.dumps(answer, ensure_ascii=False)
            if name == "query_files":  # CodeNexus refuses in JSON-RPC errors with seed 002's data
                assert set(answer["error"]["data"]) == {"type", "details", "timestamp"}, (name, text)
            else:
                assert answer["result"]["isError"] is True and "structuredContent" not in answer["result"], text
            assert "refusing Code3 state" in text, (name, text)
            if name == "ai-loom.list_contexts":  # ai-loom's own codes (seed 004), not E_PRECONDITION
                assert json.loads(answer["result"]["content"][0]["text"])["code"] == "VALIDATION_ERROR", text
            if name != "prepare":  # seed 000's "prepare 失败: <detail>" carries the finding, not the hint
                assert refused_with_a_way_out(text), (name, text)
        assert not (home / "keys").exists() or not any((home / "keys").iterdir()), "a refused project got a key"
        assert not files_under(home / "projects"), "a refused project got secrets"
    else:
        assert init.returncode == 0, init.stderr
        assert served is None, said
        assert sorted(p.read_text() for p in files_under(tmp_path / "outside")) == outside, "wrote out of the project"

    secrets = [p.read_bytes() for p in files_under(home)]  # what Code3 made: keys, tokens, secrets
    for key in files_under(home / "keys"):
        secrets.append(json.loads(key.read_text())["private_key"].encode())
    for entry in new_entries(repo, before):
        path = repo / entry
        assert not any(part in SECRET_NAMES or part.endswith(".key") for part in Path(entry).parts), entry
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            assert not any(secret in data for secret in secrets if len(secret) >= 16), f"a secret in {entry}"
    if "address" in planted:  # the planted key: never loaded, never recorded
        for path in [*files_under(home), *files_under(repo / ".code3"), *files_under(repo / "specs")]:
            if path != repo / ".code3" / "keys" / "default.key":
                data = path.read_bytes()
                assert planted["address"].encode() not in data and planted["private"].encode() not in data, path
        for proc in (init, worker):
            assert planted["address"] not in proc.stdout + proc.stderr
    for value in planted.values():
        assert all(value not in json.dumps(answer) for _, answer in answers), "a planted value reached an answer"
        assert value not in init.stdout + init.stderr + worker.stdout + worker.stderr + said


def test_the_worker_takes_the_flags_the_campaign_uses() -> None:
    helped = subprocess.run([sys.executable, "-m", "code3", "worker", "--help"], capture_output=True, text=True,
                            timeout=60)
    assert helped.returncode == 0 and "--once" in helped.stdout and "--interval" in helped.stdout


def test_settings_keep_keys_and_secrets_out_of_the_project(tmp_path: Path) -> None:
    settings = Settings(project=tmp_path / "p", home=tmp_path / "h")
    for where in (settings.keystore_dir, settings.secrets_dir):
        assert where.is_relative_to(tmp_path / "h") and not where.is_relative_to(settings.project)
