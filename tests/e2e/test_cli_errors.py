"""Bad CLI input, as a user types it, in every command family (code3, loom, nexus, spec, reverse-spec,
doctor): one style, `code3: CODE: message` and the hint on its own line on stderr, exit 1 (2 where 1 means a
finding), no traceback, nothing written (the project's files are byte for byte what they were); `--json` puts
the error object on stdout."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from adapters import key_export
from adapters.keystore import Keystore
from code3.settings import Settings

PASS = "correct horse battery staple"

# (arguments, the code expected on stderr); {p} is the project root
BAD = [
    (["account", "fund", "alice", "--amount", "-5"], "E_VALIDATION"),
    (["account", "fund", "alice", "--amount", "2**70"], "E_VALIDATION"),
    (["account", "fund", "alice", "--amount", str(2**64)], "E_VALIDATION"),
    (["account", "fund", "alice", "--amount", "1e3"], "E_VALIDATION"),
    (["account", "fund", "alice", "--amount", "7\n"], "E_VALIDATION"),
    (["account", "fund", "alice", "--amount", "0"], "E_VALIDATION"),
    (["account", "fund", "alice"], "E_VALIDATION"),
    (["account", "fund", "nobody", "--amount", "5"], "E_NOT_FOUND"),
    (["account", "fund", "Not A Name", "--amount", "5"], "E_VALIDATION"),
    (["account", "fund"], "E_VALIDATION"),
    (["account", "new", "alice"], "E_EXISTS"),
    (["account", "new", "../../etc/evil"], "E_VALIDATION"),
    (["account", "new", "x" * 300], "E_VALIDATION"),
    (["account", "new"], "E_VALIDATION"),
    (["account", "steal", "alice"], "E_VALIDATION"),
    (["account", "export", "alice"], "E_VALIDATION"),
    (["account", "export", "nobody", "--out", "{p}/nobody.key"], "E_NOT_FOUND"),
    (["account", "export", "alice", "--out", "{p}/README.md"], "E_EXISTS"),
    (["account", "export", "alice", "--out", "{p}/no/such/dir/k"], "E_NOT_FOUND"),
    (["account", "import", "{p}/missing.code3key"], "E_NOT_FOUND"),
    (["account", "import", "{p}/README.md"], "E_VALIDATION"),
    (["account", "import", "{p}/alice.code3key"], "E_EXISTS"),
    (["account", "import", "{p}/alice.code3key", "--name", "Bad Name"], "E_VALIDATION"),
    (["account", "import"], "E_VALIDATION"),
    (["audit", "check", "{p}/missing.jsonl"], "E_NOT_FOUND"),
    (["audit", "check", "{p}/README.md", "--key", "not a key!"], "E_VALIDATION"),
    (["audit", "check", "{p}/README.md", "--key", "nobody"], "E_NOT_FOUND"),
    (["audit", "export", "{p}/no/such/dir/log.jsonl"], "E_NOT_FOUND"),
    (["audit", "export"], "E_VALIDATION"),
    (["audit", "verify", "--key", "alice"], "E_VALIDATION"),
    (["audit", "frobnicate"], "E_VALIDATION"),
    (["no-such-command"], "E_VALIDATION"),
    (["serve", "--port", "eighty"], "E_VALIDATION"),
    (["worker", "--interval", "soon"], "E_VALIDATION"),
]


def snapshot(root: Path) -> dict[str, tuple[int, str]]:
    return {str(p.relative_to(root)): (p.stat().st_mode, hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file()
                                       else "") for p in sorted(root.rglob("*"))}


def home_of(project: Path) -> Path:
    return project.parent / f"{project.name}-home"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-errors")
    home = home_of(root)  # the module's own CODE3_HOME: this fixture is set up before a test's own
    home.mkdir(mode=0o700)
    keys = Keystore(Settings.from_env({**os.environ, "CODE3_HOME": str(home)}, project=root).keystore_dir)
    keys.new("alice")
    (root / "README.md").write_text("# a project\n")
    key_export.export_key(keys, "alice", root / "alice.code3key", PASS, n=2**14)
    return root


def run(project: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    argv = [a.replace("{p}", str(project)) for a in args]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODE3_", "GITHUB_"))}
    env |= {"CODE3_PROJECT": str(project), "CODE3_PASSPHRASE": PASS, "CODE3_HOME": str(home_of(project))}
    return subprocess.run([sys.executable, "-m", "code3", *argv], env=env, cwd=project, capture_output=True,
                          text=True, timeout=60)


FINDINGS = (["audit", "check"], ["audit", "verify"], ["spec", "diff"], ["doctor"])


def expected_status(args: list[str]) -> int:
    """1, or 2 for the commands whose 1 means a finding (as GNU diff does)."""
    return 2 if any(args[: len(f)] == f for f in FINDINGS) else 1


def refused_in_the_one_style(proc: subprocess.CompletedProcess[str], code: str, status: int) -> bool:
    lines = [line for line in proc.stderr.strip().splitlines() if "created the identity" not in line]
    return (proc.returncode == status and "Traceback" not in proc.stderr and proc.stdout == ""
            and len(lines) == 2 and lines[0].startswith(f"code3: {code}: ") and lines[1].startswith("  hint: "))


def test_every_bad_invocation_is_refused_in_the_one_style_and_changes_nothing(project: Path) -> None:
    before = snapshot(project)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda case: run(project, case[0]), BAD))
    failures = [f"code3 {' '.join(args)} -> exit {proc.returncode}\n{proc.stderr}{proc.stdout}"
                for (args, code), proc in zip(BAD, results, strict=True)
                if not refused_in_the_one_style(proc, code, expected_status(args))]
    assert not failures, "\n\n".join(failures)
    assert snapshot(project) == before, "a refused command wrote nothing"


# every command family, in the same style: (arguments, code, exit status)
FAMILIES = [
    (["loom", "show", "nope"], "VALIDATION_ERROR", 1),
    (["loom", "show", "ann_00000000000000000000000000"], "NOT_FOUND", 1),
    (["nexus", "show", "no/such/file.rs"], "E_NOT_FOUND", 1),
    (["nexus", "tag", "../outside.rs", "perf"], "E_UNAUTHORIZED", 1),
    (["spec", "prepare", "nope"], "E_NOT_FOUND", 1),
    (["spec", "diff", "specs/none.spec.md", "src"], "E_NOT_FOUND", 2),
    (["doctor", "--no-such-flag"], "E_VALIDATION", 2),
    (["audit", "verify", "--no-such-flag"], "E_VALIDATION", 2),
    (["loom", "frobnicate"], "E_VALIDATION", 1),
]


def test_every_command_family_refuses_in_the_one_style(project: Path) -> None:
    before = {k: v for k, v in snapshot(project).items() if not k.startswith(".code3")}
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda case: run(project, case[0]), FAMILIES))
    failures = [f"code3 {' '.join(args)} -> exit {proc.returncode}\n{proc.stderr}{proc.stdout}"
                for (args, code, status), proc in zip(FAMILIES, results, strict=True)
                if not refused_in_the_one_style(proc, code, status)]
    assert not failures, "\n\n".join(failures)
    # these families open the project's state (.code3/) before they read their arguments; the user's files stay
    assert {k: v for k, v in snapshot(project).items() if not k.startswith(".code3")} == before


def test_the_reverse_spec_entry_command_refuses_in_the_one_style(project: Path) -> None:
    for argv in (["bogus"], []):
        proc = subprocess.run([sys.executable, "-m", "code3.reverse_spec_cli", *argv], capture_output=True,
                              text=True, timeout=60, cwd=project)
        assert refused_in_the_one_style(proc, "E_VALIDATION", 1), proc.stderr


@pytest.mark.parametrize("args", [
    ["--json", "account", "new", "alice"], ["account", "new", "alice", "--json"],
    ["loom", "show", "ann_00000000000000000000000000", "--json"], ["nexus", "show", "no/such/file.rs", "--json"],
    ["spec", "prepare", "nope", "--json"], ["--json", "no-such-command"],
])
def test_json_gives_machines_the_error_object_on_stdout(project: Path, args: list[str]) -> None:
    proc = run(project, args)
    error = json.loads(proc.stdout)
    assert set(error) == {"code", "message", "hint"} and error["hint"] and proc.returncode == 1
    assert "code3: " not in proc.stderr and "Traceback" not in proc.stderr


def test_help_is_not_an_error(project: Path) -> None:
    proc = run(project, ["account", "--help"])
    assert proc.returncode == 0 and "export" in proc.stdout and "CODE3_PASSPHRASE" in proc.stdout
