"""The MCP Inspector CLI (npm @modelcontextprotocol/inspector 0.15.0, on Node 22) against `code3 mcp --profile
ai-loom` over stdio, as a user types it.

Inspector 0.15 converts a `--tool-arg key=value` to a number only when the property's schema has a plain
`type: integer|number` (an `anyOf` with null is sent as the string "800", which the strict check refuses): a
call with `--tool-arg maxChars=800` succeeding shows optional scalars are published as plain types. A failing
call must print the server's own error text (not a client-side schema error). `make test` installs the Inspector
and Node 22 when npm is on PATH; without them these tests skip with the reason, or fail under
CODE3_REQUIRE_TEST_TOOLS=1 (CI; tests/tools_needed.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import tools_needed
from tests.tools_needed import NODE22_BIN

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
COMMENT = "f returns one; the inspector must see this note"
MISSING = "ann_00000000000000000000000000"


def inspector() -> Path:
    """The pinned Inspector's entry point (tests/tools_needed.py: skips, or fails under CI, when it is missing)."""
    return tools_needed.inspector_cli()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with one P0 annotation, written by `code3 loom add`."""
    inspector()  # a missing Inspector skips (or fails) the test before the project is built
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
