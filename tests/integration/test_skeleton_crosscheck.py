"""Exports cross-checked against each language's own parser on real code.

- Python: the stdlib's `ast` on real installed packages (pathspec, rich, the stdlib's json and email).
- TypeScript: the TypeScript compiler's parser (npm `typescript`, tests/tools/ts_exports.js) on the .ts and
  .d.ts files of real npm packages `make test` installs under .cache/node (scripts/install_user_tools.sh).
- Go: `go/ast` (tests/tools/go_exports.go, Debian golang-go) on Go's own standard library sources.

Each comparison is {exported name: sorted public member names (classes, interfaces, structs) or None}.
Tools missing → skipped with the reason, or failed under CODE3_REQUIRE_TEST_TOOLS=1 (CI; tests/tools_needed.py).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from adapters.code_parser.treesitter import TreeSitterCodeParser
from tests import tools_needed
from tests.tools_needed import need_tool

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "tests" / "tools"
NODE_MODULES = tools_needed.NODE_MODULES


@pytest.fixture(scope="module")
def parser() -> TreeSitterCodeParser:
    return TreeSitterCodeParser(workers=1)


def ours(parser: TreeSitterCodeParser, root: Path, rel: str, method_members: bool = True) -> dict[str, Any]:
    sk = parser.parse_file(root, rel)
    out: dict[str, Any] = {}
    for e in sk.exports:
        flatten = not method_members and e.kind != "interface"  # Go: methods are "Type.Method"
        if e.kind in ("class", "interface", "struct"):
            out[e.name] = sorted({m.name for m in e.members if not flatten or m.kind != "method"})
        else:
            out[e.name] = None
        if flatten:
            out.update({f"{e.name}.{m.name}": None for m in e.members if m.kind == "method"})
    return out


def diff(expected: dict[str, dict[str, Any]], actual: dict[str, dict[str, Any]]) -> list[str]:
    problems = []
    for path, names in expected.items():
        got = actual[path]
        if got != names:
            missing = sorted(set(names) - set(got))
            extra = sorted(set(got) - set(names))
            members = sorted(n for n in set(names) & set(got) if names[n] != got[n])
            problems.append(f"{path}: missing {missing} extra {extra} members differ "
                            f"{[(n, names[n], got[n]) for n in members]}")
    return problems


# --- Python ---------------------------------------------------------------------------------------------------

def _public(name: str) -> bool:
    return not name.startswith("_")


def _member_visible(name: str) -> bool:
    return _public(name) or (name.startswith("__") and name.endswith("__"))


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple | ast.List):
        return [n.id for n in node.elts if isinstance(n, ast.Name)]
    return []


def _defined(stmts: list[ast.stmt]) -> list[tuple[str, ast.stmt]]:
    out: list[tuple[str, ast.stmt]] = []
    for st in stmts:
        if isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.append((st.name, st))
        elif isinstance(st, ast.Assign):
            for t in st.targets:
                out += [(n, st) for n in _targets(t)]
        elif isinstance(st, ast.AnnAssign):
            out += [(n, st) for n in _targets(st.target)]
        elif sys.version_info >= (3, 12) and isinstance(st, ast.TypeAlias):
            out += [(n, st) for n in _targets(st.name)]
        elif isinstance(st, ast.If):
            out += _defined(st.body) + _defined(st.orelse)
        elif isinstance(st, ast.Try):
            out += _defined(st.body)
            for h in st.handlers:
                out += _defined(h.body)
            out += _defined(st.orelse) + _defined(st.finalbody)
        elif isinstance(st, ast.With):
            out += _defined(st.body)
    return out


def _ast_members(cls: ast.ClassDef) -> list[str]:
    names = {n for n, _ in _defined([s for s in cls.body if not isinstance(s, ast.If | ast.Try | ast.With)])}
    return sorted(n for n in names if _member_visible(n))


def _literal(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.List | ast.Tuple):
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            return [e.value for e in node.elts]  # type: ignore[attr-defined]
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return None if left is None or right is None else left + right
    return None


DYNAMIC = object()


def _all(stmts: list[ast.stmt], found: Any = None) -> Any:
    """The literal __all__ (list), DYNAMIC when any assignment to it is computed, None when there is none."""
    for st in stmts:
        if isinstance(st, ast.Assign) and any(_targets(t) == ["__all__"] for t in st.targets):
            names = _literal(st.value)
            found = DYNAMIC if names is None or found is DYNAMIC else names
        elif isinstance(st, ast.AugAssign) and _targets(st.target) == ["__all__"]:
            names = _literal(st.value)
            found = DYNAMIC if names is None or found is DYNAMIC else (found or []) + names
        elif isinstance(st, ast.If | ast.With):
            found = _all(st.body, found)
            found = _all(getattr(st, "orelse", []), found)
        elif isinstance(st, ast.Try):
            found = _all(st.body, found)
            for h in st.handlers:
                found = _all(h.body, found)
            found = _all(st.finalbody, _all(st.orelse, found))
    return found


def _top_level_imports(stmts: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for st in stmts:
        if isinstance(st, ast.ImportFrom):
            names |= {a.name for a in st.names}
        elif isinstance(st, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in st.names}
        elif isinstance(st, ast.If | ast.With):
            names |= _top_level_imports(st.body) | _top_level_imports(getattr(st, "orelse", []))
        elif isinstance(st, ast.Try):
            names |= _top_level_imports(st.body) | _top_level_imports(st.orelse) | _top_level_imports(st.finalbody)
            for h in st.handlers:
                names |= _top_level_imports(h.body)
    return names


def _main_guard(st: ast.stmt) -> bool:
    return isinstance(st, ast.If) and ast.unparse(st.test).replace("'", '"') in (
        '__name__ == "__main__"', '"__main__" == __name__')


def _redundant_aliases(stmts: list[ast.stmt]) -> list[str]:
    """`from m import x as x` / `import x as x`: PEP 484's explicit re-export."""
    return [a.name for st in stmts if isinstance(st, ast.Import | ast.ImportFrom) for a in st.names
            if a.asname == a.name and "." not in a.name]


