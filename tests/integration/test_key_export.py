"""Key export and import through the `code3` CLI in a subprocess (the adapter's own checks are
tests/unit/test_key_export.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.keystore import Keystore

PASS = "correct horse battery staple"


@pytest.fixture
def keys(tmp_path: Path) -> Keystore:
    keystore = Keystore(tmp_path / "a" / "keys")
    keystore.new("alice")
    return keystore


def test_the_cli_round_trip_with_code3_passphrase(keys: Keystore, tmp_path: Path) -> None:
    env = {**os.environ, "CODE3_PASSPHRASE": PASS, "CODE3_KEYSTORE": str(keys.directory)}

    def code3(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "code3", *args, "--project", str(tmp_path)],
                              env={**env, **extra}, capture_output=True, text=True)

    out = tmp_path / "backup.code3key"
    exported = code3("account", "export", "alice", "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    assert PASS not in exported.stdout + exported.stderr
    elsewhere = tmp_path / "elsewhere"
    imported = code3("account", "import", str(out), "--name", "restored", CODE3_KEYSTORE=str(elsewhere))
    assert imported.returncode == 0, imported.stderr
    assert Keystore(elsewhere).load("restored").private_key_hex == keys.load("alice").private_key_hex
    wrong = code3("account", "import", str(out), CODE3_KEYSTORE=str(tmp_path / "x"), CODE3_PASSPHRASE="nope-nope")
    assert wrong.returncode == 1 and "code3: E_UNAUTHORIZED: " in wrong.stderr and "Traceback" not in wrong.stderr
