"""What tests/e2e/test_newcomer_journey.py drives, apart from the journey itself: a package of the real-code
corpus made a git repository, a shell with only what a newcomer's shell has, `code3` commands run in it, and the
official TypeScript SDK client started from a `.mcp.json` entry exactly as an MCP client starts it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.realcode_scoring import CORPUS as CORPUS_ROOT
from tests.tools_needed import need_tool

ROOT = Path(__file__).resolve().parents[2]
CORPUS = CORPUS_ROOT / "python"  # scripts/corpus/python.sh's packages, as benchmarks/realcode_python.py finds them
CODE3 = ROOT / ".venv" / "bin" / "code3"
DRIVER = Path(__file__).parent / "ts_client" / "driver.mjs"
# small pure-Python packages of scripts/fetch_corpus.sh, the CI subset (--ci) first
PACKAGES = ("click-8.2.1", "click-8.1.8", "requests-2.34.2")
TS_SDK_DEFAULT_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")  # what StdioClientTransport passes on
GITCONFIG = "[init]\n\tdefaultBranch = main\n"  # no [user]: nothing gives the worker's working copy an identity
SPONSOR_GIT = (("user.name", "Sponsor"), ("user.email", "sponsor@example.invalid"))  # the project's own, local


def corpus_package() -> Path:
    """The first package of the corpus that is fetched (its `.complete` marker present), else a skip naming the
    command that fetches it (a failure under CODE3_REQUIRE_TEST_TOOLS=1)."""
    __tracebackhide__ = True
    found = [CORPUS / name for name in PACKAGES if (CORPUS / name / ".complete").exists()]
    need_tool(bool(found), f"no Python package of the corpus under {CORPUS} ({', '.join(PACKAGES)}): "
                           "run scripts/fetch_corpus.sh --ci")
    return found[0]


def python_sources(package: Path) -> list[Path]:
    """The package's own modules (under src/<name>/ or <name>/), not its tests, docs or examples."""
    name = package.name.rsplit("-", 1)[0]
    for top in (package / "src" / name, package / name):
        if (top / "__init__.py").is_file():
            return sorted(p for p in top.rglob("*.py") if "__pycache__" not in p.parts)
    raise AssertionError(f"{package} holds no {name}/__init__.py under src/ or its top")


def shell_env(code3_home: Path, user_home: Path) -> dict[str, str]:
    """A newcomer's shell: their PATH and HOME (a ~/.gitconfig with no git identity: a worker's machine may have
    none, and only fork_and_prepare gives its working copy one), CODE3_HOME exported (not the default under HOME),
    nothing else of the test run's environment."""
    (user_home / ".gitconfig").write_text(GITCONFIG)
    return {"PATH": f"{CODE3.parent}:{os.environ['PATH']}", "HOME": str(user_home), "CODE3_HOME": str(code3_home),
            "USER": "newcomer", "LOGNAME": "newcomer", "SHELL": "/bin/sh", "TERM": "dumb", "LANG": "C.UTF-8"}


def git(cwd: Path, *args: str, env: dict[str, str]) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"git {' '.join(args)} in {cwd}: exit {done.returncode}\n{done.stdout}{done.stderr}"
    return done.stdout


def git_project(package: Path, dest: Path, origin: str, env: dict[str, str]) -> Path:
    """The package copied to `dest`, a git repository on `main` with one commit and `origin` as its remote; the
    sponsor's git identity is the repository's own configuration (SPONSOR_GIT), not the shell's."""
    shutil.copytree(package, dest, ignore=shutil.ignore_patterns(".complete", "__pycache__", "*.pyc"))
    git(dest, "init", "-q", "-b", "main", env=env)
    for key, value in SPONSOR_GIT:
        git(dest, "config", key, value, env=env)
    git(dest, "add", "-A", env=env)
    git(dest, "commit", "-q", "-m", f"Import {package.name}", env=env)
    git(dest, "remote", "add", "origin", origin, env=env)
    return dest


@dataclass(frozen=True)
class Ran:
    args: list[str]
    code: int
    out: str
    err: str

    def __str__(self) -> str:
        return f"$ code3 {' '.join(self.args)}  (exit {self.code})\n{self.out}{self.err}"

    def json(self) -> Any:
        return json.loads(self.out)


def code3(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 120) -> Ran:
    """`code3 ARGS` as the newcomer types it in `cwd`, the checkout's .venv/bin/code3 (the README's path)."""
    done = subprocess.run([str(CODE3), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return Ran(args, done.returncode, done.stdout, done.stderr)


class TsClient:
    """The official TypeScript SDK's Client (tests/e2e/ts_client/driver.mjs) connected over stdio to the server an
    `.mcp.json` entry describes: its command, args and env, nothing else (no cwd). The SDK adds its default
    environment (HOME, PATH, USER, SHELL, TERM, LOGNAME) from the driver's own, which is the newcomer's shell."""

    def __init__(self, sdk_prefix: Path, entry: dict[str, Any], shell: dict[str, str], cwd: Path, log: Path) -> None:
        assert set(entry) <= {"command", "args", "env", "type"}, f"the entry holds more than a stdio server: {entry}"
        self.config = {"transport": "stdio", "command": entry["command"], "args": entry.get("args", []),
                       "env": entry.get("env", {})}
        self.log = log  # the server's stderr (the driver inherits it to the client's): a file, never a full pipe
        with log.open("w") as stderr:
            self.proc = subprocess.Popen(["node", str(DRIVER), str(sdk_prefix)], cwd=cwd, env=shell, text=True,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        connected = self._exchange(self.config)
        assert "connected" in connected, connected
        self.server: dict[str, Any] = connected["connected"]["server"]
        self.tools: list[str] = connected["connected"]["tools"]

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            self.proc.communicate(timeout=30)
            raise AssertionError(f"the TypeScript client stopped (exit {self.proc.returncode}):\n"
                                 f"{self.log.read_text()[-3000:]}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The CallToolResult as the client surfaced it; a thrown error (a JSON-RPC error or the SDK's own
        output-schema check) fails the step with its text."""
        outcome = self._exchange({"tool": tool, "arguments": arguments})
        assert "result" in outcome, f"{tool}: the client threw {outcome.get('error')}"
        result: dict[str, Any] = outcome["result"]
        return result

    def ok(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A success's structuredContent (validated by the client against the tool's outputSchema)."""
        result = self.call(tool, arguments)
        assert not result.get("isError"), f"{tool} {json.dumps(arguments)} failed: {text_of(result)}"
        answer = result.get("structuredContent")
        assert isinstance(answer, dict) and answer.get("success") is True, f"{tool}: {result}"
        return answer

    def refused(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A failure's error object {code, message, hint} (isError, the text, no structuredContent)."""
        result = self.call(tool, arguments)
        assert result.get("isError") is True, f"{tool} {json.dumps(arguments)} was not refused: {result}"
        assert "structuredContent" not in result, result
        error: dict[str, Any] = json.loads(text_of(result))
        return error

    def close(self) -> None:
        """Ends the client (and so its server); again, it does nothing."""
        if self.proc.stdin is None or self.proc.stdin.closed:
            return
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def text_of(result: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in result.get("content", []))
