"""The quick start with the real Claude Code CLI: `code3 init` in a git repository, then Claude Code uses the
`.mcp.json` entries init wrote (`code3`, and `code3-knowledge` from `init --role knowledge`), and a scripted model
drives it through the tools.

Claude Code (npm `@anthropic-ai/claude-code`, pinned in tests/tools_needed.py; npm installs its native binary from
the platform package `@anthropic-ai/claude-code-linux-x64`, no Node needed to run it) talks to a scripted stand-in
of the Anthropic Messages API on loopback (tests/fakes/anthropic_stream.py: streamed answers, each model turn the
next scripted tool call, every request kept), through ANTHROPIC_BASE_URL and a dummy ANTHROPIC_API_KEY, in a
temporary HOME whose user settings approve the project's servers (`enabledMcpjsonServers`: `claude -p`
and `claude mcp list` otherwise leave a project server "pending approval"). Its nonessential traffic is off
(CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, DISABLE_TELEMETRY, DISABLE_AUTOUPDATER), MCP tools are listed to the
model rather than searched (ENABLE_TOOL_SEARCH=false) and `-p` waits for the servers before the first turn
(MCP_CONNECTION_NONBLOCKING=false, MCP_CONNECT_TIMEOUT_MS=30000: by default it goes on after 5 s).
Nothing leaves the machine.

What the model gets back is read from the tool_result blocks Claude Code sends in its next request: the seed 003
sum, the lifecycle (specify, publish 5 USDT), one error of each family with what it says, and a 200-file
`prepare` followed page by page through `continuation`. The server is given a key and the address of a second
stand-in (in its `.mcp.json` environment): it must never call a model itself.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_stream import API_KEY, Call, Say, Script, ScriptedModel, ToolResult
from tests.tools_needed import claude_code

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CODE3 = ROOT / ".venv" / "bin" / "code3"
REPO = "acme/widgets"
ROLES = {"sponsor": "code3", "knowledge": "code3-knowledge"}  # `code3 init --role ROLE` -> its .mcp.json entry
FILES = 200
MAX_PAGES = 12
SAVED_TO_FILE = re.compile(r"saved to|exceeds maximum allowed tokens|too large|truncated", re.IGNORECASE)


def generate_tree(project: Path) -> list[str]:
    """FILES small Python modules in 10 packages: a tree whose `prepare` answer takes several pages."""
    paths = []
    for i in range(FILES):
        path = project / "src" / f"pkg{i // 20:02d}" / f"mod{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f'"""Module {i} of the widgets tree."""\n\nfrom __future__ import annotations\n\n\n'
            f'class Widget{i}:\n    """A widget numbered {i}."""\n\n'
            f"    def __init__(self, size: int = {i}) -> None:\n        self.size = size\n\n"
            f'    def grow(self, by: int) -> int:\n        """Grow widget {i} by `by`."""\n'
            f"        self.size += by\n        return self.size\n\n\n"
            f'def make_widget_{i}(size: int) -> Widget{i}:\n    """Make widget {i}."""\n'
            f"    return Widget{i}(size)\n\n\n"
            f"def describe_widget_{i}(widget: Widget{i}) -> str:\n    return f'widget {i} of size {{widget.size}}'\n",
            encoding="utf-8")
        paths.append(path.relative_to(project).as_posix())
    return sorted(paths)


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


class Session:
    """What the scripted model saw: each tool's result by a label, and the prepare pages."""

    def __init__(self) -> None:
        self.got: dict[str, ToolResult] = {}
        self.pages: list[ToolResult] = []
        self.page_error: str | None = None

    def script(self) -> Script:
        self.got["add"] = yield Call("add", {"a": 5, "b": 3})
        specified = self.got["specify"] = yield Call("spec_mcp.specify", {
            "feature_description": "Web AI agent project management"})
        feature_id = _json(specified.text).get("feature_id", "001-web-ai-agent")
        self.got["publish"] = yield Call("spec_mcp.publish_issue_with_metadata", {
            "repo": REPO, "feature_id": feature_id, "spec_path": f"specs/{feature_id}/spec.md", "amount": "5000000",
            "asset": "USDT", "network": "testnet", "labels": ["code3", "open"]})
        self.got["lifecycle error"] = yield Call("spec_mcp.plan", {"feature_id": "999-missing"})
        self.got["codenexus error"] = yield Call("query_files", {"related_to": "src/nope.py"})
        self.got["reverse-spec error"] = yield Call("prepare", {"targetPath": "src/missing"})
        self.got["ai-loom error"] = yield Call("ai-loom.get_context", {"id": "ann_" + "0" * 26})
        arguments: dict[str, Any] = {"targetPath": "src"}
        for _ in range(MAX_PAGES):
            page = yield Call("prepare", arguments)
            self.pages.append(page)
            continuation = _json(page.text).get("continuation")
            if not continuation:
                break
            arguments = {"targetPath": "src", "offset": continuation["offset"],
                         "contextOffset": continuation["contextOffset"]}
        yield Say("Done: the bounty is published.")


