"""`code3 demo` (and so `make demo`) runs on a throw-away project with a CODE3_HOME of its own: the user's
keys are neither read nor written, even when the user already has keys named like the demo's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.keystore import Keystore

pytestmark = pytest.mark.e2e


def test_the_demo_leaves_the_users_code3_home_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    mine = Keystore(home / "keys").new("alice")  # the user's own alice: the demo must not collide with it
    before = sorted((p.relative_to(home), p.read_bytes()) for p in home.rglob("*") if p.is_file())
    ran = subprocess.run([sys.executable, "-m", "code3", "demo"], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path, env={**os.environ, "CODE3_HOME": str(home), "HOME": str(tmp_path)})
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert "The winner is paid and the escrow is empty." in ran.stdout
    after = sorted((p.relative_to(home), p.read_bytes()) for p in home.rglob("*") if p.is_file())
    assert after == before and Keystore(home / "keys").load("alice").address == mine.address
    assert not (tmp_path / ".config").exists(), "nothing under ~/.config either"
