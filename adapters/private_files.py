"""Files and directories only their owner can read: every piece of state Code3 keeps (`.code3/`, keys,
the SQLite files, the webhook secret, workspaces) is created through here, 0700 for directories and
0600 for files, whatever the process umask says.

Modes are given to `os.open`/`os.mkdir` at creation (no window where a file exists with a looser mode)
and an existing state path that is a symbolic link, another user's, group/world-accessible or not the
expected kind of file is refused with the way out, never adopted or silently fixed (a repository can
plant any of those in its work tree). SQLite creates its `-wal`/`-shm` files with the
database file's own mode, so creating the database file 0600 first covers them. Git runs with umask
077 (`GIT_UMASK`) when it writes under the state directory.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from domain.errors import Code, Code3Error

log = logging.getLogger("code3.files")

DIR_MODE = 0o700
FILE_MODE = 0o600
GIT_UMASK = 0o077  # pass as `umask=` to subprocess for git commands that write state


def _uid() -> int | None:
    return os.getuid() if hasattr(os, "getuid") else None


def refuse(path: Path, found: str, hint: str) -> Code3Error:
    """The one refusal of unsafe state: what was found where, and what to do."""
    return Code3Error(Code.PRECONDITION, f"refusing Code3 state {path}: {found}", hint)


def check_entry(path: Path, directory: bool) -> os.stat_result | None:
    """The lstat of an existing state path that is safe to use, None when it does not exist.

    Refused (never adopted, never silently fixed): a symbolic link, another user's file, a file group or
    others may access, or something that is not the expected regular file or directory (a FIFO)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise refuse(path, "it is a symbolic link (state is never reached through a link: a repository could "
                     "point it anywhere)", f"remove the link (`rm {path}`); Code3 recreates the state it needs")
    uid = _uid()
    if uid is not None and st.st_uid != uid:
        raise refuse(path, f"it is owned by another user (uid {st.st_uid})",
                     "remove it, or `chown` it to yourself if it really is your own state")
    wanted = stat.S_ISDIR(st.st_mode) if directory else stat.S_ISREG(st.st_mode)
    if not wanted:
        raise refuse(path, f"it is not a {'directory' if directory else 'regular file'}",
                     f"remove it (`rm {path}`); Code3 recreates the state it needs")
    if st.st_mode & 0o077:
        mode = "700" if directory else "600"
        raise refuse(path, f"its mode {stat.S_IMODE(st.st_mode):o} lets group or others access it",
                     f"check that nobody else changed it, then `chmod {mode} {path}` (state is owner-only)")
    return st


def _root_of(path: Path) -> Path:
    """The first directory of `path` that belongs to Code3: its `.code3` component, else `path` itself."""
    parts = path.parts
    if ".code3" in parts:
        return Path(*parts[: parts.index(".code3") + 1])
    return path


def check_chain(path: Path, root: Path | None = None) -> None:
    """Every existing component from `root` (default: the `.code3` component) down to `path`'s parent is a
    safe directory: a symlinked `.code3` or `.code3/keys` never redirects a write."""
    base = root or _root_of(path)
    if path == base or not path.is_relative_to(base):
        return
    current = base
    check_entry(current, directory=True)
    for part in path.relative_to(base).parts[:-1]:
        current = current / part
        if check_entry(current, directory=True) is None:
            return


def private_dir(path: Path, root: Path | None = None) -> Path:
    """`path` and its missing parents created 0700 (whatever the umask); an existing one is checked, and
    refused if unsafe (a link, another user's, group/world-accessible): see `check_entry`."""
    base = root or _root_of(path)
    check_chain(path, base)
    missing: list[Path] = []
    current = path
    while not os.path.lexists(current):
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    if current.is_relative_to(base):  # what lies above Code3's own directory is the user's business
        check_entry(current, directory=True)
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:  # created by another process a moment ago
            check_entry(directory, directory=True)
        else:
            os.chmod(directory, DIR_MODE)  # mkdir's mode is masked by the umask
    return path


def private_file(path: Path, root: Path | None = None) -> Path:
    """An existing (checked: see `check_entry`) or new, empty file of mode 0600 in a 0700 directory."""
    private_dir(path.parent, root)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    except FileExistsError:
        check_entry(path, directory=False)
    else:
        os.fchmod(fd, FILE_MODE)
        os.close(fd)
    return path


def write_private(path: Path, data: bytes, overwrite: bool = True, root: Path | None = None) -> bool:
    """Write `data` to `path` (0600) atomically: a reader sees the old content or the new, never a part.

    With `overwrite=False` an existing file is kept (and False returned): the first writer wins even when
    several processes race, because the final step is `link`, which never replaces.
    """
    private_dir(path.parent, root)
    if overwrite:
        check_entry(path, directory=False)
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


def read_private(path: Path, root: Path | None = None) -> bytes | None:
    """The content of an existing, safe state file (see `check_entry`), None when there is none."""
    check_chain(path, root)
    if check_entry(path, directory=False) is None:
        return None
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def read_or_create_private(path: Path, make: bytes, root: Path | None = None) -> bytes:
    """The content of `path`, written first as `make` if the file does not exist yet (race-safe)."""
    found = read_private(path, root)
    if found is None:
        write_private(path, make, overwrite=False, root=root)
        found = read_private(path, root)
    assert found is not None
    return found


def _walk(root: Path) -> Iterator[Path]:
    """`root` and everything under it, except the contents of git working copies (a workspace's clone holds
    the project's own sources, whose modes are the project's business; the clone's directory is checked)."""
    yield root
    for current, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            yield Path(current) / name
        dirs[:] = [d for d in dirs if not (Path(current) / d / ".git").exists()]


def loose_modes(*roots: Path, limit: int = 20,
                allowed: Callable[[Path, os.stat_result], bool] | None = None) -> list[tuple[Path, int]]:
    """(path, mode) of files and directories under `roots` that group or others may access, at most `limit`
    (symbolic links, the contents of git working copies and what `allowed` accepts are not reported)."""
    found: list[tuple[Path, int]] = []
    for root in roots:
        if not root.exists():
            continue
        for path in _walk(root):
            try:
                st = path.lstat()
            except FileNotFoundError:
                continue
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077 and not (allowed and allowed(path, st)):
                found.append((path, stat.S_IMODE(st.st_mode)))
                if len(found) >= limit:
                    return found
    return found