def _json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


@pytest.fixture
def project(tmp_path: Path, code3_home: Path) -> Iterator[tuple[Path, dict[str, str], list[str]]]:
    """A git repository with an `origin` on GitHub and a commit of the generated tree, after `code3 init`;
    the environment Claude Code runs in (a fresh HOME, this test's CODE3_HOME)."""
    project = tmp_path / "widgets"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", "CODE3_HOME": str(code3_home),
           "CODE3_CACHE_DIR": os.environ["CODE3_CACHE_DIR"], "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "a@x.test",
           "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "a@x.test"}
    files = generate_tree(project)
    for command in (["git", "init", "-q", "-b", "main"], ["git", "remote", "add", "origin", f"https://github.com/{REPO}.git"],
                    ["git", "add", "-A"], ["git", "commit", "-qm", "widgets"]):
        done = run(command, project, env)
        assert done.returncode == 0, done.stderr
    # the sponsor's entry `code3` (the quick start), and the code-understanding tools' entry beside it
    for role in ROLES:
        init = run([str(CODE3), "init", "--role", role], project, env, timeout=120)
        assert init.returncode == 0, init.stdout + init.stderr
        assert REPO in init.stdout, init.stdout
    servers = sorted(json.loads((project / ".mcp.json").read_text())["mcpServers"])
    assert servers == sorted(ROLES.values()), servers
    # Claude Code's user settings approve the project's servers (what answering its approval dialog records)
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledMcpjsonServers": servers}))
    yield project, env, files


