"""The one resolver for every path a tool reads or writes.

A path is accepted only when, after resolving symlinks, it lies inside the project root, outside the
state directory (`.code3/`: the event store, keys, tokens), outside `.git/` and any keystore, is not a
key or secret file, and (for reads) is a regular file of bounded size. Refusals carry a `reason` so
each seed family can answer in its own error codes (CodeNexus -32001 for "forbidden", …).

Reads, writes and walks of project files happen here too (`read_text`, `write_text`, `walk`, `scan`):
while the resolver acts it marks a context variable (`resolver_acting`), so a test's audit hook can tell
its file-system calls from any other code's that reaches the project by a path of its own.
"""

from __future__ import annotations

import contextvars
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from domain.errors import Code, Code3Error
from domain.values import parse_project_path

T = TypeVar("T")

MAX_FILE_BYTES = 5 * 1024 * 1024
SECRET_NAMES = frozenset({"webhook_secret", "serve_token", ".env", "id_rsa", "id_ed25519", ".netrc", ".pgpass"})
SECRET_SUFFIXES = (".key", ".pem", ".p12", ".pfx", ".keystore")

_CODES = {"invalid": Code.VALIDATION, "outside": Code.UNAUTHORIZED, "forbidden": Code.UNAUTHORIZED,
          "not_found": Code.NOT_FOUND, "not_regular": Code.VALIDATION, "too_large": Code.VALIDATION}


_ACTING: contextvars.ContextVar[bool] = contextvars.ContextVar("code3_resolver_acting", default=False)
STATE_NAMES = frozenset({".code3", ".git"})  # never walked into, at any depth (nested clones, submodules)


def resolver_acting() -> bool:
    """True while the resolver itself touches the file system (read by the resolver-only audit test)."""
    return _ACTING.get()


@contextmanager
def _acting() -> Iterator[None]:
    token = _ACTING.set(True)
    try:
        yield
    finally:
        _ACTING.reset(token)


def in_context(fn: Callable[..., T]) -> Callable[..., T]:
    """`fn` bound to a copy of the caller's context: a worker thread running it acts for the resolver too."""
    context = contextvars.copy_context()
    return lambda *args, **kwargs: context.copy().run(fn, *args, **kwargs)


class PathRefused(Code3Error):
    """`reason`: invalid | outside | forbidden | not_found | not_regular | too_large."""

    def __init__(self, reason: str, message: str, hint: str) -> None:
        super().__init__(_CODES[reason], message, hint)
        self.reason = reason


