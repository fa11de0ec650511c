"""The CodeParser port: source files → skeletons (exports, imports, parse errors)."""

from __future__ import annotations

import os
from typing import Protocol

from domain.skeleton import FileSkeleton, MergedSkeleton


class CodeParser(Protocol):
    """Builds skeletons. Paths are project-relative posix strings; `root` is the project root.

    Implementations never raise on bad source: syntax errors land in `FileSkeleton.parse_errors`.
    They raise FileNotFoundError for a path that does not exist and ValueError for one outside the root;
    parse_file also raises ValueError for an unsupported language or a file over the size limit (a scan
    skips and counts those instead, in `MergedSkeleton.skipped`).
    """

    def parse_file(self, root: str | os.PathLike[str], rel_path: str) -> FileSkeleton: ...

    def scan(self, root: str | os.PathLike[str], target: str = ".") -> MergedSkeleton: ...