def test_claude_code_drives_the_quick_start_through_the_server_init_configured(
        project: tuple[Path, dict[str, str], list[str]]) -> None:
    started = time.monotonic()
    root, base_env, files = project
    claude = str(claude_code())
    session = Session()
    config_path = root / ".mcp.json"
    config = json.loads(config_path.read_text())
    entries = config["mcpServers"]
    assert all(entries[name]["env"]["CODE3_PROJECT"] == str(root) for name in ROLES.values()), entries

    with ScriptedModel(session.script()) as model, ScriptedModel() as servers_model:
        # the server has a key and an API of its own to call; a model it called would show there
        for name in ROLES.values():
            entries[name]["env"].update({"ANTHROPIC_API_KEY": servers_model.api_key,
                                         "ANTHROPIC_BASE_URL": servers_model.url})
        config_path.write_text(json.dumps(config, indent=2) + "\n")
        env = {**base_env, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": API_KEY,
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
               "DISABLE_ERROR_REPORTING": "1", "ENABLE_TOOL_SEARCH": "false", "MCP_CONNECTION_NONBLOCKING": "false",
               "MCP_CONNECT_TIMEOUT_MS": "30000"}

        # 1. `claude mcp list` connects to the servers init configured
        listed = run([claude, "mcp", "list"], root, env)
        timings = {"mcp list": time.monotonic() - started}
        assert listed.returncode == 0, listed.stdout + listed.stderr
        for name in ROLES.values():
            line = next((li for li in listed.stdout.splitlines() if li.startswith(f"{name}:")), "")
            assert line.endswith("Connected"), listed.stdout + listed.stderr

        # 2. one `claude -p` session, each model turn the next scripted call
        debug = root.parent / "claude-debug.log"
        ran = run([claude, "-p", "Publish the widgets feature as a bounty with Code3.", "--output-format", "json",
                   "--allowedTools", *(f"mcp__{name}" for name in ROLES.values()), "--no-session-persistence",
                   "--debug-file", str(debug)], root, env, timeout=120)
        timings["claude -p"] = time.monotonic() - started - timings["mcp list"]
        mcp_log = "\n".join(li for li in debug.read_text().splitlines() if "MCP" in li) if debug.exists() else ""
        assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:] + mcp_log[-3000:]
        outcome = json.loads(ran.stdout)
        assert outcome["is_error"] is False and outcome["result"] == "Done: the bounty is published.", \
            f"{outcome}\nrequests answered unscripted, with the tools they offered: {model.unscripted}\n{mcp_log}"
        assert model.errors == [] and model.finished, (model.errors, len(model.results))
        assert not outcome.get("permission_denials"), outcome["permission_denials"]
        agents = {r.headers.get("user-agent", "").split("/")[0] for r in model.requests}
        assert agents == {"claude-cli"}, f"the model's API was called by {agents}, not only by Claude Code"
        server_calls = [f"{r.method} {r.path}" for r in servers_model.requests]

    got = session.got
    # seed 003's answer, word for word
    assert got["add"].is_error is False and got["add"].text == "The sum of 5 + 3 = 8", got["add"].text

    specified = _json(got["specify"].text)
    assert specified.get("success") is True and specified.get("feature_id") == "001-web-ai-agent", got["specify"].text
    published = _json(got["publish"].text)
    assert got["publish"].is_error is False and published.get("success") is True, got["publish"].text
    assert published["issue"]["url"].endswith(f"/{REPO}/issues/1"), published

    # one error of each family, in its seed's dialect, with what it says reaching the model
    lifecycle = got["lifecycle error"]
    error = _json(lifecycle.text)
    assert lifecycle.is_error and str(error.get("code", "")).startswith("E_") and error.get("hint"), lifecycle.text
    nexus = got["codenexus error"]
    assert nexus.is_error and "'src/nope.py' does not exist" in nexus.text, nexus.text
    reverse = got["reverse-spec error"]
    assert reverse.is_error and reverse.text.startswith("prepare 失败: 目标路径不存在: src/missing"), reverse.text
    loom = got["ai-loom error"]
    assert loom.is_error and _json(loom.text).get("code") == "NOT_FOUND", loom.text

    # prepare of the 200-file tree: every page whole in the tool_result, the rest reached through `continuation`
    whole = run([str(CODE3), "spec", "prepare", "src"], root, {**base_env, "CODE3_PROJECT": str(root)})
    assert whole.returncode == 0, whole.stderr
    full = json.loads(whole.stdout)
    assert full["filePaths"] == files
    assert session.pages, "the model never got a prepare page"
    skeletons: list[Any] = []
    text = ""
    for number, page in enumerate(session.pages, 1):
        answer = _json(page.text)
        assert not page.is_error and answer, (f"page {number} did not reach the model whole "
                                              f"({len(page.text)} characters): {page.text[:400]}")
        assert not SAVED_TO_FILE.search(page.text[:300]), page.text[:400]
        assert answer["mergedSkeleton"]["hash"] == full["mergedSkeleton"]["hash"]
        assert answer["filePaths"] == [s["path"] for s in answer["skeletons"]]
        skeletons += answer["skeletons"]
        text += answer["context"]["text"]
    assert len(session.pages) > 1, "the 200-file tree fitted one page: the test no longer follows a continuation"
    assert "continuation" not in _json(session.pages[-1].text), f"still more after {MAX_PAGES} pages"
    assert skeletons == full["skeletons"] and text == full["context"]["text"], "the pages do not add up to the answer"

    # the server never called a model: no opt-in, no request, whatever key its environment holds
    assert server_calls == [], server_calls
    took = time.monotonic() - started
    print(f"claude {outcome.get('num_turns')} turns, {len(model.requests)} model requests "
          f"(unknown paths: {model.unknown}); prepare pages (characters): {[len(p.text) for p in session.pages]}; "
          f"{took:.1f} s ({', '.join(f'{k} {v:.1f} s' for k, v in timings.items())})")  # time is reported, not tested
