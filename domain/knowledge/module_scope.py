"""Which files are a module's API: its target minus other modules' files, minus tests, minus what is excluded.

One rule for every place that computes an API (diff's drift, the skeleton hashes that batch and prepare
record): a test file is not API — `*_test.go`, `test_*.py`, `*_test.py`, `*.test.<js|ts…>`, `*.spec.<js|ts…>`,
and anything under a `tests/` or `__tests__/` directory. Removing a `TestXxx` breaks no caller.

A module is a target (a file, or a directory with everything below it) minus the targets of the other
modules below it (another spec's `sourceTarget`: its files are that spec's, even the ones added since), or,
for a directory module made by `batch`, the directory's own files only (its subdirectories are modules of
their own). Include/exclude patterns (fnmatch, on project-relative paths) narrow it further.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TypeVar

from domain.knowledge.skeleton import FileSkeleton

T = TypeVar("T", bound=FileSkeleton)
TEST_DIRS = frozenset({"tests", "__tests__"})
_TEST_NAME = re.compile(r"(^test_.*\.py$|_test\.py$|_test\.go$|\.(test|spec)\.(js|jsx|mjs|cjs|ts|tsx|mts|cts)$)")


def is_test_file(path: str) -> bool:
    """A test file (see the module doc): its name, or a `tests/` / `__tests__/` directory on its path."""
    parts = path.split("/")
    return bool(_TEST_NAME.search(parts[-1])) or any(p in TEST_DIRS for p in parts[:-1])


def api_files(files: Iterable[T], tests: bool = False) -> list[T]:
    """The files whose exports are API (all of them when `tests` counts tests as API)."""
    return list(files) if tests else [f for f in files if not is_test_file(f.path)]


def normal(target: str) -> str:
    target = posixpath.normpath(target.strip() or ".")
    return "." if target in ("", ".", "./") else target.strip("/")


def below(path: str, target: str) -> bool:
    """`path` is `target` or lies under it ("." holds everything)."""
    return target == "." or path == target or path.startswith(target + "/")


@dataclass(frozen=True)
class Scope:
    target: str
    others: tuple[str, ...] = ()  # other modules' targets strictly below `target`
    directory_only: bool = False  # a batch module: the directory's own files, not its subdirectories'
    tests: bool = False  # test files count as API
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def of(cls, target: str, other_targets: Iterable[str] = (), *, directory_only: bool = False,
           tests: bool = False, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> Scope:
        target = normal(target)
        others = sorted({o for o in map(normal, other_targets) if o != target and below(o, target)})
        return cls(target, tuple(others), directory_only, tests, tuple(include), tuple(exclude))

    def reason_out(self, path: str) -> str | None:
        """Why `path` is not this module's API ("other module", "subdirectory", "test", "excluded"), or None."""
        if not below(path, self.target):
            return "outside"
        if any(below(path, other) for other in self.others):
            return "other module"
        if self.directory_only and self.target != path and posixpath.dirname(path) != (
                "" if self.target == "." else self.target):
            return "subdirectory"
        if not self.tests and is_test_file(path):
            return "test"
        if self.include and not any(fnmatchcase(path, p) for p in self.include):
            return "excluded"
        if any(fnmatchcase(path, p) for p in self.exclude):
            return "excluded"
        return None

    def files(self, files: Iterable[T]) -> list[T]:
        return [f for f in files if self.reason_out(f.path) is None]
