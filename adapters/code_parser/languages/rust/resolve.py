"""Rust imports → the files of the modules they name: `mod x;` (and `#[path = "p"] mod x;`, beside the file),
`crate::`/`self::`/`super::` paths, 2018 child-module paths and, in a 2015-edition crate (no `edition` in
Cargo.toml), crate-root paths."""

from __future__ import annotations

import os
import posixpath
import re

from adapters.code_parser.resolution import ProjectIndex, join
from domain.knowledge.skeleton import Import


def _crate_src(path: str, ix: ProjectIndex) -> str | None:
    for d in ix.ancestors(posixpath.dirname(path)):
        if ix.is_file(join(d, "Cargo.toml")):
            return join(d, "src")
    return None


def _module_dir(path: str) -> str:
    """Where a file's child modules live: beside mod.rs/lib.rs/main.rs, in foo/ for foo.rs."""
    name = posixpath.basename(path)
    if name in ("mod.rs", "lib.rs", "main.rs"):
        return posixpath.dirname(path)
    return posixpath.splitext(path)[0]


def _module_file(ix: ProjectIndex, base: str, segments: list[str]) -> str | None:
    for k in range(len(segments), 0, -1):
        mod = join(base, *segments[:k])
        found = ix.first_file([mod + ".rs", join(mod, "mod.rs")])
        if found:
            return found
    return None


def _edition_2015(path: str, ix: ProjectIndex) -> bool:
    """Whether the file's crate is of the 2015 edition (its Cargo.toml names none), where `use a::b` starts at the
    crate root."""
    memo: dict[str, bool] = ix.store("rust.edition-2015")
    for d in ix.ancestors(posixpath.dirname(path)):
        manifest = join(d, "Cargo.toml")
        if ix.is_file(manifest):
            if manifest not in memo:
                try:
                    with open(os.path.join(ix.root, manifest), encoding="utf-8", errors="replace") as fh:
                        text = fh.read(1_000_000)
                except OSError:
                    text = 'edition = "?"'
                memo[manifest] = re.search(r'(?m)^\s*edition\s*=\s*"(?!2015)', text) is None
            return memo[manifest]
    return False


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    spec = imp.specifier
    if spec.startswith("#[path"):  # a path attribute on a module of a file: beside that file
        where = spec.split('"')[1] if spec.count('"') >= 2 else ""
        return ix.first_file([join(posixpath.dirname(path), where)]) if where else None
    if spec.startswith("mod "):
        mod = join(_module_dir(path), spec[4:].strip())
        return ix.first_file([mod + ".rs", join(mod, "mod.rs")])
    segments = [s for s in spec.split("::") if s]
    if not segments:
        return None
    head = segments[0]
    if head == "crate":
        src = _crate_src(path, ix)
        if src is None:
            return None
        return _module_file(ix, src, segments[1:]) or ix.first_file([join(src, "lib.rs"), join(src, "main.rs")])
    if head in ("self", "super"):
        base = _module_dir(path)
        rest = segments
        while rest and rest[0] in ("self", "super"):
            if rest[0] == "super":
                base = posixpath.dirname(base)
            rest = rest[1:]
        return _module_file(ix, base, rest)
    # 2018 paths: `use net::Client` names a child module of this one when there is one; in 2015 the crate root's
    found = _module_file(ix, _module_dir(path), segments)
    if found is None and _edition_2015(path, ix):
        src = _crate_src(path, ix)
        found = _module_file(ix, src, segments) if src is not None else None
    return found
