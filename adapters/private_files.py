"""Files and directories only their owner can read: every piece of state Code3 keeps (`.code3/`, keys,
the SQLite files, the webhook secret, workspaces) is created through here, 0700 for directories and
0600 for files, whatever the process umask says.

Modes are given to `os.open`/`os.mkdir` at creation (no window where a file exists with a looser mode)
and an existing state path found looser is tightened. SQLite creates its `-wal`/`-shm` files with the
database file's own mode, so creating the database file 0600 first covers them. Git runs with umask
077 (`GIT_UMASK`) when it writes under the state directory.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger("code3.files")

DIR_MODE = 0o700
FILE_MODE = 0o600
GIT_UMASK = 0o077  # pass as `umask=` to subprocess for git commands that write state


def _tighten(path: Path, mode: int) -> None:
    """Drop group/other bits from `path` if it has any (only the owner can chmod; others' files are left)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o077:
        return
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        log.warning("%s is mode %o and owned by another user; leaving it as it is", path, st.st_mode & 0o777)
        return
    os.chmod(path, stat.S_IMODE(st.st_mode) & mode & ~0o077 or mode)
    log.info("tightened %s from %o to %o", path, st.st_mode & 0o777, path.stat().st_mode & 0o777)


def private_dir(path: Path) -> Path:
    """`path` and its missing parents created 0700; `path` itself tightened to 0700 if it already exists."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:  # created by another process a moment ago
            _tighten(directory, DIR_MODE)
        else:
            os.chmod(directory, DIR_MODE)  # mkdir's mode is masked by the umask
    _tighten(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """An existing or new (empty) file of mode 0600 in a 0700 directory; a looser existing one is tightened."""
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    except FileExistsError:
        _tighten(path, FILE_MODE)
    else:
        os.fchmod(fd, FILE_MODE)
        os.close(fd)
    return path


def write_private(path: Path, data: bytes, overwrite: bool = True) -> bool:
    """Write `data` to `path` (0600) atomically: a reader sees the old content or the new, never a part.

    With `overwrite=False` an existing file is kept (and False returned): the first writer wins even when
    several processes race, because the final step is `link`, which never replaces.
    """
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if overwrite:
            os.replace(tmp, path)
            return True
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        tmp.unlink(missing_ok=True)


def read_or_create_private(path: Path, make: bytes) -> bytes:
    """The content of `path`, written first as `make` if the file does not exist yet (race-safe)."""
    if not path.exists():
        write_private(path, make, overwrite=False)
    _tighten(path, FILE_MODE)
    return path.read_bytes()


def _walk(root: Path) -> Iterator[Path]:
    """`root` and everything under it, except the contents of git working copies (a workspace's clone holds
    the project's own sources, whose modes are the project's business; the clone's directory is checked)."""
    yield root
    for current, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            yield Path(current) / name
        dirs[:] = [d for d in dirs if not (Path(current) / d / ".git").exists()]


def loose_modes(*roots: Path, limit: int = 20) -> list[tuple[Path, int]]:
    """(path, mode) of files and directories under `roots` that group or others may access, at most `limit`
    (symbolic links and the contents of git working copies are not looked at)."""
    found: list[tuple[Path, int]] = []
    for root in roots:
        if not root.exists():
            continue
        for path in _walk(root):
            try:
                st = path.lstat()
            except FileNotFoundError:
                continue
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077:
                found.append((path, stat.S_IMODE(st.st_mode)))
                if len(found) >= limit:
                    return found
    return found
