"""Bad CLI input, as a user types it: one coded line and a hint on stderr, exit 2, no traceback, and nothing
written (the project's files are byte for byte what they were)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from adapters import key_export
from adapters.keystore import Keystore

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


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-errors")
    keys = Keystore(root / ".code3" / "keys")
    keys.new("alice")
    (root / "README.md").write_text("# a project\n")
    key_export.export_key(keys, "alice", root / "alice.code3key", PASS, n=2**14)
    return root


def run(project: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    argv = [a.replace("{p}", str(project)) for a in args]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODE3_", "GITHUB_"))}
    env |= {"CODE3_PROJECT": str(project), "CODE3_PASSPHRASE": PASS}
    return subprocess.run([sys.executable, "-m", "code3", *argv], env=env, cwd=project, capture_output=True,
                          text=True, timeout=60)


def test_every_bad_invocation_is_refused_with_a_code_exit_2_and_no_change(project: Path) -> None:
    before = snapshot(project)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda case: run(project, case[0]), BAD))
    failures = []
    for (args, code), proc in zip(BAD, results, strict=True):
        lines = proc.stderr.strip().splitlines()
        ok = (proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stdout == ""
              and len(lines) == 2 and lines[0].startswith(f"code3: {code}: ") and lines[1].startswith("  hint: "))
        if not ok:
            failures.append(f"code3 {' '.join(args)} -> exit {proc.returncode}\n{proc.stderr}{proc.stdout}")
    assert not failures, "\n\n".join(failures)
    assert snapshot(project) == before, "a refused command wrote nothing"


def test_help_is_not_an_error(project: Path) -> None:
    proc = run(project, ["account", "--help"])
    assert proc.returncode == 0 and "export" in proc.stdout and "CODE3_PASSPHRASE" in proc.stdout
