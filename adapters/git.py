"""Thin, explicit git invocations (no global git configuration is assumed)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from adapters.private_files import GIT_UMASK, private_dir

AUTHOR = ["-c", "user.name=code3", "-c", "user.email=code3@localhost", "-c", "init.defaultBranch=main",
          "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"]


class GitError(RuntimeError):
    pass


def git(*args: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(["git", *AUTHOR, *args], cwd=cwd, capture_output=True, text=True, check=False,
                          umask=GIT_UMASK)  # repositories and clones are state: owner-only
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


def read_ref(git_dir: Path, ref: str) -> str | None:
    """The commit a ref points at, read from the repository's files (no subprocess on hot paths)."""
    if not _safe_ref(git_dir, ref):
        return None
    loose = git_dir / ref
    if loose.is_file():
        return loose.read_text().strip()
    packed = git_dir / "packed-refs"
    if packed.is_file():
        for line in packed.read_text().splitlines():
            if line.endswith(" " + ref) and not line.startswith(("#", "^")):
                return line.split(" ", 1)[0]
    return None


def _safe_ref(git_dir: Path, ref: str) -> bool:
    """A ref name by git's rules, whose file lies inside the repository: a branch name is never a path out
    of it (`../../keys/alice.key` is no ref)."""
    if (not ref.startswith("refs/") or ".." in ref or "//" in ref or ref.endswith(("/", ".lock"))
            or any(c in ref for c in " ~^:?*[\\\x00\n\r\t\x7f") or "@{" in ref):
        return False
    return (git_dir / ref).resolve().is_relative_to(git_dir.resolve())


def current_branch(workdir: Path) -> str | None:
    """The branch checked out in a working copy, or None when HEAD is detached."""
    head = (workdir / ".git" / "HEAD").read_text().strip()
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else None


def init_bare(bare: Path, readme: str) -> None:
    """A bare repository whose `main` holds one commit with a README (what a forge creates)."""
    private_dir(bare.parent)
    git("init", "-q", "--bare", "-b", "main", str(bare))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "w"
        git("clone", "-q", str(bare), str(work))
        (work / "README.md").write_text(readme)
        commit_all(work, "Initial commit")
        git("push", "-q", "origin", "HEAD:main", cwd=work)


def merge_branch(base: Path, base_ref: str, head: Path, head_ref: str, message: str) -> tuple[str, str]:
    """`git merge --no-ff` of `head`'s branch into `base`'s, pushed back; (merge sha, merged head sha)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "w"
        git("clone", "-q", "--branch", base_ref, str(base), str(work))
        git("fetch", "-q", str(head), head_ref, cwd=work)
        head_sha = git("rev-parse", "FETCH_HEAD", cwd=work)
        git("merge", "-q", "--no-ff", "-m", message, "FETCH_HEAD", cwd=work)
        sha = git("rev-parse", "HEAD", cwd=work)
        git("push", "-q", "origin", f"HEAD:{base_ref}", cwd=work)
    return sha, head_sha
