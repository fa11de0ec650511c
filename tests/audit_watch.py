"""A `sys.addaudithook` hook that records every file-system call under a watched project made while the
path resolver (adapters/paths.py) was not acting, and every one that reaches a watched "outside" directory
at all (a planted symlink followed out).

Audit hooks cannot be removed: the hook is installed once per test process, on first use, and does nothing
unless a `watching(...)` block is open.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

from adapters.paths import resolver_acting

# the events that name a path; their path arguments are every str/bytes/PathLike among the event's arguments
EVENTS = frozenset({"open", "os.listdir", "os.scandir", "os.rename", "os.remove", "os.rmdir", "os.mkdir",
                    "os.symlink", "os.link", "os.chmod", "os.chown", "os.truncate", "os.utime", "os.chdir",
                    "os.chflags", "os.mkfifo", "os.mknod", "shutil.rmtree", "shutil.copytree", "shutil.move",
                    "shutil.copyfile", "shutil.copymode", "shutil.copystat", "glob.glob", "sqlite3.connect"})


@dataclass
class Watch:
    root: str
    outside: str
    allowed: tuple[str, ...]
    seen: list[tuple[str, str, str]] = field(default_factory=list)  # (event, path, where)
    escaped: list[tuple[str, str, str]] = field(default_factory=list)
    vouched: int = 0


_state: dict[str, Watch | None] = {"watch": None}
_busy = threading.local()
_installed = False


def _under(path: str, base: str) -> str | None:
    if path == base:
        return "."
    if path.startswith(base + os.sep):
        return path[len(base) + 1:]
    return None


def _where() -> str:
    frames = [f for f in traceback.extract_stack()[:-3] if "/tests/" not in f.filename and "/site-packages/" not in
              f.filename and "/lib/python" not in f.filename]
    return " <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in frames[-3:][::-1])


def _hook(event: str, args: tuple[object, ...]) -> None:
    watch = _state["watch"]
    if watch is None or event not in EVENTS or getattr(_busy, "on", False):
        return
    _busy.on = True
    try:
        for arg in args:
            if isinstance(arg, bytes):
                arg = os.fsdecode(arg)
            elif isinstance(arg, os.PathLike):
                arg = os.fspath(arg)
                arg = os.fsdecode(arg) if isinstance(arg, bytes) else arg
            if not isinstance(arg, str) or not arg or "\x00" in arg:
                continue
            plain = os.path.normpath(os.path.join(os.getcwd(), arg))
            if event == "open" and isinstance(args[-1], int) and args[-1] & getattr(os, "O_NOFOLLOW", 0):
                # the last component is not followed (the open fails on a symlink): where it really points is
                # its directory's real path and its own name
                real = os.path.join(os.path.realpath(os.path.dirname(plain)), os.path.basename(plain))
            else:
                real = os.path.realpath(plain)
            if _under(plain, watch.outside) is not None or _under(real, watch.outside) is not None:
                watch.escaped.append((event, arg, _where()))
                continue
            rel = _under(plain, watch.root) or _under(real, watch.root)
            if rel is None:
                continue
            if resolver_acting():
                watch.vouched += 1
            elif not any(fnmatch(rel, pattern) for pattern in watch.allowed):
                watch.seen.append((event, rel, _where()))
    finally:
        _busy.on = False


@contextmanager
def watching(root: Path, outside: Path, allowed: tuple[str, ...]) -> Iterator[Watch]:
    """Record the file-system calls under `root` not made by the resolver (but those matching `allowed`,
    project-relative fnmatch patterns) and every call that reaches `outside`."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
    watch = Watch(os.path.realpath(root), os.path.realpath(outside), allowed)
    _state["watch"] = watch
    try:
        yield watch
    finally:
        _state["watch"] = None