def python_ast_exports(path: Path) -> dict[str, Any]:
    """As griffe sees a module (issue 19): a `__main__` guard binds nothing; a name imported and defined only in
    an if/try/with block is the import with a fallback, not API; redundant aliases re-export."""
    tree = ast.parse(path.read_bytes())
    body = [st for st in tree.body if not _main_guard(st)]
    defined: dict[str, ast.stmt] = {}
    for name, st in _defined(body):
        defined.setdefault(name, st)
    imported = _top_level_imports(body)
    conditional = {n for st in body if isinstance(st, ast.If | ast.Try | ast.With) for n, _ in _defined([st])}
    listed = _all(body)
    if listed is None or listed is DYNAMIC:
        names = [n for n in dict.fromkeys([*_redundant_aliases(body), *defined])
                 if _public(n) and not (n in defined and n in imported and n in conditional)]
    else:
        names = [n for n in dict.fromkeys(listed) if n in defined or n in imported]
    out: dict[str, Any] = {}
    for n in names:
        st = defined.get(n)
        out[n] = _ast_members(st) if isinstance(st, ast.ClassDef) else None
    return out


def _python_files() -> list[tuple[Path, str]]:
    import asyncio
    import concurrent.futures
    import email
    import importlib
    import json as json_mod

    import pathspec
    import rich

    files: list[tuple[Path, str]] = []
    for mod in (pathspec, json_mod, email, asyncio, concurrent.futures, importlib):
        base = Path(mod.__file__).parent
        files += [(base, p.relative_to(base).as_posix()) for p in sorted(base.rglob("*.py"))]
    stdlib = Path(json_mod.__file__).parent.parent  # modules with computed or concatenated __all__
    for name in ("__future__.py", "base64.py", "tempfile.py", "typing.py", "dis.py", "hashlib.py", "tarfile.py"):
        if (stdlib / name).exists():
            files.append((stdlib, name))
    rich_base = Path(rich.__file__).parent
    for name in ("console.py", "table.py", "text.py", "style.py", "progress.py", "panel.py", "syntax.py",
                 "markdown.py", "logging.py", "__init__.py"):
        files.append((rich_base, name))
    return files


def test_python_exports_match_ast_on_real_packages(parser: TreeSitterCodeParser) -> None:
    files = _python_files()
    assert len(files) > 40
    expected = {f"{b}/{r}": python_ast_exports(b / r) for b, r in files}
    actual = {f"{b}/{r}": ours(parser, b, r) for b, r in files}
    assert diff(expected, actual) == []


