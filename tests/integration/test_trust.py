"""Regressions of the trust review (issue 9) that need a real git repository; the others are
tests/unit/test_trust.py."""

from __future__ import annotations

from pathlib import Path

from adapters.git import init_bare, read_ref


def test_a_branch_name_never_reads_a_file_outside_the_repository(tmp_path: Path) -> None:
    bare = tmp_path / "repos" / "alice" / "app.git"
    init_bare(bare, "# app\n")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "alice.key").write_text("PRIVATE")
    assert read_ref(bare, "refs/heads/main") is not None
    assert read_ref(bare, "refs/heads/../../../../keys/alice.key") is None
    assert read_ref(bare, "../../../keys/alice.key") is None
