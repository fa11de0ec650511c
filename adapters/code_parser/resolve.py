"""Imports → project paths (project-relative, posix), per language; None when the target is not in the project.

Resolved:
- Python: relative and absolute within the project, packages' `__init__.py`, submodules named in `from p import m`,
  namespace packages (no `__init__.py`) holding the importing file;
- JavaScript/TypeScript (adapters/code_parser/js_resolve.py): relative, with the extensions and index files Node
  and tsc try; tsconfig `paths`/`baseUrl`, package.json `imports` and the package's own `exports`;
- Go: module path (the module root package too) and local `replace` directives of the nearest go.mod → one file
  of the package (named after it or its directory, else doc.go, else the first non-test file); a `replace` out
  of the project root is an external import, never read;
- Rust: `mod x;` (and `#[path = "p"] mod x;`, beside the file), `crate::`/`self::`/`super::` paths, 2018
  child-module paths and, in a 2015-edition crate (no `edition` in Cargo.toml), crate-root paths → the module's file;
- Java, Kotlin, Scala: package → file under the file's source root, `pkg.*` → the package directory;
- C/C++: `#include "…"` beside the file, then under `include/` dirs and the project root;
- Ruby: `require_relative`, and `require` under lib/;
- PHP: `use A\\B\\C` → A/B/C.php or B/C.php under a source root (PSR-4 style), relative `require`s;
- Dart: relative and `package:` → lib/; Haskell: module → path under src/, lib/, app/;
- Elixir: Acme.Util → lib/acme/util.ex; OCaml: module → its .ml beside the file; Lua: `require("a.b")`;
- relative path imports of Solidity, Zig, Bash and Julia.
Everything else keeps only its import text.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from adapters.code_parser import js_resolve
from domain.skeleton import FileSkeleton, Import

JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".mjs", ".cjs", ".jsx", ".mts", ".cts")


class ProjectIndex:
    """What resolution asks the file system, memoised (one per scan; cheap to create)."""

    def __init__(self, root: str | os.PathLike[str], known_files: set[str] | None = None) -> None:
        self.root = os.fspath(root)
        self._files: dict[str, bool] = dict.fromkeys(known_files or (), True)
        self._dirs: dict[str, bool] = {}
        self._go_mod: dict[str, GoModule | None] = {}
        self._go_files: dict[tuple[str, str], str | None] = {}
        self._rust_2015: dict[str, bool] = {}
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

    def go_module(self, rel_dir: str) -> GoModule | None:
        """The module of the nearest go.mod at or above a directory."""
        for d in self.ancestors(rel_dir):
            if d in self._go_mod:
                return self._go_mod[d]
            mod = posixpath.join(d, "go.mod") if d else "go.mod"
            if self.is_file(mod):
                try:
                    with open(os.path.join(self.root, mod), encoding="utf-8", errors="replace") as fh:
                        found = parse_go_mod(fh.read(1_000_000), d)
                except OSError:
                    found = None
                self._go_mod[d] = found
                return found
        return None

    def go_package_file(self, rel_dir: str, name: str = "") -> str | None:
        """The file that stands for a Go package: <name>.go (the import path's last element), <dir name>.go,
        doc.go, else its first non-test .go file."""
        if (rel_dir, name) in self._go_files:
            return self._go_files[rel_dir, name]
        names: list[str] = []
        if self.is_dir(rel_dir):
            try:
                with os.scandir(os.path.join(self.root, rel_dir or ".")) as it:
                    names = sorted(e.name for e in it if e.name.endswith(".go") and not e.name.endswith("_test.go")
                                   and e.is_file(follow_symlinks=False))
            except OSError:
                names = []
        base = posixpath.basename(rel_dir)
        chosen = next((n for n in (f"{name}.go", f"{base}.go", "doc.go") if n in names), names[0] if names else None)
        found = self._go_files[rel_dir, name] = _join(rel_dir, chosen) if chosen else None
        return found


@dataclass(frozen=True)
class GoModule:
    """A go.mod: its module path, its directory, and its `replace`s by a local directory (old module path →
    the directory, project-relative and normalised: it starts with ../ when it leads out of the project)."""

    path: str
    dir: str
    replaces: tuple[tuple[str, str], ...] = ()


def parse_go_mod(text: str, mod_dir: str) -> GoModule | None:
    """The module line and the local-path `replace` directives (single and in blocks) of a go.mod."""
    module = None
    replaces: list[tuple[str, str]] = []
    block = ""
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if block:
            if line == ")":
                block = ""
                continue
            line = f"{block} {line}"
        elif line.endswith("(") and line[:-1].strip() in ("replace", "require", "exclude", "retract"):
            block = line[:-1].strip()
            continue
        words = line.split()
        if words[0] == "module" and len(words) > 1:
            module = words[1].strip('"`')
        elif words[0] == "replace" and "=>" in words:
            arrow = words.index("=>")
            old = words[1].strip('"`') if arrow > 1 else ""
            new = words[arrow + 1].strip('"`') if len(words) > arrow + 1 else ""
            if old and (new.startswith(("./", "../")) or new in (".", "..") or new.startswith("/")):
                target = new if new.startswith("/") else posixpath.normpath(posixpath.join(mod_dir or ".", new))
                replaces.append((old, target))
    return GoModule(module, mod_dir, tuple(replaces)) if module else None


def _dir(path: str) -> str:
    return posixpath.dirname(path)


def _join(*parts: str) -> str:
    return posixpath.normpath(posixpath.join(*[p for p in parts if p])) if any(parts) else ""


def _python(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    spec = imp.specifier
    names = [n for n in imp.names if n != "*"]
    if spec.startswith("."):
        level = len(spec) - len(spec.lstrip("."))
        base = _dir(path)
        for _ in range(level - 1):
            base = _dir(base)
        roots = [base]
        module = spec[level:]
    else:
        # source roots: above the topmost package holding the file, the project root, src/, and above each
        # directory holding the file that the import's first name names (a namespace package has no __init__.py)
        top = _dir(path)
        while top and ix.is_file(_join(top, "__init__.py")):
            top = _dir(top)
        head = spec.split(".")[0]
        namespaces = [_dir(d) for d in ix.ancestors(_dir(path)) if d and posixpath.basename(d) == head]
        roots = list(dict.fromkeys([top, "", "src", *namespaces]))
        module = spec
    parts = module.split(".") if module else []
    for root in roots:
        base = _join(root, *parts)
        if names:  # `from pkg import core` names the submodule pkg/core.py
            sub = ix.first_file([_join(base, names[0]) + ".py", _join(base, names[0], "__init__.py")])
            if sub:
                return sub
        found = ix.first_file(([base + ".py", base + ".pyi"] if parts else []) + [_join(base, "__init__.py")])
        if found:
            return found
    return None


def _js(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    return js_resolve.resolve(imp.specifier, imp.relative, path, ix)


def _go(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    found = ix.go_module(_dir(path))
    if found is None:
        return None
    spec = imp.specifier
    bases = [(found.path, found.dir), *found.replaces]
    matches = [(old, d) for old, d in bases if spec == old or spec.startswith(old + "/")]
    if not matches:
        return None
    old, base = max(matches, key=lambda m: len(m[0]))
    target = posixpath.normpath(posixpath.join(base or ".", spec[len(old) + 1:])) if spec != old else base
    if target.startswith(("/", "../")) or target == "..":
        return None  # a replace leading out of the project: an external import, never read
    return ix.go_package_file("" if target == "." else target, spec.rsplit("/", 1)[-1])


def _rust_crate_src(path: str, ix: ProjectIndex) -> str | None:
    for d in ix.ancestors(_dir(path)):
        if ix.is_file(_join(d, "Cargo.toml")):
            return _join(d, "src")
    return None


def _rust_module_dir(path: str) -> str:
    """Where a file's child modules live: beside mod.rs/lib.rs/main.rs, in foo/ for foo.rs."""
    name = posixpath.basename(path)
    if name in ("mod.rs", "lib.rs", "main.rs"):
        return _dir(path)
    return posixpath.splitext(path)[0]


def _rust_file(ix: ProjectIndex, base: str, segments: list[str]) -> str | None:
    for k in range(len(segments), 0, -1):
        mod = _join(base, *segments[:k])
        found = ix.first_file([mod + ".rs", _join(mod, "mod.rs")])
        if found:
            return found
    return None


def _rust_2015(path: str, ix: ProjectIndex) -> bool:
    """Whether the file's crate is of the 2015 edition (its Cargo.toml names none), where `use a::b` starts at the
    crate root."""
    for d in ix.ancestors(_dir(path)):
        manifest = _join(d, "Cargo.toml")
        if ix.is_file(manifest):
            if manifest not in ix._rust_2015:
                try:
                    with open(os.path.join(ix.root, manifest), encoding="utf-8", errors="replace") as fh:
                        text = fh.read(1_000_000)
                except OSError:
                    text = 'edition = "?"'
                ix._rust_2015[manifest] = re.search(r'(?m)^\s*edition\s*=\s*"(?!2015)', text) is None
            return ix._rust_2015[manifest]
    return False


def _rust(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    spec = imp.specifier
    if spec.startswith("#[path"):  # a path attribute on a module of a file: beside that file
        where = spec.split('"')[1] if spec.count('"') >= 2 else ""
        return ix.first_file([_join(_dir(path), where)]) if where else None
    if spec.startswith("mod "):
        mod = _join(_rust_module_dir(path), spec[4:].strip())
        return ix.first_file([mod + ".rs", _join(mod, "mod.rs")])
    segments = [s for s in spec.split("::") if s]
    if not segments:
        return None
    head = segments[0]
    if head == "crate":
        src = _rust_crate_src(path, ix)
        if src is None:
            return None
        return _rust_file(ix, src, segments[1:]) or ix.first_file([_join(src, "lib.rs"), _join(src, "main.rs")])
    if head in ("self", "super"):
        base = _rust_module_dir(path)
        rest = segments
        while rest and rest[0] in ("self", "super"):
            if rest[0] == "super":
                base = _dir(base)
            rest = rest[1:]
        return _rust_file(ix, base, rest)
    # 2018 paths: `use net::Client` names a child module of this one when there is one; in 2015 the crate root's
    found = _rust_file(ix, _rust_module_dir(path), segments)
    if found is None and _rust_2015(path, ix):
        src = _rust_crate_src(path, ix)
        found = _rust_file(ix, src, segments) if src is not None else None
    return found


def _java(imp: Import, path: str, ix: ProjectIndex, ext: str = ".java") -> str | None:
    parts = imp.specifier.removeprefix("static ").split(".")
    wildcard = parts[-1] == "*"
    if wildcard:
        parts = parts[:-1]
    lang_dir = {".java": "java", ".kt": "kotlin", ".scala": "scala"}[ext]
    roots = [*ix.ancestors(_dir(path)), f"src/main/{lang_dir}", f"src/test/{lang_dir}", "src"]
    if imp.names and imp.names[0] not in ("*", parts[-1]) and not wildcard:
        parts = [*parts, imp.names[0]]  # Scala selectors: import a.b.{C, D} names a/b/C first
    for root in dict.fromkeys(roots):
        base = _join(root, *parts)
        if wildcard:
            if ix.is_dir(base) and base:
                return base
            continue
        for k in range(len(parts), 0, -1):  # com.x.Y.method (static import) → com/x/Y.java
            found = ix.first_file([_join(root, *parts[:k]) + ext])
            if found:
                return found
    return None


def _c(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    spec = imp.specifier
    dirs = [_dir(path)] if imp.relative else []
    for d in ix.ancestors(_dir(path)):
        dirs += [_join(d, "include"), d]
    return ix.first_file([_join(d, spec) for d in dict.fromkeys(dirs)])


def _ruby(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    spec = imp.specifier
    candidates = [spec, spec + ".rb"]
    if imp.relative:
        return ix.first_file([_join(_dir(path), c) for c in candidates])
    return ix.first_file([_join(root, c) for root in ("lib", "") for c in candidates])


def _relative_path(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    if not imp.relative:
        return None
    return ix.first_file([_join(_dir(path), imp.specifier)])


def _bash(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    if not imp.relative:
        return None
    return ix.first_file([_join(_dir(path), imp.specifier), _join(imp.specifier)])


def _lua(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    mod = imp.specifier.replace(".", "/")
    return ix.first_file([mod + ".lua", _join(mod, "init.lua"), _join("src", mod) + ".lua", _join("lua", mod) + ".lua"])


def _php(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    if imp.relative:
        return _relative_path(imp, path, ix)
    parts = [p for p in imp.specifier.split("\\") if p]
    if len(parts) < 2:
        return None
    # PSR-4 style: the namespace path under the importing file's source root (one of its ancestors, or src/,
    # lib/), possibly without the vendor prefix; at least a directory and the file must match
    roots = [*ix.ancestors(_dir(path)), "src", "lib"]
    for k in range(len(parts) - 1):
        rel = "/".join(parts[k:]) + ".php"
        for root in dict.fromkeys(roots):
            found = ix.first_file([_join(root, rel)])
            if found:
                return found
    return None


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _elixir(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    """Acme.Util → lib/acme/util.ex (Mix's convention: Macro.underscore of each segment)."""
    rel = "/".join(_snake(p) for p in imp.specifier.split("."))
    return ix.first_file([_join(root, rel) + ext for root in ("lib", "") for ext in (".ex", ".exs")])


def _ocaml(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    """Module Util → util.ml beside the file (a dune library's modules share a directory)."""
    head = imp.specifier.split(".")[0]
    name = head[:1].lower() + head[1:]
    return ix.first_file([_join(_dir(path), name) + ".ml", _join(_dir(path), name) + ".mli"])


def _haskell(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    mod = imp.specifier.replace(".", "/")
    return ix.first_file([_join(root, mod) + ext for root in ("src", "lib", "app", "") for ext in (".hs", ".lhs")])


def _dart(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    spec = imp.specifier
    if spec.startswith("package:"):
        rest = spec[len("package:"):].split("/", 1)
        return ix.first_file([_join("lib", rest[1])]) if len(rest) == 2 else None
    return _relative_path(imp, path, ix)


RESOLVERS: dict[str, Callable[[Import, str, ProjectIndex], str | None]] = {
    "python": _python,
    "javascript": _js,
    "typescript": _js,
    "go": _go,
    "rust": _rust,
    "java": _java,
    "c": _c,
    "cpp": _c,
    "ruby": _ruby,
    "php": _php,
    "solidity": _relative_path,
    "zig": _relative_path,
    "bash": _bash,
    "julia": _relative_path,
    "lua": _lua,
    "dart": _dart,
    "haskell": _haskell,
    "kotlin": lambda imp, path, ix: _java(imp, path, ix, ".kt"),
    "scala": lambda imp, path, ix: _java(imp, path, ix, ".scala"),
    "elixir": _elixir,
    "ocaml": _ocaml,
}


def resolve_imports(skeleton: FileSkeleton, index: ProjectIndex) -> FileSkeleton:
    """A copy of the skeleton with every import's `resolved` set (or None); the input is not changed."""
    resolver = RESOLVERS.get(skeleton.language)
    if resolver is None or not skeleton.imports:
        return skeleton
    resolved = []
    # Resolution depends on the importing file's directory (its name too, for Rust): memoise on that.
    where = skeleton.path if skeleton.language == "rust" else posixpath.dirname(skeleton.path)
    for imp in skeleton.imports:
        key = (skeleton.language, where, imp.specifier, imp.names[0] if imp.names else "", imp.relative)
        if key in index.memo:
            target = index.memo[key]
        else:
            try:
                target = resolver(imp, skeleton.path, index)
            except (OSError, ValueError):
                target = None
            index.memo[key] = target
        if target == skeleton.path:
            target = None
        resolved.append(imp if imp.resolved == target else imp.model_copy(update={"resolved": target}))
    return skeleton.model_copy(update={"imports": resolved})