# --- TypeScript -------------------------------------------------------------------------------------------------

def _typescript_dir() -> Path:
    need_tool(shutil.which("node") is not None, f"node is not on PATH: {tools_needed.NPM_INSTALL}")
    chosen = os.environ.get("CODE3_TYPESCRIPT")
    if chosen and (Path(chosen) / "package.json").exists():
        return Path(chosen)
    need_tool(tools_needed.installed_version(tools_needed.TYPESCRIPT) is not None,
              f"npm typescript is not installed under {NODE_MODULES}: {tools_needed.USER_INSTALL}")
    return tools_needed.TYPESCRIPT


def _ts_files() -> list[Path]:
    """Every .ts/.mts/.cts/.d.ts of the npm packages installed under .cache/node (typescript, repomix and their
    dependencies), except TypeScript's global lib.*.d.ts scripts (they declare globals, not exports)."""
    found = [p for ext in ("*.ts", "*.mts", "*.cts") for p in NODE_MODULES.rglob(ext)]
    return sorted(p for p in found if not p.name.startswith("lib.") and p.is_file())


def test_typescript_exports_match_the_typescript_compiler(parser: TreeSitterCodeParser) -> None:
    ts_dir = _typescript_dir()
    files = _ts_files()
    need_tool(len(files) >= 50, f"{len(files)} .ts files under {NODE_MODULES}, 50 needed (npm typescript and "
              f"repomix): {tools_needed.USER_INSTALL}")
    rels = [p.relative_to(NODE_MODULES).as_posix() for p in files]
    out = subprocess.run(["node", str(TOOLS / "ts_exports.js"), str(ts_dir), *rels], cwd=NODE_MODULES,
                         capture_output=True, text=True, check=True, timeout=600)
    expected = json.loads(out.stdout)
    with ThreadPoolExecutor() as pool:  # tree-sitter parses without the GIL
        actual = dict(zip(rels, pool.map(lambda r: ours(parser, NODE_MODULES, r), rels), strict=True))
    assert sum(len(v) for v in expected.values()) > 5000
    # Exactly the compiler's exports, except where tree-sitter's grammar failed on a construct (the file has
    # parse errors) and the recovered tree lost an export — at most 1 % of the files (today: router's
    # index.d.ts, which tree-sitter-typescript parses as one ERROR node).
    mismatched = [p.split(":", 1)[0] for p in diff(expected, actual)]
    assert all(parser.parse_file(NODE_MODULES, r).parse_errors for r in mismatched), diff(expected, actual)
    assert len(mismatched) <= len(rels) // 100, diff(expected, actual)


# --- Go -----------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def go_exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = tools_needed.need_go()
    out = tmp_path_factory.mktemp("go") / "go_exports"
    env = {**os.environ, "GOCACHE": str(out.parent / "cache"), "GOFLAGS": "-mod=mod", "GO111MODULE": "off"}
    subprocess.run([go, "build", "-o", str(out), str(TOOLS / "go_exports.go")], check=True, env=env,
                   capture_output=True, timeout=240)
    return out


def _go_root() -> Path:
    try:
        goroot = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        need_tool(False, f"`go env GOROOT` failed ({exc}): reinstall Go (make test-tools: apt-get install golang-go)")
        raise
    return Path(goroot) / "src"


def test_go_exports_match_go_ast_on_the_standard_library(parser: TreeSitterCodeParser, go_exports: Path) -> None:
    src = _go_root()
    rels: list[str] = []
    for pkg in ("net/http", "strings", "fmt", "encoding/json", "go/ast", "sort", "bufio", "os", "io", "time"):
        rels += sorted(p.relative_to(src).as_posix() for p in (src / pkg).glob("*.go"))
    need_tool(len(rels) >= 50, f"Go's standard library sources are not under {src}: "
              + tools_needed.ROOT_INSTALL.format(packages="golang-go"))
    out = subprocess.run([str(go_exports), *rels], cwd=src, capture_output=True, text=True, check=True, timeout=120)
    expected = json.loads(out.stdout)
    actual = {r: ours(parser, src, r, method_members=False) for r in rels}
    assert sum(len(v) for v in expected.values()) > 1000
    assert diff(expected, actual) == []
