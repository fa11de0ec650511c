"""The reverse-spec front: `reverse-spec mcp-server` (and `code3 mcp --profile reverse-spec`) over stdio, spoken
to by hand in JSON-RPC as the seed shows it; and the `code3 spec` CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from adapters.keystore import Keystore
from code3.settings import Settings
from tests.fakes.anthropic_server import FakeAnthropic

pytestmark = pytest.mark.e2e

SEED_SCHEMAS = {
    "prepare": ({"targetPath", "deep"}, ["targetPath"]),
    "generate": ({"targetPath", "deep", "outputDir"}, ["targetPath"]),
    "batch": ({"projectRoot", "force"}, []),
    "diff": ({"specPath", "sourcePath"}, ["specPath", "sourcePath"]),
}
# The documented departures (docs/reverse-spec.md): optional offsets to fetch what the answer cap cut, statelessly;
# diff's scope knobs (include/exclude patterns, tests counted as API) and batch's prune of stale specs.
PAGING = {"prepare": {"offset", "contextOffset"}, "batch": {"offset", "prune"},
          "diff": {"include", "exclude", "testsAsApi"}}
SOURCE = {"util/text.py": 'def clean(s: str) -> str:\n    """Strip it."""\n    return s.strip()\n',
          "core/engine.py": "from util.text import clean\n\n\nclass Engine:\n    def run(self, x: str) -> str:\n"
                            "        return clean(x)\n"}


def reverse_spec() -> str:
    found = Path(sys.executable).parent / "reverse-spec"
    if not found.exists():
        pytest.skip("the reverse-spec console script is not installed (pip install -e .)")
    return str(found)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    for rel, text in SOURCE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    Keystore(Settings(project=root).keystore_dir).get_or_create("default")  # who generated a spec, in its events
    return root


def env_for(project: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODE3_", "ANTHROPIC_"))}
    return {**env, "CODE3_PROJECT": str(project), **extra}


class Session:
    """One server process, spoken to line by line; notifications are kept per request."""

    def __init__(self, command: list[str], project: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(command, env=env, cwd=project, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.next_id = 0
        self.notes: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        if notify:
            return {}
        while True:
            line = self.proc.stdout.readline()
            assert line, f"stdout closed: {self.proc.stderr.read() if self.proc.stderr else ''}"
            answer = json.loads(line)
            assert answer.get("jsonrpc") == "2.0", line
            if answer.get("id") == self.next_id:
                return answer
            self.notes.append(answer)

    def call(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if meta:
            params["_meta"] = meta
        return self.send("tools/call", params)["result"]

    def close(self) -> str:
        out, err = self.proc.communicate(timeout=30)
        for line in out.splitlines():
            assert json.loads(line).get("jsonrpc") == "2.0", f"not JSON-RPC on stdout: {line!r}"
        return err


def start(project: Path, command: list[str] | None = None, **env: str) -> Session:
    session = Session(command or [reverse_spec(), "mcp-server"], project, env_for(project, **env))
    init = session.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "claude-code", "version": "1.0.0"}})
    assert init["result"]["serverInfo"]["name"] == "reverse-spec"
    assert init["result"]["serverInfo"]["version"] == "2.0.0"
    session.send("notifications/initialized", notify=True)
    return session


def test_the_seed_entry_command_serves_exactly_the_four_tools_with_the_seed_schemas(project: Path) -> None:
    session = start(project)
    try:
        tools = session.send("tools/list")["result"]["tools"]
        assert {t["name"] for t in tools} == set(SEED_SCHEMAS)
        descriptions = {t["name"]: t["description"] for t in tools}
        assert descriptions["prepare"] == "AST 预处理 + 上下文组装" and descriptions["diff"] == "Spec 漂移检测"
        for tool in tools:
            properties, required = SEED_SCHEMAS[tool["name"]]
            assert set(tool["inputSchema"]["properties"]) == properties | PAGING.get(tool["name"], set())
            assert sorted(tool["inputSchema"].get("required", [])) == sorted(required)
    finally:
        session.close()


def test_tool_answers_are_json_text_and_errors_use_the_seed_words(project: Path) -> None:
    session = start(project)
    try:
        missing = session.call("prepare", {"targetPath": "src/nonexistent/"})
        assert missing["isError"] is True
        assert missing["content"][0]["text"] == "prepare 失败: 目标路径不存在: src/nonexistent/"
        ok = session.call("prepare", {"targetPath": "core", "deep": True})
        assert not ok.get("isError")
        result = json.loads(ok["content"][0]["text"])
        assert set(result) == {"skeletons", "mergedSkeleton", "context", "filePaths"}
        assert result["filePaths"] == ["core/engine.py"]
        generated = json.loads(session.call("generate", {"targetPath": "core"})["content"][0]["text"])
        assert set(generated) == {"specPath", "tokenUsage", "confidence", "warnings"}
        report = json.loads(session.call("diff", {"specPath": generated["specPath"], "sourcePath": "core"}
                                         )["content"][0]["text"])
        assert report["hasDrift"] is False and report["summary"]["totalChanges"] == 0
    finally:
        err = session.close()
    assert "Traceback" not in err


def test_batch_sends_progress_notifications_to_a_client_that_asks(project: Path) -> None:
    session = start(project, [sys.executable, "-m", "code3", "mcp", "--profile", "reverse-spec"])
    try:
        answer = session.call("batch", {}, meta={"progressToken": "tok-1"})
        result = json.loads(answer["content"][0]["text"])
        assert result["order"] == ["util", "core"] and result["successful"] == ["util", "core"]
        progress = [n["params"] for n in session.notes if n.get("method") == "notifications/progress"]
        assert [p["progress"] for p in progress] == [1, 2, 3] and {p["progressToken"] for p in progress} == {"tok-1"}
        assert progress[-1]["total"] == 3
        session.notes.clear()
        again = json.loads(session.call("batch", {"projectRoot": "."})["content"][0]["text"])
        assert again["skipped"] == ["util", "core"]
        assert not [n for n in session.notes if n.get("method") == "notifications/progress"], "no token, no progress"
    finally:
        session.close()


def test_generate_through_the_anthropic_stand_in_and_without_a_required_key(project: Path) -> None:
    fake = FakeAnthropic().start()
    try:
        session = start(project, ANTHROPIC_API_KEY=fake.api_key, ANTHROPIC_BASE_URL=fake.url,
                        CODE3_LLM_MODEL="claude-stand-in")
        try:
            answer = json.loads(session.call("generate", {"targetPath": "util"})["content"][0]["text"])
        finally:
            err = session.close()
        assert answer["tokenUsage"]["inputTokens"] > 0 and answer["confidence"] == "high"
        assert fake.requests[0]["model"] == "claude-stand-in"
        assert fake.api_key not in err
    finally:
        fake.stop()
    session = start(project, CODE3_LLM="anthropic")
    try:
        failed = session.call("generate", {"targetPath": "util"})
        assert failed["isError"] is True and failed["content"][0]["text"] == "generate 失败: 未检测到 ANTHROPIC_API_KEY"
    finally:
        session.close()


def test_the_cli_diff_exits_1_on_drift_and_accept_clears_it(project: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "code3", "spec", *args], env=env_for(project), cwd=project,
                              capture_output=True, text=True, timeout=120)

    generated = run("generate", "util")
    assert generated.returncode == 0, generated.stderr
    spec = json.loads(generated.stdout)["specPath"]
    clean = run("diff", spec, "util")
    assert clean.returncode == 0 and f"no drift: {spec} matches util" in clean.stderr
    (project / "util" / "text.py").write_text(SOURCE["util/text.py"] + "\n\ndef extra() -> None:\n    pass\n")
    drifted = run("diff", spec, "util")
    assert drifted.returncode == 1 and json.loads(drifted.stdout)["summary"]["low"] == 1
    assert "drift: 0 high, 0 medium, 1 low" in drifted.stderr
    assert run("diff", spec, "util", "--accept").returncode == 0
    assert run("diff", spec, "util").returncode == 0
    missing = run("prepare", "nope")  # the one CLI error style; the seed's "prepare 失败" text is the tools'
    assert missing.returncode == 1 and missing.stdout == ""
    refusal = missing.stderr.splitlines()[-2:]
    assert refusal[0] == "code3: E_NOT_FOUND: spec prepare: 目标路径不存在: nope" and refusal[1].startswith("  hint: ")
    failed_diff = run("diff", "specs/none.spec.md", "util")  # 1 means drift: diff's own failure is 2
    assert failed_diff.returncode == 2 and failed_diff.stderr.startswith("code3: E_")
    batch = run("batch")
    assert batch.returncode == 0, batch.stderr
    assert json.loads(batch.stdout)["totalModules"] == 2
    history = subprocess.run([sys.executable, "-m", "code3", "audit", "history", spec], env=env_for(project),
                             cwd=project, capture_output=True, text=True, timeout=120)
    assert history.returncode == 0, history.stderr
    assert [json.loads(line)["event"] for line in history.stdout.splitlines()] == [
        "Generated", "DriftAccepted", "Regenerated"]  # the batch rewrote the module spec it had no checkpoint for


def test_a_batch_killed_midway_resumes_in_a_new_process(project: Path) -> None:
    import signal
    import threading

    from tests.fakes.anthropic_server import default_responder

    for rel, text in {"app/main.py": "from core.engine import Engine\n\n\ndef main() -> None:\n    Engine()\n",
                      "cyc_a/a.py": "from cyc_b.b import g\n\n\ndef f() -> int:\n    return g()\n",
                      "cyc_b/b.py": "from cyc_a.a import f\n\n\ndef g() -> int:\n    return 1\n"}.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    third = threading.Event()
    release = threading.Event()
    seen: list[str] = []

    def responder(request: dict[str, Any]) -> str:
        seen.append(request["messages"][0]["content"].split("`")[1])
        if len(seen) == 3:  # the third module: hold the answer until the process is killed
            third.set()
            release.wait(30)
        return default_responder(request)

    fake = FakeAnthropic(responder=responder).start()
    env = env_for(project, ANTHROPIC_API_KEY=fake.api_key, ANTHROPIC_BASE_URL=fake.url)
    command = [sys.executable, "-m", "code3", "spec", "batch", "--no-progress"]
    try:
        proc = subprocess.Popen(command, env=env, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert third.wait(60), "the batch never reached its third module"
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
            release.set()
        assert seen == ["util", "core", "app"]
        seen.clear()
        resumed = subprocess.run(command, env=env, cwd=project, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        answer = json.loads(resumed.stdout)
        assert seen == ["app", "cyc_a", "cyc_b"], "only what the killed run had not finished"
        assert answer["skipped"] == ["util", "core"] and answer["successful"] == ["app", "cyc_a", "cyc_b"]
    finally:
        fake.stop()


def test_the_documented_commands_run_as_written(tmp_path: Path) -> None:
    import re
    import shlex

    page = (Path(__file__).resolve().parents[2] / "docs" / "reverse-spec.md").read_text(encoding="utf-8")
    section = page.split("\n## From the command line\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block, "docs/reverse-spec.md's From the command line has no sh block"
    project = tmp_path / "proj"
    (project / "src" / "auth").mkdir(parents=True)
    (project / "src" / "auth" / "login.py").write_text('def login(user: str, password: str) -> bool:\n'
                                                       '    """Check the password."""\n    return bool(password)\n')
    Keystore(Settings(project=project).keystore_dir).get_or_create("default")
    for line in block.group(1).splitlines():
        command = shlex.split(line.split("#", 1)[0])
        assert command[0] == "code3", line
        done = subprocess.run([sys.executable, "-m", "code3", *command[1:]], env=env_for(project), cwd=project,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{line}: {done.stderr}"
        json.loads(done.stdout)
