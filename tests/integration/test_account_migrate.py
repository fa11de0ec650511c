"""`code3 account migrate`: an older Code3's keys and secrets move from `<project>/.code3/` to CODE3_HOME;
tracked, linked or foreign files are refused with the reason, and an existing different key is never
overwritten. Until then, the old layout is refused (never read) with the way out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.keystore import Keystore
from adapters.private_files import write_private
from code3.settings import Settings
from code3.wiring import build_services
from domain.errors import Code3Error

ROOT = Path(__file__).resolve().parents[2]


def old_layout(project: Path) -> dict[str, bytes]:
    """A project as an older Code3 left it: keys and secrets in its .code3/ (owner-only), git-ignored."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(".code3/\n")
    old = Keystore(project / ".code3" / "keys")
    old.new("alice")
    write_private(project / ".code3" / "keys" / "annotations.aead.key", os.urandom(32))
    write_private(project / ".code3" / "serve_token", b"an-old-serve-token-0123456789abcdef")
    write_private(project / ".code3" / "webhook_secret", b"0123456789abcdef" * 4)
    state = project / ".code3"
    return {p.name: p.read_bytes() for p in [*(state / "keys").iterdir(), state / "serve_token",
                                              state / "webhook_secret"]}


def migrate(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "code3", "account", "migrate", "--project", str(project)],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_the_old_layout_is_refused_until_migrate_moves_it_to_code3_home(tmp_path: Path) -> None:
    project = tmp_path / "p"
    before = old_layout(project)
    settings = Settings(project=project, identity="alice")
    with pytest.raises(Code3Error, match=r"\.code3/keys: keys and secrets are never read from a project") as no:
        build_services(settings)
    assert "code3 account migrate" in no.value.hint

    ran = migrate(project)
    assert ran.returncode == 0, ran.stderr
    moved = json.loads(ran.stdout)["moved"]
    assert len(moved) == 4 and all(Path(m["to"]).is_relative_to(settings.home_dir) for m in moved)
    assert not (project / ".code3" / "keys").exists()
    assert not (project / ".code3" / "serve_token").exists() and not (project / ".code3" / "webhook_secret").exists()
    assert (settings.keystore_dir / "alice.key").read_bytes() == before["alice.key"]
    for name in ("annotations.aead.key", "serve_token", "webhook_secret"):
        assert (settings.secrets_dir / name).read_bytes() == before[name], name
        assert (settings.secrets_dir / name).stat().st_mode & 0o777 == 0o600
    s = build_services(settings)  # the project opens now, as the same account
    try:
        assert s.signer.address == json.loads(before["alice.key"])["address"]
    finally:
        s.close()
    assert migrate(project).returncode == 0 and json.loads(migrate(project).stdout)["moved"] == []


def test_migrate_refuses_a_tracked_key_and_moves_nothing(tmp_path: Path) -> None:
    project = tmp_path / "p"
    old_layout(project)
    subprocess.run(["git", "add", "-f", ".code3/keys/alice.key"], cwd=project, check=True)
    ran = migrate(project)
    assert ran.returncode != 0
    assert "E_PRECONDITION" in ran.stderr and "git tracks it" in ran.stderr and "git rm --cached" in ran.stderr
    assert (project / ".code3" / "serve_token").exists(), "nothing moved"
    assert not Settings(project=project).keystore_dir.exists()


def test_migrate_refuses_a_linked_key_or_keys_directory(tmp_path: Path) -> None:
    project = tmp_path / "p"
    old_layout(project)
    elsewhere = tmp_path / "elsewhere.key"
    elsewhere.write_text("{}")
    (project / ".code3" / "keys" / "bob.key").symlink_to(elsewhere)
    ran = migrate(project)
    assert ran.returncode != 0 and "symbolic link" in ran.stderr and "remove the link" in ran.stderr
    assert not Settings(project=project).keystore_dir.exists(), "nothing moved"

    (project / ".code3" / "keys" / "bob.key").unlink()
    keys = project / ".code3" / "keys"
    keys.rename(tmp_path / "real-keys")
    keys.symlink_to(tmp_path / "real-keys")
    ran = migrate(project)
    assert ran.returncode != 0 and "symbolic link" in ran.stderr
    assert not Settings(project=project).keystore_dir.exists()


def test_migrate_never_overwrites_a_different_key_of_the_same_name(tmp_path: Path) -> None:
    project = tmp_path / "p"
    before = old_layout(project)
    settings = Settings(project=project)
    mine = Keystore(settings.keystore_dir).new("alice")  # another alice already in CODE3_HOME
    ran = migrate(project)
    assert ran.returncode != 0 and "E_EXISTS" in ran.stderr and "rename the project's file" in ran.stderr
    assert Keystore(settings.keystore_dir).load("alice").address == mine.address
    assert (project / ".code3" / "keys" / "alice.key").read_bytes() == before["alice.key"], "kept where it was"
    assert not (settings.secrets_dir / "serve_token").exists(), "nothing moved"

    (settings.keystore_dir / "alice.key").unlink()
    write_private(settings.keystore_dir / "alice.key", before["alice.key"], root=settings.keystore_dir)
    assert migrate(project).returncode == 0, "the same key already there is fine"
    assert not (project / ".code3" / "keys").exists()
