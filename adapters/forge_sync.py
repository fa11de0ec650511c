"""The project's code and its repository on the embedded forge, kept in step one way at a time.

`push` sends the project's committed history of the forge's default branch to the forge (fast-forward only:
what the forge has that the project lacks, merged pull requests, is never overwritten); `pull` fast-forwards
the project's branch to the forge's. The forge follows the project only when asked: at `code3 init` and on
`code3 forge push`. Uncommitted changes in the working tree are never sent. A forge branch that still holds
only the README a forge creates (init of a project with no commit yet) is replaced by the first push, as long
as nobody forked it.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from adapters.git import AUTHOR, GitError, read_ref
from adapters.local_forge import LocalForge
from adapters.private_files import GIT_UMASK
from domain.errors import Code, Code3Error
from domain.values import parse_branch

PLACEHOLDER_MESSAGE = "Initial commit"  # adapters.git.init_bare's one commit


@dataclass(frozen=True)
class Synced:
    """What a push or pull did: `state` is `pushed`, `pulled`, `created`, `up-to-date`, `forge-ahead` (push:
    the forge has commits to pull first), `project-ahead` (pull: commits to push) or `no-commit`."""

    repo: str
    branch: str
    state: str
    before: str | None
    after: str | None
    commits: int = 0  # how many commits the push or pull moved (or the other side is ahead by)


def _user_git(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git in the user's own repository, with the user's umask and configuration (its objects are theirs)."""
    return subprocess.run(["git", *args], cwd=project, capture_output=True, text=True, check=False)


def current_branch(project: Path) -> str | None:
    """The branch checked out in the project (also when it has no commit yet), None when HEAD is detached."""
    found = _user_git(project, "symbolic-ref", "-q", "--short", "HEAD")
    return found.stdout.strip() or None if found.returncode == 0 else None


def branch_sha(project: Path, branch: str) -> str | None:
    found = _user_git(project, "rev-parse", "-q", "--verify", f"refs/heads/{branch}^{{commit}}")
    return found.stdout.strip() or None if found.returncode == 0 else None


def _has_commit(where: Path, sha: str) -> bool:
    return _user_git(where, "cat-file", "-e", f"{sha}^{{commit}}").returncode == 0


def _is_ancestor(where: Path, old: str, new: str) -> bool:
    return _user_git(where, "merge-base", "--is-ancestor", old, new).returncode == 0


def _count(where: Path, old: str, new: str) -> int:
    found = _user_git(where, "rev-list", "--count", f"{old}..{new}")
    return int(found.stdout.strip() or 0) if found.returncode == 0 else 0


def _is_placeholder(bare: Path, sha: str) -> bool:
    """The forge branch holds only the one README commit a forge creates (nothing anyone would lose)."""
    root = _user_git(bare, "rev-list", "--max-parents=0", "--count", sha)
    total = _user_git(bare, "rev-list", "--count", sha)
    shown = _user_git(bare, "show", "-s", "--format=%s%n%an", sha)
    files = _user_git(bare, "ls-tree", "--name-only", sha)
    return (total.stdout.strip() == "1" and root.stdout.strip() == "1"
            and shown.stdout.splitlines() == [PLACEHOLDER_MESSAGE, "code3"]
            and files.stdout.split() == ["README.md"])


def _diverged(repo: str, branch: str, bare: Path) -> Code3Error:
    return Code3Error(Code.PRECONDITION, f"your branch {branch} and {repo}'s {branch} on the embedded forge have "
                      "diverged: each has commits the other lacks, and the forge takes fast-forwards only",
                      f"merge the forge's branch into yours (`git pull --no-rebase {bare} {branch}`), then "
                      "`code3 forge push`")


def create_or_push(forge: LocalForge, repo: str, project: Path) -> Synced:
    """`code3 init`'s step: a new forge repository starts with the project's history of its current branch
    (that branch becomes the repository's default); an existing one is pushed to (see `push`). A project
    with no commit yet gets a README-only repository, replaced by the first `code3 forge push`."""
    if forge.has_repo(repo):
        return push(forge, repo, project)
    branch = current_branch(project) or "main"
    sha = branch_sha(project, branch)
    if sha is None:
        forge.create_repo(repo, branch=branch)
        return Synced(repo, branch, "no-commit", None, forge.branch_sha(repo, branch))
    try:
        forge.import_repo(repo, project, branch)
    except GitError as exc:  # e.g. a shallow clone, whose history git will not push
        raise Code3Error(Code.PRECONDITION, f"git could not push {branch} to the embedded forge: {str(exc)[:300]}",
                         "a shallow clone needs its history first (`git fetch --unshallow`); then run code3 init "
                         "again") from None
    return Synced(repo, branch, "created", None, sha, _count_all(project, sha))


