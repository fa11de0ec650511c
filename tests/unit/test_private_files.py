"""State files are refused, never adopted or silently fixed, when a repository could have planted them:
a link anywhere from `.code3` down, another user's file, a group/world-accessible one, or one that is not
the expected kind (a FIFO). Each refusal is E_PRECONDITION naming the path and what to do."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from adapters.private_files import private_dir, private_file, read_or_create_private, read_private, write_private
from domain.errors import Code, Code3Error


def refusal(action) -> Code3Error:  # type: ignore[no-untyped-def]
    with pytest.raises(Code3Error) as caught:
        action()
    assert caught.value.code is Code.PRECONDITION and caught.value.message.startswith("refusing Code3 state ")
    return caught.value


def test_a_link_from_code3_down_is_never_written_through(tmp_path: Path) -> None:
    published = tmp_path / "published"
    published.mkdir(mode=0o700)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / ".code3").symlink_to(published)
    error = refusal(lambda: write_private(tmp_path / "p" / ".code3" / "forge" / "x", b"secret"))
    assert "symbolic link" in error.message and "remove the link" in error.hint
    state = tmp_path / "q" / ".code3"
    private_dir(state)
    (state / "forge").symlink_to(published)
    refusal(lambda: private_file(state / "forge" / "forge.sqlite"))
    assert list(published.iterdir()) == [], "nothing was written where the links point"


def test_a_loose_file_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / ".code3" / "events.sqlite"
    private_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    path.chmod(0o644)
    error = refusal(lambda: private_file(path))
    assert "chmod 600" in error.hint and stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_fifo_where_a_state_file_should_be_is_refused_without_blocking(tmp_path: Path) -> None:
    state = private_dir(tmp_path / ".code3")
    os.mkfifo(state / "webhook_secret", 0o600)
    error = refusal(lambda: read_or_create_private(state / "webhook_secret", b"new"))
    assert "not a regular file" in error.message
    assert read_private(state / "missing") is None


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="chown to another user needs root")
def test_another_users_file_is_refused(tmp_path: Path) -> None:
    path = private_file(tmp_path / ".code3" / "ledger.sqlite")
    os.chown(path, 4242, 4242)
    error = refusal(lambda: read_private(path))
    assert "owned by another user (uid 4242)" in error.message