@dataclass(frozen=True)
class ProjectPaths:
    root: Path
    private_dirs: tuple[Path, ...] = field(default=())  # besides <root>/.code3 and <root>/.git
    max_bytes: int = MAX_FILE_BYTES

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", self.root.resolve())
        private = (self.root / ".code3", self.root / ".git", *self.private_dirs)
        object.__setattr__(self, "private_dirs", tuple(p.resolve() for p in private))

    def resolve(self, value: object, *, kind: str = "file", must_exist: bool = True,
                allow_absolute: bool = False) -> Path:
        """The real path of `value` (relative to the root; absolute only with `allow_absolute`).

        `kind`: "file" (a regular file, bounded size), "dir", or "any"; with `must_exist=False` the
        path may be missing (a file about to be written) but its parent chain must still stay inside.
        """
        if allow_absolute and isinstance(value, str) and os.path.isabs(value) and "\x00" not in value:
            try:
                value = Path(value).resolve().relative_to(self.root).as_posix()
            except ValueError:
                raise PathRefused("outside", f"{value!r} is outside the project root",
                                  f"pass a path inside {self.root}") from None
        try:
            relative = parse_project_path(value)
        except Code3Error as exc:
            raise PathRefused("invalid", exc.message, exc.hint) from None
        if any(len(part.encode()) > 255 for part in relative.split("/")):
            raise PathRefused("invalid", f"a part of {relative[:60]!r}... is longer than 255 bytes",
                              "pass a path whose file and directory names fit the file system (255 bytes each)")
        try:
            with _acting():
                return self._checked(relative, kind, must_exist)
        except OSError as exc:  # a name the file system refuses, a loop of symlinks, an unreadable directory
            raise PathRefused("invalid", f"{relative[:80]!r} cannot be used as a path ({exc.strerror or exc})",
                              "pass an ordinary path inside the project") from None

    def _checked(self, relative: str, kind: str, must_exist: bool) -> Path:
        real = (self.root / relative).resolve()
        if not real.is_relative_to(self.root):
            raise PathRefused("outside", f"{relative!r} leads outside the project root (through a symlink)",
                              "pass a path whose target lies inside the project")
        if any(real.is_relative_to(p) for p in self.private_dirs) or _is_secret(real):
            raise PathRefused("forbidden", f"{relative!r} is private (state directory, keys or secrets)",
                              "Code3 never reads or writes its state, keys or secret files through a tool")
        if not real.exists():
            if must_exist:
                raise PathRefused("not_found", f"{relative!r} does not exist", "check the path (relative to "
                                  "the project root)")
            return real
        if kind == "file" and not real.is_file():
            raise PathRefused("not_regular", f"{relative!r} is not a regular file", "pass a file's path")
        if kind == "dir" and not real.is_dir():
            raise PathRefused("not_regular", f"{relative!r} is not a directory", "pass a directory's path")
        if kind == "file" and real.stat().st_size > self.max_bytes:
            raise PathRefused("too_large", f"{relative!r} is larger than {self.max_bytes} bytes",
                              "pass a smaller file")
        return real

    def relative(self, real: Path) -> str:
        """The project-relative posix form of a resolved path."""
        return real.resolve().relative_to(self.root).as_posix()

    def read_bytes(self, value: object) -> bytes:
        """A regular file's content; the file is opened without following a symlink swapped in since."""
        real = self.resolve(value)
        try:
            with _acting():
                fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
                with os.fdopen(fd, "rb") as fh:
                    return fh.read(self.max_bytes)
        except OSError as exc:
            raise PathRefused("invalid", f"{value!r} cannot be read ({exc.strerror or type(exc).__name__})",
                              "pass an ordinary file inside the project") from None

    def open_binary(self, value: object) -> BinaryIO:
        """A regular file opened for reading (to stream it), without following a symlink swapped in since."""
        real = self.resolve(value)
        try:
            with _acting():
                return os.fdopen(os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb")
        except OSError as exc:
            raise PathRefused("invalid", f"{value!r} cannot be read ({exc.strerror or type(exc).__name__})",
                              "pass an ordinary file inside the project") from None

    def read_text(self, value: object) -> str:
        """A regular text file's content (UTF-8); binary content is refused, not decoded with losses."""
        data = self.read_bytes(value)
        if b"\x00" in data[:8192]:
            raise PathRefused("not_regular", f"{value!r} is a binary file", "pass a text file")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise PathRefused("not_regular", f"{value!r} is not UTF-8 text", "pass a UTF-8 text file") from None

    def write_text(self, value: object, text: str) -> Path:
        """Write a project file atomically, after the resolver accepted its path (never through a symlink out,
        never into the state directory or a key); missing parent directories are created."""
        real = self.resolve(value, must_exist=False)
        from adapters.atomic_write import write_text_atomic

        with _acting():
            write_text_atomic(real, text)
        return real

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a file-system step that the resolver vouches for (a lock on a resolved directory, the code
        parser's scan of a resolved target, which walks by `walk`'s rules: no symlink followed, the state
        directory and `.git` pruned, key files never read); its worker threads act for it through
        `in_context`."""
        with _acting():
            return fn(*args, **kwargs)

    @contextmanager
    def locked_dir(self, value: object) -> Iterator[Path]:
        """A project directory (created if missing) resolved, then locked across processes for a write of its
        entries (adapters/files.py's atomic directory swaps), which run inside the block as the resolver's
        own acts. A directory that leads out of the project or into its state is refused before any write."""
        real = self.resolve(value, kind="dir", must_exist=False)
        from adapters.files import locked

        with _acting(), locked(real):
            yield real

    def files_in(self, value: object = ".", *, suffix: str = "") -> list[str]:
        """The project-relative paths of the regular files directly in a directory whose name ends with
        `suffix`, sorted (a symlink is never listed, secret files never are); [] for a missing directory."""
        top = self.resolve(value, kind="dir")
        try:
            with _acting(), os.scandir(top) as it:
                entries = [e for e in it if e.name.endswith(suffix) and e.is_file(follow_symlinks=False)]
        except OSError:
            return []
        return sorted(Path(e.path).relative_to(self.root).as_posix() for e in entries if not _is_secret(Path(e.path)))

    def walk(self, value: object = ".", *, suffix: str = "") -> Iterator[str]:
        """The project-relative paths of the regular files under a directory (sorted, depth first) whose
        name ends with `suffix`: symlinks are never followed (a symlinked directory could lead out of the
        project or loop), the state directory, `.git` and secret files are skipped, unreadable directories
        are passed over."""
        top = self.resolve(value, kind="dir")
        stack = [top]
        while stack:
            directory = stack.pop()
            try:
                with _acting(), os.scandir(directory) as it:
                    entries = sorted(it, key=lambda e: e.name, reverse=True)
            except OSError:
                continue
            for entry in entries:
                try:
                    mode = entry.stat(follow_symlinks=False).st_mode
                except OSError:
                    continue
                path = Path(entry.path)
                if stat.S_ISDIR(mode):
                    if entry.name not in STATE_NAMES and not any(path == p for p in self.private_dirs):
                        stack.append(path)
                elif stat.S_ISREG(mode) and entry.name.endswith(suffix) and not _is_secret(path):
                    yield path.relative_to(self.root).as_posix()

def _is_secret(path: Path) -> bool:
    return path.name in SECRET_NAMES or path.name.endswith(SECRET_SUFFIXES)