def _count_all(project: Path, sha: str) -> int:
    found = _user_git(project, "rev-list", "--count", sha)
    return int(found.stdout.strip() or 0) if found.returncode == 0 else 0


def push(forge: LocalForge, repo: str, project: Path) -> Synced:
    """Fast-forward the forge's default branch to the project's branch of that name. Refused (E_PRECONDITION,
    nothing changed) when they diverged or the project has no such branch; `forge-ahead` (nothing pushed) when
    the forge has commits the project lacks and the project none the forge lacks."""
    info = forge.get_repo(repo)
    branch, bare = parse_branch(info.default_branch), forge.repo_path(repo)
    local = branch_sha(project, branch)
    if local is None:
        raise Code3Error(Code.PRECONDITION, f"your repository has no commit on {branch}, the default branch of "
                         f"{repo} on the embedded forge", f"commit your code on {branch} (`git switch {branch}`), "
                         "then `code3 forge push`")
    remote = read_ref(bare, f"refs/heads/{branch}")
    if remote == local:
        return Synced(repo, branch, "up-to-date", remote, local)
    replace = False
    if remote is not None and not (_has_commit(project, remote) and _is_ancestor(project, remote, local)):
        if _has_commit(bare, local) and _is_ancestor(bare, local, remote):
            return Synced(repo, branch, "forge-ahead", remote, local, _count(bare, local, remote))
        replace = _is_placeholder(bare, remote) and not forge.forks_of(repo)
        if not replace:
            raise _diverged(repo, branch, bare)
    moved = _count(project, remote, local) if remote and not replace else _count_all(project, local)
    # forced only over the forge's own README commit, and only if the branch still points at it
    lease = [f"--force-with-lease=refs/heads/{branch}:{remote}"] if replace else []
    proc = subprocess.run(["git", *AUTHOR, "push", "-q", *lease, str(bare), f"{local}:refs/heads/{branch}"],
                          cwd=project, capture_output=True, text=True, check=False, umask=GIT_UMASK)
    if proc.returncode != 0:  # a push that raced ours moved the branch: the next run sees where it stands
        raise Code3Error(Code.PRECONDITION, f"the embedded forge refused the push to {repo}'s {branch}: "
                         f"{proc.stderr.strip()[:300]}", "run `code3 forge push` again; if it says the branches "
                         "diverged, merge the forge's branch first")
    return Synced(repo, branch, "pushed", remote, local, moved)


def pull(forge: LocalForge, repo: str, project: Path) -> Synced:
    """Fast-forward the project's branch of the forge's default branch's name to the forge's (merged pull
    requests). The checked-out branch is fast-forwarded with `git merge --ff-only`, so git refuses what would
    overwrite uncommitted changes (untracked files in the way are named, with what to do with them); refused
    (E_PRECONDITION) when the branches diverged."""
    info = forge.get_repo(repo)
    branch, bare = parse_branch(info.default_branch), forge.repo_path(repo)
    remote = read_ref(bare, f"refs/heads/{branch}")
    local = branch_sha(project, branch)
    if remote is None or remote == local:
        return Synced(repo, branch, "up-to-date", local, local)
    fetched = _user_git(project, "fetch", "-q", "--no-tags", str(bare), f"refs/heads/{branch}")
    if fetched.returncode != 0:
        raise Code3Error(Code.PRECONDITION, f"git could not fetch {repo}'s {branch} from the embedded forge: "
                         f"{fetched.stderr.strip()[:300]}", "check the repository with `git status`, then try again")
    if local is not None and not _is_ancestor(project, local, remote):
        if _is_ancestor(project, remote, local):
            return Synced(repo, branch, "project-ahead", local, local, _count(project, remote, local))
        raise _diverged(repo, branch, bare)
    moved = _count(project, local, remote) if local else _count_all(project, remote)
    if current_branch(project) == branch:
        merged = _user_git(project, "merge", "-q", "--ff-only", remote)
        if merged.returncode != 0:
            in_the_way = _untracked_in_the_way(project, local, remote)
            if in_the_way:
                raise _untracked_refusal(project, branch, remote, in_the_way)
            raise Code3Error(Code.PRECONDITION, f"git could not fast-forward {branch} to the forge's "
                             f"{remote[:12]}: {merged.stderr.strip()[:300]}",
                             "commit or stash your changes to the files it names, then `code3 forge pull` again")
    else:
        updated = _user_git(project, "update-ref", f"refs/heads/{branch}", remote, local or "")
        if updated.returncode != 0:
            raise Code3Error(Code.PRECONDITION, f"git could not move {branch} to {remote[:12]}: "
                             f"{updated.stderr.strip()[:300]}", "run `code3 forge pull` again")
    return Synced(repo, branch, "pulled", local, remote, moved)


