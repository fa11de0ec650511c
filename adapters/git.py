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


def commit_all(workdir: Path, message: str, author: tuple[str, str] | None = None) -> str | None:
    """Commit every change in the working copy; None when there was nothing to commit. `author`: (name, email)
    of the person the commit is theirs (as author and committer), instead of Code3's own placeholder."""
    git("add", "-A", cwd=workdir)
    if not git("status", "--porcelain", cwd=workdir):
        return None
    who = ["-c", f"user.name={author[0]}", "-c", f"user.email={author[1]}"] if author else []
    git(*who, "commit", "-q", "-m", message, cwd=workdir)  # the later -c wins over AUTHOR's
    return git("rev-parse", "HEAD", cwd=workdir)


def configured_author(cwd: Path) -> tuple[str, str] | None:
    """The user's own git identity (user.name and user.email from their git configuration, read without Code3's
    placeholder), or None when either is unset."""
    found = []
    for key in ("user.name", "user.email"):
        proc = subprocess.run(["git", "config", "--get", key], cwd=cwd, capture_output=True, text=True, check=False)
        found.append(proc.stdout.strip() if proc.returncode == 0 else "")
    return (found[0], found[1]) if all(found) else None


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


def init_bare(bare: Path, readme: str, branch: str = "main") -> None:
    """A bare repository whose `branch` holds one commit with a README (what a forge creates)."""
    private_dir(bare.parent)
    git("init", "-q", "--bare", "-b", branch, str(bare))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "w"
        git("clone", "-q", str(bare), str(work))
        (work / "README.md").write_text(readme)
        commit_all(work, "Initial commit")
        git("push", "-q", "origin", f"HEAD:refs/heads/{branch}", cwd=work)


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
