"""Walking a directory for source files: .gitignore (nested too), vendored, generated, binary, oversized.

Skipped paths are counted by reason (domain.skeleton.SkipReason). A pruned directory (vendored or
gitignored) counts once. Files of an unknown extension count as "unsupported". Reading a file's head
(binary and generated checks) happens in `read_source`, in the worker that parses it.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from adapters.code_parser.languages import grammar_for

VENDORED_DIRS = frozenset({
    "node_modules", "bower_components", "vendor", "third_party", "third-party", ".venv", "venv", "dist", "build",
    "target", "__pycache__", ".git", ".hg", ".svn", ".code3", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", "site-packages", ".gradle", ".dart_tool", "Pods", ".eggs",
})
GENERATED_NAMES = re.compile(
    r"(\.min\.(js|mjs|cjs)|[._-]bundle\.js|_pb2(_grpc)?\.pyi?|\.pb\.(go|cc|h)|\.pb\.gw\.go|_grpc\.pb\.go|"
    r"\.g\.dart|\.freezed\.dart|\.designer\.cs|\.g\.cs|_generated\.\w+|\.generated\.\w+)$"
)
GENERATED_HEADER = re.compile(
    rb"(?i)(do not edit|@generated\b|\bauto-?generated\b|\bcode generated\b|"
    rb"\b(is|was) (automatically |auto-)?generated\b|\bgenerated (automatically |by |from )\b)"
)
HEAD_BYTES = 8192
HEADER_BYTES = 1024
MAX_BYTES = 1_000_000


@dataclass
class Candidate:
    rel: str
    grammar: str
    size: int
    mtime_ns: int


@dataclass
class Listing:
    files: list[Candidate] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


class _Ignores:
    """The .gitignore files met on the way down, deepest first; the deepest matching pattern wins."""

    def __init__(self) -> None:
        self.stack: list[tuple[str, Any]] = []  # (directory rel path, GitIgnoreSpec)

    def push(self, root: str, rel_dir: str) -> bool:
        path = os.path.join(root, rel_dir, ".gitignore")
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return False
        from pathspec import GitIgnoreSpec

        self.stack.append((rel_dir, GitIgnoreSpec.from_lines(lines)))
        return True

    def ignored(self, rel: str, is_dir: bool) -> bool:
        for base, spec in reversed(self.stack):
            sub = rel[len(base) + 1 :] if base else rel
            result = spec.check_file(sub + "/" if is_dir else sub)
            if result.include is not None:
                return bool(result.include)
        return False


def list_sources(root: str, target: str = "", max_bytes: int = MAX_BYTES) -> Listing:
    """Supported source files under `target` (project-relative; "" for the root), the rest counted."""
    listing = Listing()
    ignores = _Ignores()
    target = "" if target in ("", ".") else target.strip("/")
    # .gitignore files of the root and of the directories above the target apply to it too
    parts = target.split("/") if target else []
    for i in range(len(parts) + 1):
        ignores.push(root, "/".join(parts[:i]))
    abs_target = os.path.join(root, target)
    if os.path.isfile(abs_target):
        st = os.stat(abs_target)
        _consider(listing, target, st.st_size, st.st_mtime_ns, max_bytes)
        return listing
    _walk(root, target, ignores, listing, max_bytes)
    return listing


def _consider(listing: Listing, rel: str, size: int, mtime_ns: int, max_bytes: int) -> None:
    grammar = grammar_for(rel)
    if grammar is None:
        listing.skipped["unsupported"] += 1
    elif GENERATED_NAMES.search(rel):
        listing.skipped["generated"] += 1
    elif size > max_bytes:
        listing.skipped["oversized"] += 1
    else:
        listing.files.append(Candidate(rel, grammar, size, mtime_ns))


def _walk(root: str, rel_dir: str, ignores: _Ignores, listing: Listing, max_bytes: int) -> None:
    try:
        with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        listing.skipped["unreadable"] += 1
        return
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            is_file = not is_dir and entry.is_file(follow_symlinks=False)
        except OSError:
            listing.skipped["unreadable"] += 1
            continue
        if not is_dir and not is_file:
            continue  # symlinks, sockets, devices: never followed
        if is_dir and entry.name in VENDORED_DIRS:
            listing.skipped["vendored"] += 1
            continue
        if ignores.stack and ignores.ignored(rel, is_dir):
            listing.skipped["gitignored"] += 1
            continue
        if is_dir:
            pushed = ignores.push(root, rel)
            _walk(root, rel, ignores, listing, max_bytes)
            if pushed:
                ignores.stack.pop()
            continue
        if entry.name == ".gitignore":
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            listing.skipped["unreadable"] += 1
            continue
        _consider(listing, rel, st.st_size, st.st_mtime_ns, max_bytes)


def classify_content(data: bytes) -> str | None:
    """"binary" (a NUL byte in the first 8 KB), "generated" (its header says so, or minified), or None."""
    head = data[:HEAD_BYTES]
    if b"\0" in head:
        return "binary"
    if GENERATED_HEADER.search(head[:HEADER_BYTES]):
        return "generated"
    if len(data) > HEAD_BYTES and b"\n" not in head:
        return "generated"  # minified: 8 KB without a line break
    return None