SHOWN_IN_THE_WAY = 20  # untracked files a refused pull names at most (each in full; the rest are counted)


def _untracked_in_the_way(project: Path, local: str | None, remote: str) -> list[str]:
    """The untracked files of the work tree that the fast-forward to `remote` would overwrite (git refuses then):
    files `remote` adds that exist here untracked. Computed, not read from git's message, which is translated
    and cut."""
    added = (_user_git(project, "diff", "-z", "--name-only", "--no-renames", "--diff-filter=A", local, remote)
             if local else _user_git(project, "ls-tree", "-r", "-z", "--name-only", remote))
    candidates = [p for p in added.stdout.split("\0") if p and os.path.lexists(project / p)]
    if added.returncode != 0 or not candidates:
        return []
    found = _user_git(project, "--literal-pathspecs", "ls-files", "-z", "--others", "--exclude-standard", "--",
                      *candidates)
    return sorted(p for p in found.stdout.split("\0") if p) if found.returncode == 0 else []


def _untracked_refusal(project: Path, branch: str, remote: str, paths: list[str]) -> Code3Error:
    """A refusal naming every untracked file in the way (up to SHOWN_IN_THE_WAY, never cut mid-path), how many are
    byte-for-byte what the merge brings, and what works: committing them would make the branches diverge."""
    same = _identical(project, remote, paths)
    ordered = [p for p in paths if p not in same] + [p for p in paths if p in same]  # what differs matters most
    shown = ", ".join(ordered[:SHOWN_IN_THE_WAY]) + (f" and {len(paths) - SHOWN_IN_THE_WAY} more"
                                                     if len(paths) > SHOWN_IN_THE_WAY else "")
    alike = ("all of them identical to the merge's" if len(same) == len(paths)
             else f"{len(same)} of them identical to the merge's" if same else "none identical to the merge's")
    if len(same) == len(paths):
        todo = ("they hold exactly what the merge brings: delete them (nothing is lost), then `code3 forge pull` "
                "again")
    else:
        todo = ("when they are your uncommitted copies of what the merge brings (the specs you published and a "
                "worker's PR carried, say), move them aside or delete them, then `code3 forge pull` again and compare "
                "what you moved aside with what came")
    return Code3Error(Code.PRECONDITION, f"the forge's {branch} ({remote[:12]}) brings {len(paths)} file(s) that are "
                      f"untracked in your working tree ({alike}), and git will not overwrite them"
                      f"{' (those that differ first)' if same and len(same) < len(paths) else ''}: {shown}",
                      f"{todo}; committing them instead makes your branch and the forge's diverge")


def _identical(project: Path, remote: str, paths: list[str]) -> set[str]:
    """Which of `paths` hold here exactly the bytes `remote` has for them (two git calls, whatever their number)."""
    listed = _user_git(project, "--literal-pathspecs", "ls-tree", "-r", "-z", remote, "--", *paths)
    theirs: dict[str, str] = {}
    for entry in listed.stdout.split("\0") if listed.returncode == 0 else []:
        meta, _, path = entry.partition("\t")  # "<mode> <type> <object>\t<path>"
        if path:
            theirs[path] = meta.split(" ")[-1]
    plain = [p for p in paths if "\n" not in p]  # hash-object reads one path a line
    mine = subprocess.run(["git", "hash-object", "--stdin-paths"], cwd=project, input="".join(f"{p}\n" for p in plain),
                          capture_output=True, text=True, check=False)
    if mine.returncode != 0:
        return set()
    return {p for p, sha in zip(plain, mine.stdout.split(), strict=False) if theirs.get(p) == sha}
