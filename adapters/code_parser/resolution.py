"""Imports → project paths (project-relative, posix; None when the target is not in the project), the machinery
every language's resolver shares: the memoised file system view of one scan (ProjectIndex), path helpers, and
`resolve_imports`, which sets each import's `resolved` with its language's resolver.

How each language resolves is its own module's (adapters/code_parser/languages/, `resolve_import`); C# and Swift
keep only their import text.
"""

from __future__ import annotations

import os
import posixpath
from typing import Any

from adapters.code_parser.languages import LANGUAGES, resolver
from domain.knowledge.skeleton import FileSkeleton, Import


class ProjectIndex:
    """What resolution asks the file system, memoised (one per scan; cheap to create)."""

    def __init__(self, root: str | os.PathLike[str], known_files: set[str] | None = None) -> None:
        self.root = os.fspath(root)
        self._files: dict[str, bool] = dict.fromkeys(known_files or (), True)
        self._dirs: dict[str, bool] = {}
        self._stores: dict[str, dict[Any, Any]] = {}
        self.memo: dict[tuple[str, str, str, str, bool], str | None] = {}  # resolutions already made

    def is_file(self, rel: str) -> bool:
        if not rel or rel.startswith("../") or rel == "..":
            return False
        found = self._files.get(rel)
        if found is None:
            found = self._files[rel] = os.path.isfile(os.path.join(self.root, rel))
        return found

    def is_dir(self, rel: str) -> bool:
        if rel.startswith("../") or rel == "..":
            return False
        found = self._dirs.get(rel)
        if found is None:
            found = self._dirs[rel] = os.path.isdir(os.path.join(self.root, rel or "."))
        return found

    def first_file(self, candidates: list[str]) -> str | None:
        for c in candidates:
            c = posixpath.normpath(c)
            if self.is_file(c):
                return c
        return None

    def ancestors(self, rel_dir: str) -> list[str]:
        out = []
        d = rel_dir
        while True:
            out.append(d)
            if d in ("", "."):
                break
            d = posixpath.dirname(d)
        return out

    def store(self, name: str) -> dict[Any, Any]:
        """A memo a language's resolver keeps for the index's lifetime (what it read of go.mod, Cargo.toml,
        tsconfig.json …), by a name of its own."""
        found = self._stores.get(name)
        if found is None:
            found = self._stores[name] = {}
        return found


def join(*parts: str) -> str:
    """The normalised posix join of the non-empty parts ("" when all are empty)."""
    return posixpath.normpath(posixpath.join(*[p for p in parts if p])) if any(parts) else ""


def resolve_relative(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    """A relative import names a file beside the importing one (Solidity, Zig, Julia's include, …)."""
    if not imp.relative:
        return None
    return ix.first_file([join(posixpath.dirname(path), imp.specifier)])


def resolve_imports(skeleton: FileSkeleton, index: ProjectIndex) -> FileSkeleton:
    """A copy of the skeleton with every import's `resolved` set (or None); the input is not changed."""
    resolve = resolver(skeleton.language)
    if resolve is None or not skeleton.imports:
        return skeleton
    resolved = []
    # Resolution depends on the importing file's directory (its name too, for Rust): memoise on that.
    by_file = LANGUAGES[skeleton.language].resolves_by_file
    where = skeleton.path if by_file else posixpath.dirname(skeleton.path)
    for imp in skeleton.imports:
        key = (skeleton.language, where, imp.specifier, imp.names[0] if imp.names else "", imp.relative)
        if key in index.memo:
            target = index.memo[key]
        else:
            try:
                target = resolve(imp, skeleton.path, index)
            except (OSError, ValueError):
                target = None
            index.memo[key] = target
        if target == skeleton.path:
            target = None
        resolved.append(imp if imp.resolved == target else imp.model_copy(update={"resolved": target}))
    return skeleton.model_copy(update={"imports": resolved})
