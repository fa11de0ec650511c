"""A repository cannot plant Code3's state: what `<project>/.code3/` holds is checked before it is used.

Keys and secrets live in CODE3_HOME (adapters.home), never in a project, so a `.code3/keys`,
`.code3/serve_token` or `.code3/webhook_secret` found there (an older layout, or planted by whoever wrote
the repository) is refused, not read. The state directory itself is refused when it is a link, another
user's or group/world-accessible (adapters.private_files.check_entry), or when git tracks anything in
it (asked once per process and project: a committed `.code3/` is someone else's state).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from adapters.private_files import check_entry, refuse

STATE = ".code3"
SECRET_NAMES = ("keys", "serve_token", "webhook_secret")  # what an older Code3 kept in <project>/.code3/
_untracked: set[Path] = set()  # projects whose .code3/ git was seen not to track, in this process


def tracked_state(project: Path) -> list[str]:
    """Paths under `.code3/` that git tracks in `project` (empty when it is no git work tree)."""
    try:
        found = subprocess.run(["git", "ls-files", "-z", "--", STATE], cwd=project, capture_output=True,
                               timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if found.returncode != 0:
        return []
    return [p for p in found.stdout.decode("utf-8", "replace").split("\0") if p]


def guard_project(project: Path) -> None:
    """Refuse the project's state when a repository could have planted it; each refusal says what to do.

    Most telling first: a linked `.code3` (never looked into), a key or secret in it, anything in it git
    tracks; then its owner, kind and mode."""
    state = project / STATE
    if state.is_symlink():
        check_entry(state, directory=True)  # refuses the link, naming the way out
    for name in SECRET_NAMES:
        if os.path.lexists(state / name):
            raise refuse(state / name, "keys and secrets are never read from a project: this is an older "
                         "Code3's layout, or a repository planted it",
                         "if it is your own, `code3 account migrate` moves it to CODE3_HOME (it refuses tracked, "
                         f"linked or foreign files); if not, delete it (`rm -r {state / name}`)")
    if project not in _untracked:
        tracked = tracked_state(project)
        if tracked:
            more = f" and {len(tracked) - 1} more" if len(tracked) > 1 else ""
            raise refuse(project / tracked[0], f"git tracks it{more}: Code3's state is never committed, and "
                         "state in a repository is someone else's", "`git rm -r --cached .code3` and commit, "
                         "add `/.code3/` to .git/info/exclude (`code3 init` does), and delete what you did not "
                         "create (`rm -r .code3`)")
        _untracked.add(project)
    if check_entry(state, directory=True) is None:
        return
    for entry in os.scandir(state):  # one level, cheap: a link, a FIFO or another user's file is refused here
        found = Path(entry.path)
        try:
            st = found.lstat()
        except FileNotFoundError:  # gone since the listing: SQLite removes a -wal/-shm file when its last user closes
            continue
        if entry.is_symlink() or not (entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False)) \
                or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            check_entry(found, directory=entry.is_dir(follow_symlinks=False))
