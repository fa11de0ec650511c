"""The state guard's one-level scan tolerates a file that goes between listing and looking: SQLite removes a
database's -wal and -shm files when their last user closes, which another process does at any moment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters import state_guard


def test_a_state_file_removed_between_the_listing_and_its_lstat_is_skipped(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / ".code3"
    state.mkdir(mode=0o700)
    os.chmod(state, 0o700)
    wal = state / "ledger.sqlite-wal"
    wal.write_bytes(b"")
    os.chmod(wal, 0o600)
    monkeypatch.setattr(state_guard, "tracked_state", lambda project: [])
    listed = list(os.scandir(state))  # the listing sees the file; the process that held it then closes
    wal.unlink()
    monkeypatch.setattr(state_guard.os, "scandir", lambda path: iter(listed))
    state_guard.guard_project(tmp_path)  # no FileNotFoundError: nothing to refuse in what is gone
