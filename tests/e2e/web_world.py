"""A project for the web page's browser tests and screenshots, run by real `code3` processes.

Three identities (alice sponsors and runs `serve`, bob and carol work) on the embedded forge and ledger, alice
funded and `alice/todo-app` created; a few source files. `Site` starts `code3 serve`, `code3 worker` and
`code3 mcp` with the project's CODE3_HOME and a cooling period of seconds, and signs a browser in the way a
person does: `code3 serve --print-url --port N`, then the URL it prints.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

REPO = "alice/todo-app"
AMOUNT = 1_000_000  # 1 USDT in its smallest unit
PEOPLE = ("alice", "bob", "carol")
SOURCES = {
    "src/app.py": "\n".join([
        '"""The to-do application: routes and start-up."""', "", "from src import store, export", "", "",
        "def main() -> None:", "    todos = store.load()", "    for todo in todos:", "        print(todo.title)", "",
        "", "def export_all(path: str) -> None:", "    export.write_csv(store.load(), path)", "",
        "", "DATABASE_URL = 'postgresql://localhost/todo'", ""]),
    "src/store.py": "def load() -> list:\n    return []\n",
    "src/export.py": "import csv\n\n\ndef write_csv(todos, path):\n    with open(path, 'w') as fh:\n"
                     "        csv.writer(fh).writerows(todos)\n",
    "tests/test_app.py": "from src import app\n\n\ndef test_main():\n    app.main()\n",
}


@dataclass
class Site:
    root: Path
    home: Path
    cooling: int = 3
    logs: Path = field(init=False)
    procs: list[subprocess.Popen[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.logs = self.root.parent / f"{self.root.name}-logs"
        self.logs.mkdir(exist_ok=True)

    def env(self, identity: str = "alice", **extra: str) -> dict[str, str]:
        return {**os.environ, "CODE3_HOME": str(self.home), "CODE3_PROJECT": str(self.root),
                "CODE3_IDENTITY": identity, "CODE3_RESOLVER": "alice", "CODE3_COOLING_PERIOD": str(self.cooling),
                **extra}

    def run(self, *args: str, identity: str = "alice", **extra: str) -> str:
        done = subprocess.run([sys.executable, "-m", "code3", *args], env=self.env(identity, **extra), cwd=self.root,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"code3 {' '.join(args)} failed: {done.stderr[-2000:]}"
        return done.stdout

    def start(self, name: str, *args: str, identity: str = "alice", **extra: str) -> subprocess.Popen[str]:
        """A long-running `code3` process; stdout piped (serve prints where it listens), stderr to a log file."""
        with open(self.logs / f"{name}.log", "a") as err:
            proc = subprocess.Popen([sys.executable, "-m", "code3", *args], env=self.env(identity, **extra),
                                    cwd=self.root, stdout=subprocess.PIPE, stderr=err, text=True)
        self.procs.append(proc)
        return proc

    def serve(self, name: str) -> tuple[subprocess.Popen[str], str, int]:
        proc = self.start(name, "serve", "--port", "0")
        line = proc.stdout.readline() if proc.stdout else ""
        assert line, f"code3 serve did not start: {self.log(name)[-2000:]}"
        url = json.loads(line)["listening"]
        return proc, url, int(url.rsplit(":", 1)[1])

    def login_url(self, port: int) -> str:
        return self.run("serve", "--print-url", "--port", str(port)).strip()

    def token(self) -> str:
        """The serve token, read as `code3 serve --print-token` reads it (in-process: no second of start-up)."""
        from code3.settings import Settings
        from mcp_tools.http.tokens import serve_token

        return serve_token(Settings(project=self.root, home=self.home).secrets_dir)[0].decode()

    def mcp(self, identity: str) -> StdioServerParameters:
        return StdioServerParameters(command=sys.executable, args=["-m", "code3", "mcp", "--profile", "all"],
                                     env=self.env(identity), cwd=self.root)

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self, proc: subprocess.Popen[str]) -> int:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout:
            proc.stdout.close()
        if proc in self.procs:
            self.procs.remove(proc)
        return int(proc.returncode)

    def close(self) -> None:
        for proc in list(self.procs):
            self.stop(proc)


def make_site(root: Path, home: Path, cooling: int = 3) -> Site:
    """The project on disk: keys for the three people, alice funded, the repository, the source files."""
    from adapters.keystore import Keystore
    from code3.settings import Settings
    from code3.wiring import build_services, record_resolver

    root.mkdir(parents=True, exist_ok=True)
    for rel, text in SOURCES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    keys = Keystore(Settings(project=root, home=home).keystore_dir)
    for name in PEOPLE:
        keys.new(name)
    settings = Settings(project=root, home=home, identity="alice", cooling_period=cooling, resolver="alice")
    record_resolver(settings)  # alice runs `code3 serve`, which reports merges (as serve records at start)
    alice = build_services(settings)
    try:
        alice.chain.mint(alice.signer.address, "USDT", 50 * AMOUNT)  # type: ignore[attr-defined]
        alice.forge.create_repo(REPO)  # type: ignore[attr-defined]
    finally:
        alice.close()
    return Site(root, home, cooling)


def text_of(result: Any) -> str:
    return result.content[0].text if result.content else "<no content>"


async def ok(client: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, f"{tool}({args}) failed: {text_of(result)}"
    return result.structured_content or json.loads(text_of(result))
