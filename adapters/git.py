"""Thin, explicit git invocations (no global git configuration is assumed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

AUTHOR = ["-c", "user.name=code3", "-c", "user.email=code3@localhost", "-c", "init.defaultBranch=main",
          "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"]


class GitError(RuntimeError):
    pass


def git(*args: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(["git", *AUTHOR, *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def commit_all(workdir: Path, message: str) -> str | None:
    """Commit every change in the working copy; None when there was nothing to commit."""
    git("add", "-A", cwd=workdir)
    if not git("status", "--porcelain", cwd=workdir):
        return None
    git("commit", "-q", "-m", message, cwd=workdir)
    return git("rev-parse", "HEAD", cwd=workdir)
