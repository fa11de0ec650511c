"""Atomic writes of generated artifacts: a feature directory is always its old or its new version.

A write stages the complete new directory beside the old one (`.NAME.tmp`: a copy of the old one with
the new files laid over it, fsynced), seals it (renamed to `.NAME.new`: complete from then on), moves
the old one aside (`.NAME.old`), renames the new one in, and removes the old one. A crash at any point
leaves at most these hidden siblings; `recover` (run by every write and read of the directory, under
the same lock) rolls an unsealed write back and a sealed one forward, so a reader after it sees either
the whole old version or the whole new one. The lock is `flock` on the parent directory itself: no
lock file lands in the user's tree, and several processes (several `specify` calls at once) queue.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from domain.errors import Code, Code3Error


def _no_crash(step: str) -> None:
    """Called after every step of a write; the crash test replaces it with one that exits mid-write."""


checkpoint: Callable[[str], None] = _no_crash


def inside(root: Path, relative: str) -> Path:
    """`relative` resolved under `root`; a path that escapes the project is a validation error."""
    candidate = (root / relative).resolve()
    if Path(relative).is_absolute() or not candidate.is_relative_to(root.resolve()):
        raise Code3Error(Code.VALIDATION, f"path {relative!r} is outside the project",
                         "pass a path relative to the project root, such as specs/001-name/spec.md")
    return candidate


@contextmanager
def locked(directory: Path) -> Iterator[Path]:
    """Hold an exclusive lock on `directory` (created if missing) across processes; not reentrant."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield directory
    finally:
        os.close(fd)  # closing releases the lock


def _siblings(parent: Path, name: str) -> tuple[Path, Path, Path]:
    return parent / f".{name}.tmp", parent / f".{name}.new", parent / f".{name}.old"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def recover(parent: Path, name: str) -> None:
    """Finish or undo a write of `parent/name` that a crash interrupted (call it under `locked(parent)`)."""
    tmp, new, old = _siblings(parent, name)
    final = parent / name
    if tmp.exists():  # never sealed: the write had not started to touch the directory
        shutil.rmtree(tmp)
    if new.exists():  # sealed and complete: roll forward
        if final.exists() and not old.exists():
            os.rename(final, old)
        os.rename(new, final)
        _fsync_dir(parent)
    if old.exists():
        if final.exists():
            shutil.rmtree(old)
        else:  # cannot happen after the roll-forward above; kept so no state loses the old version
            os.rename(old, final)
        _fsync_dir(parent)


def replace_dir(parent: Path, name: str, files: dict[str, str], *, must_be_new: bool = False) -> Path:
    """Make `parent/name` hold `files` (paths relative to it) over what it held, all or nothing.

    The caller holds `locked(parent)`. With `must_be_new`, an existing directory is E_EXISTS.
    """
    recover(parent, name)
    final = parent / name
    if must_be_new and final.exists():
        raise Code3Error(Code.EXISTS, f"{name} already exists",
                         "choose another feature_id or pass allow_overwrite=true")
    tmp, new, old = _siblings(parent, name)
    if final.exists():
        shutil.copytree(final, tmp, symlinks=True)
    else:
        tmp.mkdir()
    checkpoint("staged the old version")
    for rel, text in files.items():
        target = tmp / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        checkpoint(f"wrote {rel}")
    for directory in sorted({p.parent for p in tmp.rglob("*")} | {tmp}, key=lambda p: len(p.parts), reverse=True):
        _fsync_dir(directory)
    os.rename(tmp, new)
    _fsync_dir(parent)
    checkpoint("sealed the new version")
    if final.exists():
        os.rename(final, old)
        checkpoint("moved the old version aside")
    os.rename(new, final)
    _fsync_dir(parent)
    checkpoint("renamed the new version in")
    if old.exists():
        shutil.rmtree(old)
        checkpoint("removed the old version")
    return final


def write_files(directory: Path, files: dict[str, str]) -> None:
    """Write all `files` into `directory` (over its other files) or none, under the parent's lock."""
    with locked(directory.parent):
        replace_dir(directory.parent, directory.name, files)


def create_dir_atomically(parent: Path, name: str, files: dict[str, str]) -> Path:
    """Create `parent/name` holding `files` in one rename, failing with E_EXISTS if it exists."""
    with locked(parent):
        return replace_dir(parent, name, files, must_be_new=True)
