"""A bad setting, as a user sets it, through a real `code3` process: one coded line naming the variable and
the value, the hint on its own line, exit 1 (2 for `doctor`, whose 1 means a failed check: code3/cli_errors.py),
no traceback, and nothing opened or created. And `import code3.settings`, which every `code3 mcp` start
does, stays light."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from code3.settings import VARIABLES

ROOT = Path(__file__).resolve().parents[2]


def code3(tmp_path: Path, args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    clean |= {"CODE3_PROJECT": str(tmp_path / "project"), "CODE3_HOME": str(tmp_path / "home"), **env}
    return subprocess.run([sys.executable, "-m", "code3", *args], env=clean, cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def refused_in_the_one_style(proc: subprocess.CompletedProcess[str], status: int, name: str, value: str) -> bool:
    lines = proc.stderr.strip().splitlines()
    return (proc.returncode == status and proc.stdout == "" and "Traceback" not in proc.stderr and len(lines) == 2
            and lines[0] == f"code3: E_VALIDATION: {name}={value!r} is not a valid value"
            and lines[1].startswith(f"  hint: {name} takes "))


def test_a_bad_cooling_period_makes_doctor_refuse_by_name_not_crash(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    proc = code3(tmp_path, ["doctor"], CODE3_COOLING_PERIOD="abc")
    assert refused_in_the_one_style(proc, 2, "CODE3_COOLING_PERIOD", "abc"), proc.stderr + proc.stdout
    assert "from 1 to 7776000" in proc.stderr and "CODE3_COOLING_PERIOD=604800" in proc.stderr
    assert list((tmp_path / "project").iterdir()) == [] and not (tmp_path / "home").exists(), "nothing opened"

    as_json = code3(tmp_path, ["doctor", "--json"], CODE3_COOLING_PERIOD="abc")
    error = json.loads(as_json.stdout)
    assert error["code"] == "E_VALIDATION" and "CODE3_COOLING_PERIOD='abc'" in error["message"] and error["hint"]
    assert as_json.returncode == 2 and as_json.stderr == ""


@pytest.mark.parametrize(("args", "name", "value"), [
    (["mcp"], "CODE3_FORGE", "gitlab"),
    (["serve", "--port", "0"], "CODE3_WEB_SESSION_HOURS", "0"),
    (["worker", "--once"], "CODE3_DB_OUTAGE_EXIT", "soon"),
    (["account", "list"], "CODE3_CHAIN", "ethereum"),
    (["loom", "list"], "CODE3_LOOM_SHARE_INTERNAL", "maybe"),
    (["spec", "prepare", "specs/001.md"], "CODE3_LLM", "gpt"),
    (["config"], "CODE3_LOG_FORMAT", "xml"),
    (["init"], "CODE3_IDENTITY", "Alice"),
    (["mcp"], "CODE3_MAX_ANSWER_BYTES", "100"),
])
def test_every_command_refuses_a_bad_setting_before_it_opens_anything(tmp_path: Path, args: list[str], name: str,
                                                                      value: str) -> None:
    (tmp_path / "project").mkdir()
    proc = code3(tmp_path, args, **{name: value})
    assert refused_in_the_one_style(proc, 1, name, value), proc.stderr + proc.stdout
    assert list((tmp_path / "project").iterdir()) == [] and not (tmp_path / "home").exists(), "nothing opened"


def test_a_refused_database_url_keeps_its_password(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    proc = code3(tmp_path, ["doctor"], CODE3_DATABASE_URL="mysql://code3:s3cret@db.example/x")
    assert proc.returncode == 2 and "code3: E_VALIDATION: CODE3_DATABASE_URL=" in proc.stderr
    assert "s3cret" not in proc.stderr


def test_code3_config_lists_every_variable(tmp_path: Path) -> None:
    proc = code3(tmp_path, ["config"])
    assert proc.returncode == 0, proc.stderr
    assert [line.split(" (default: ")[0] for line in proc.stdout.splitlines() if not line.startswith(" ")] == \
        list(VARIABLES)


def test_importing_the_settings_loads_nothing_heavy() -> None:
    probe = ("import sys; import code3.settings; "
             "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    loaded = set(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                                check=True, cwd=ROOT).stdout.split())
    heavy = {"pydantic", "pydantic_settings", "cryptography", "mcp", "psycopg", "eventsourcing", "anthropic",
             "httpx", "jinja2", "githubkit", "aptos_sdk", "tree_sitter", "dotenv", "mcp_tools", "scheduler"}
    assert loaded & heavy == set()
