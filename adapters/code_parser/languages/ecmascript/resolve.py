"""JavaScript/TypeScript imports → project files, as Node and the TypeScript compiler resolve them.

Relative specifiers: the file, then the extensions and index files the two tools try (`./x.js` names x.ts in
TypeScript; a declaration file's `./x.js` names x.d.ts first). Non-relative ones that still name a project file:
the nearest tsconfig.json/jsconfig.json's `compilerOptions.paths` (and `baseUrl`, through relative `extends`),
the nearest package.json's `imports` (`#internal/x`), and a package of the project named by its package.json —
the package itself or another of a monorepo's (packages/ui) — through its `exports` (with conditions and `*`
patterns), else its `main`. A target outside the project root is an external import (None): it is never read.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from typing import Any

from adapters.code_parser.resolution import ProjectIndex, join
from domain.knowledge.skeleton import Import

JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".mjs", ".cjs", ".jsx", ".mts", ".cts")
_TS_FOR_JS = (".ts", ".tsx", ".d.ts", ".mts", ".cts")
_DECLARATION = re.compile(r"\.d\.[mc]?ts$")
_CONDITIONS = ("types", "import", "require", "node", "module", "default")
_JSONC = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
MAX_CONFIG_BYTES = 1_000_000
WORKSPACE_DEPTH = 3
_SKIP_DIRS = frozenset({"node_modules", "bower_components", "vendor", "dist", "build", "target", "coverage",
                        "__pycache__", "venv"})


def candidates(base: str, importer: str) -> list[str]:
    """The files a specifier resolved to `base` may name, in the order the tools try them."""
    out = [base] + [base + e for e in JS_EXTENSIONS] + [join(base, "index") + e for e in JS_EXTENSIONS]
    stem, ext = posixpath.splitext(base)
    if ext in (".js", ".mjs", ".cjs", ".jsx"):
        ts = [stem + e for e in _TS_FOR_JS]
        if _DECLARATION.search(importer):  # a .d.ts reads the declarations of `./x.js`, not its code
            ts = [stem + (".d.mts" if ext == ".mjs" else ".d.cts" if ext == ".cjs" else ".d.ts"), *ts]
            return ts + out
        out[1:1] = ts
    return out


def _read_json(ix: ProjectIndex, rel: str) -> dict[str, Any] | None:
    """A JSON (or JSONC: comments, trailing commas) object file of the project, memoised on the index."""
    cache: dict[str, dict[str, Any] | None] = ix.store("js.json")
    if rel not in cache:
        found = None
        if ix.is_file(rel):
            try:
                with open(os.path.join(ix.root, rel), encoding="utf-8", errors="replace") as fh:
                    text = fh.read(MAX_CONFIG_BYTES)
                text = _JSONC.sub(lambda m: m.group(1) or "", text.lstrip("\ufeff"))
                data = json.loads(_TRAILING_COMMA.sub(r"\1", text))
                found = data if isinstance(data, dict) else None
            except (OSError, ValueError):
                found = None
        cache[rel] = found
    return cache[rel]


def _nearest(ix: ProjectIndex, importer: str, names: tuple[str, ...]) -> str | None:
    for d in ix.ancestors(posixpath.dirname(importer)):
        for name in names:
            rel = join(d, name)
            if ix.is_file(rel):
                return rel
    return None


def _compiler_paths(ix: ProjectIndex, config: str) -> tuple[dict[str, list[str]], str, str | None]:
    """(paths, the directory they are relative to, baseUrl as a project path or None), through `extends`."""
    paths: dict[str, list[str]] | None = None
    paths_dir = posixpath.dirname(config)
    base_url: str | None = None
    seen: set[str] = set()
    current: str | None = config
    while current and current not in seen and len(seen) < 8:
        seen.add(current)
        data = _read_json(ix, current) or {}
        options = data.get("compilerOptions")
        if not isinstance(options, dict):
            options = {}
        here = posixpath.dirname(current)
        if base_url is None and isinstance(options.get("baseUrl"), str):
            base_url = join(here, options["baseUrl"]) or "."
        if paths is None and isinstance(options.get("paths"), dict):
            paths = {k: [v for v in vs if isinstance(v, str)] for k, vs in options["paths"].items()
                     if isinstance(vs, list)}
            paths_dir = here
        parent = data.get("extends")
        current = join(here, parent if parent.endswith(".json") else parent + ".json") if isinstance(
            parent, str) and parent.startswith(".") else None
    if base_url is not None and paths is not None:
        paths_dir = base_url
    return paths or {}, paths_dir, base_url


def _match(pattern: str, spec: str) -> str | None:
    """What `*` stands for when a pattern matches (the whole match for a pattern without `*`), else None."""
    if "*" not in pattern:
        return "" if pattern == spec else None
    head, _, tail = pattern.partition("*")
    if spec.startswith(head) and spec.endswith(tail) and len(spec) >= len(head) + len(tail):
        return spec[len(head) : len(spec) - len(tail)]
    return None


def _tsconfig(spec: str, importer: str, ix: ProjectIndex) -> str | None:
    config = _nearest(ix, importer, ("tsconfig.json", "jsconfig.json"))
    if config is None:
        return None
    paths, paths_dir, base_url = _compiler_paths(ix, config)
    matches = [(p, star) for p in paths if (star := _match(p, spec)) is not None]
    # the compiler takes an exact pattern first, else the one with the longest prefix before its `*`
    matches.sort(key=lambda m: ("*" in m[0], -len(m[0].partition("*")[0])))
    for pattern, star in matches[:1]:
        for target in paths[pattern]:
            found = ix.first_file(candidates(join(paths_dir, target.replace("*", star, 1)), importer))
            if found:
                return found
    if base_url is not None:
        return ix.first_file(candidates(join(base_url, spec), importer))
    return None


def _conditional(value: Any, star: str) -> list[str]:
    """The targets of an `exports`/`imports` entry, in condition order (strings, condition objects, arrays)."""
    if isinstance(value, str):
        return [value.replace("*", star)]
    if isinstance(value, list):
        return [t for v in value for t in _conditional(v, star)]
    if isinstance(value, dict):
        return [t for k, v in value.items() if k in _CONDITIONS for t in _conditional(v, star)]
    return []


def _entry(mapping: Any, key: str) -> list[str]:
    if not isinstance(mapping, dict):
        return _conditional(mapping, "") if key == "." else []
    if not any(k.startswith((".", "#")) for k in mapping):  # a bare condition object stands for "."
        return _conditional(mapping, "") if key == "." else []
    if key in mapping:
        return _conditional(mapping[key], "")
    best = sorted(((k, star) for k in mapping if "*" in k and (star := _match(k, key)) is not None),
                  key=lambda m: -len(m[0].partition("*")[0]))
    return _conditional(mapping[best[0][0]], best[0][1]) if best else []


def _workspaces(ix: ProjectIndex) -> dict[str, str]:
    """Package name → its package.json, for the packages of the project (a monorepo's packages/*, apps/*): up to
    WORKSPACE_DEPTH directories down, never into node_modules or other vendored or hidden directories."""
    memo = ix.store("js.workspaces")
    found: dict[str, str] | None = memo.get("")
    if found is not None:
        return found
    found = {}
    stack = [("", 0)]
    while stack and len(found) < 1000:
        rel, depth = stack.pop()
        manifest = join(rel, "package.json")
        data = _read_json(ix, manifest) if ix.is_file(manifest) else None
        if data is not None and isinstance(data.get("name"), str):
            found.setdefault(data["name"], manifest)
        if depth >= WORKSPACE_DEPTH:
            continue
        try:
            with os.scandir(os.path.join(ix.root, rel) if rel else ix.root) as it:
                subdirs = [e.name for e in it if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        stack += [(join(rel, d), depth + 1) for d in sorted(subdirs, reverse=True)
                  if not d.startswith(".") and d not in _SKIP_DIRS]
    memo[""] = found
    return found


def _package_name(spec: str) -> str:
    parts = spec.split("/")
    return "/".join(parts[:2]) if spec.startswith("@") else parts[0]


def _package_json(spec: str, importer: str, ix: ProjectIndex) -> str | None:
    manifest = _nearest(ix, importer, ("package.json",))
    data = _read_json(ix, manifest) if manifest else None
    if spec.startswith("#"):
        targets = _entry(data.get("imports"), spec) if data is not None else []
    else:
        name = _package_name(spec)
        if data is None or data.get("name") != name:  # not the package itself: another package of the project?
            manifest = _workspaces(ix).get(name)
            data = _read_json(ix, manifest) if manifest else None
        if data is None:
            return None
        subpath = "." + spec[len(name):]
        if "exports" in data:
            targets = _entry(data.get("exports"), subpath)
        elif subpath == ".":  # no `exports`: `main` (or `module`, `types`), else index.js
            targets = [f"./{data[k].removeprefix('./')}" for k in ("main", "module", "types")
                       if isinstance(data.get(k), str)] + ["./index"]
        else:
            targets = [subpath]
    if manifest is None:
        return None
    where = posixpath.dirname(manifest)
    for target in targets:
        if target.startswith("./"):  # anything else names another package: external
            found = ix.first_file(candidates(join(where, target), importer))
            if found:
                return found
    return None


def resolve_import(imp: Import, importer: str, ix: ProjectIndex) -> str | None:
    """The project file an import of `importer` names, or None (a package, a builtin, outside the root)."""
    spec = imp.specifier
    if imp.relative:
        return ix.first_file(candidates(join(posixpath.dirname(importer), spec), importer))
    if spec.startswith(("node:", "data:", "http:", "https:")):
        return None
    return _package_json(spec, importer, ix) or _tsconfig(spec, importer, ix)
