"""The CodeParser port: source files → skeletons (exports, imports, parse errors)."""

from __future__ import annotations

import os
from typing import Protocol

from domain.knowledge.skeleton import FileSkeleton, MergedSkeleton


class OutsideRoot(ValueError):
    """A path that resolves outside the project root."""


class UnsupportedLanguage(ValueError):
    """A file whose extension names no supported language (parse_file only; a scan counts it)."""


class FileTooLarge(ValueError):
    """A file over the parser's size limit (parse_file only; a scan counts it as "oversized")."""


class CodeParser(Protocol):
    """Builds skeletons. Paths are project-relative posix strings; `root` is the project root.

    Implementations never raise on bad source: syntax errors land in `FileSkeleton.parse_errors`.
    They raise FileNotFoundError for a path that does not exist and OutsideRoot for one outside the root;
    parse_file also raises UnsupportedLanguage or FileTooLarge (a scan skips and counts those instead, in
    `MergedSkeleton.skipped`). All three are ValueErrors.
    """

    def parse_file(self, root: str | os.PathLike[str], rel_path: str) -> FileSkeleton: ...

    def scan(self, root: str | os.PathLike[str], target: str = ".") -> MergedSkeleton: ...
