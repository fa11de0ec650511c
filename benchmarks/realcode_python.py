"""Python skeletons, import edges and drift on real PyPI packages, against Python's own tools (issue 19).

Run: `scripts/corpus/python.sh` (or scripts/fetch_corpus.sh), then `.venv/bin/python -m benchmarks.realcode_python`
(`--ci`: only the two clicks, as tests/realcode/test_python.py). The corpus is the sdists under
$CODE3_CORPUS_DIR/python (default .cache/corpus/python): click 8.1.8 and 8.2.1, rich 15.0.0, requests 2.34.2.

Oracles:
- exports and members: griffe (pinned in the dev group), with the conventions of PEP 484's stub rules that type
  checkers apply to packages: `from a import x as x` and `from a import *` re-export (griffe's extensions
  griffe-public-redundant-aliases and griffe-public-wildcard-imports); a module's exports are its members
  griffe calls public, minus submodules (files, not exports) and module dunders (`__version__`,
  `__getattr__`: module machinery, which code3 leaves out at module level); a class's members are its own
  public members, minus instance attributes assigned in methods (code3 reads declarations, not bodies);
- import edges: the stdlib's `ast` (every import statement, in functions too) resolved with
  importlib.machinery.PathFinder (no package code runs): `import a.b` → a/b; `from m import x` → the submodule
  m.x when there is one, else m;
- drift click 8.1.8 → 8.2.1: exports added and removed as griffe's public names per module differ; signatures
  changed as griffe's parameters (name, kind, annotation, default) and return annotation of a function or
  method differ; griffe's breakage check (find_breaking_changes) is reported beside it (what code3 must
  not miss: removed objects and breaking parameter changes).
Targets (issue 19): ≥ 0.98 export recall and precision, ≥ 0.95 member recall and edge recall/precision,
≥ 0.95 drift precision and recall for added, removed and changed.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from adapters.code_parser.treesitter import TreeSitterCodeParser  # noqa: E402
from benchmarks.realcode_scoring import CORPUS as CORPUS_ROOT  # noqa: E402
from benchmarks.realcode_scoring import DRIFT_TARGET, api_rows, drift_rows, log, ratio, target_row  # noqa: E402
from benchmarks.report import Row, format_table  # noqa: E402
from domain.knowledge.drift import compare  # noqa: E402
from domain.knowledge.skeleton import Export, MergedSkeleton  # noqa: E402

CORPUS = CORPUS_ROOT / "python"
CI_PACKAGES = ("click-8.1.8", "click-8.2.1")
PACKAGES = (*CI_PACKAGES, "rich-15.0.0", "requests-2.34.2")
DRIFT = ("click-8.1.8", "click-8.2.1")
FUNCTION_KINDS = ("function", "method", "constructor")


logging.getLogger("griffe").setLevel(logging.CRITICAL)  # unresolvable annotations of Windows-only code


def source_root(package_dir: Path) -> Path:
    return package_dir / "src" if (package_dir / "src").is_dir() else package_dir


def top_packages(package_dir: Path) -> list[str]:
    src = source_root(package_dir)
    return sorted(p.name for p in src.iterdir() if (p / "__init__.py").is_file() and p.name not in ("tests", "docs"))


# --- griffe -----------------------------------------------------------------------------------------------------

def _griffe_load(package_dir: Path, name: str) -> Any:
    import griffe
    from griffe_public_redundant_aliases import PublicRedundantAliasesExtension
    from griffe_public_wildcard_imports import PublicWildcardImportsExtension

    extensions = griffe.load_extensions(PublicRedundantAliasesExtension(), PublicWildcardImportsExtension())
    loader = griffe.GriffeLoader(extensions=extensions, search_paths=[str(source_root(package_dir))],
                                 allow_inspection=False)
    module = loader.load(name)
    loader.resolve_aliases(implicit=False, external=False)
    return module


def _modules(module: Any) -> list[Any]:
    out = [module]
    for sub in module.modules.values():
        if not sub.is_alias:
            out.extend(_modules(sub))
    return out


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _public_members(obj: Any) -> dict[str, Any]:
    out = {}
    for name, member in obj.members.items():
        try:
            public = member.is_public
        except Exception:
            public = False
        if public:
            out[name] = member
    return out


def _instance_attribute(member: Any) -> bool:
    return (not member.is_alias and member.is_attribute and "instance-attribute" in member.labels
            and "class-attribute" not in member.labels)


def _class_members(cls: Any) -> set[str]:
    """Public members declared in the class body (not instance attributes; not what an extension synthesised,
    such as a dataclass's __init__, which has no line)."""
    return {name for name, member in _public_members(cls).items()
            if not _instance_attribute(member) and (member.is_alias or member.lineno)}


def main_guard_names(file: Path) -> set[str]:
    """Names bound at the top of an `if __name__ == "__main__":` block: script-only, left out on both sides."""
    try:
        tree = ast.parse(file.read_bytes())
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') in (
                '__name__ == "__main__"', '"__main__" == __name__'):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    names.add(sub.id)
                elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.add(sub.name)
                elif isinstance(sub, ast.alias):
                    names.add((sub.asname or sub.name).split(".")[0])
    return names


@dataclass
class ModuleApi:
    exports: dict[str, set[str] | None] = field(default_factory=dict)  # name → class members (None: not a class)
    functions: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # "f" / "Cls.m" → parameters + returns


def _signature(fn: Any) -> tuple[Any, ...]:
    params = tuple((p.name, str(p.kind.value), str(p.annotation), str(p.default)) for p in fn.parameters)
    return (*params, str(fn.returns))


def griffe_api(package_dir: Path) -> dict[str, ModuleApi]:
    """{file path relative to package_dir: its API} for every module of the package's top-level packages."""
    out: dict[str, ModuleApi] = {}
    for name in top_packages(package_dir):
        for module in _modules(_griffe_load(package_dir, name)):
            rel = Path(module.filepath).resolve().relative_to(package_dir.resolve()).as_posix()
            api = ModuleApi()
            for member_name, obj in _public_members(module).items():
                if _dunder(member_name) or (not obj.is_alias and obj.is_module
                                             and member_name not in (module.exports or ())):
                    continue  # a submodule is a file, not an export, unless __all__ lists it
                target = obj
                if obj.is_alias:
                    try:
                        target = obj.final_target
                    except Exception:
                        target = None
                if target is not None and not obj.is_alias and target.is_class:
                    api.exports[member_name] = _class_members(target)
                    for m_name, member in _public_members(target).items():
                        if not member.is_alias and member.is_function:
                            api.functions[f"{member_name}.{m_name}"] = _signature(member)
                else:
                    api.exports[member_name] = None
                    if target is not None and not obj.is_alias and target.is_function:
                        api.functions[member_name] = _signature(target)
            out[rel] = api
    return out


# --- ast + importlib: import edges ------------------------------------------------------------------------------

def _find(module: str, src: Path) -> Path | None:
    """The file of a dotted module under src (PathFinder, one package level at a time; nothing is run)."""
    path, spec = [str(src)], None
    for part in module.split("."):
        if spec is not None:
            if not spec.submodule_search_locations:
                return None
            path = list(spec.submodule_search_locations)
        spec = importlib.machinery.PathFinder.find_spec(part, path)
        if spec is None:
            return None
    if spec is None or spec.origin in (None, "namespace"):
        return None
    return Path(spec.origin)


def _module_name(file: Path, src: Path) -> tuple[str, str]:
    """(dotted module name, its package) of a file under src."""
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def oracle_edges(package_dir: Path, files: list[str]) -> set[tuple[str, str]]:
    src = source_root(package_dir)
    edges: set[tuple[str, str]] = set()
    for rel in files:
        file = package_dir / rel
        _name, package = _module_name(file, src)
        try:
            tree = ast.parse(file.read_bytes())
        except SyntaxError:
            continue
        targets: list[Path | None] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets += [_find(a.name, src) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                try:
                    base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) \
                        if node.level else node.module or ""
                except (ImportError, ValueError):
                    continue
                for alias in node.names:
                    sub = _find(f"{base}.{alias.name}", src) if alias.name != "*" else None
                    targets.append(sub or _find(base, src))
        for target in targets:
            if target is not None:
                to = target.resolve().relative_to(package_dir.resolve()).as_posix()
                if to != rel:
                    edges.add((rel, to))
    return edges


# --- code3 ------------------------------------------------------------------------------------------------------

def scan(package_dir: Path) -> MergedSkeleton:
    return TreeSitterCodeParser(workers=1).scan(package_dir)


def package_files(package_dir: Path) -> list[str]:
    src = source_root(package_dir)
    out = []
    for name in top_packages(package_dir):
        out += [p.relative_to(package_dir).as_posix() for p in sorted((src / name).rglob("*.py"))]
    return out


def ours_api(merged: MergedSkeleton, files: list[str]) -> dict[str, dict[str, set[str] | None]]:
    by_path = {f.path: f for f in merged.files}
    out = {}
    for rel in files:
        sk = by_path.get(rel)
        out[rel] = {e.name: ({m.name for m in e.members} if e.kind == "class" else None)
                    for e in (sk.exports if sk else [])}
    return out


def ours_edges(merged: MergedSkeleton, files: list[str]) -> set[tuple[str, str]]:
    wanted = set(files)
    return {(f.path, i.resolved) for f in merged.files if f.path in wanted for i in f.imports
            if i.resolved and i.resolved in wanted and i.resolved != f.path}


# --- measures ---------------------------------------------------------------------------------------------------

@dataclass
class Figures:
    package: str
    export_recall: float
    export_precision: float
    member_recall: float
    edge_recall: float
    edge_precision: float
    missed: list[str]
    extra: list[str]
    missed_members: list[str]
    missed_edges: list[tuple[str, str]]
    extra_edges: list[tuple[str, str]]
    counts: str = ""  # what the oracle holds (files, exports, members, edges)


def measure(package_dir: Path) -> Figures:
    files = package_files(package_dir)
    merged = scan(package_dir)
    oracle = griffe_api(package_dir)
    ours = ours_api(merged, files)
    guarded = {rel: main_guard_names(package_dir / rel) for rel in files}
    want = {(rel, n) for rel, api in oracle.items() for n in api.exports if n not in guarded.get(rel, ())}
    got = {(rel, n) for rel, names in ours.items() for n in names if n not in guarded.get(rel, ())}
    members_want = {(rel, n, m) for rel, api in oracle.items() for n, ms in api.exports.items() for m in ms or ()
                    if n not in guarded.get(rel, ())}
    members_got = {(rel, n, m) for rel, names in ours.items() for n, ms in names.items() for m in ms or ()}
    edges_want, edges_got = oracle_edges(package_dir, files), ours_edges(merged, files)
    return Figures(
        package_dir.name,
        ratio(len(want & got), len(want)), ratio(len(want & got), len(got)),
        ratio(len(members_want & members_got), len(members_want)),
        ratio(len(edges_want & edges_got), len(edges_want)), ratio(len(edges_want & edges_got), len(edges_got)),
        sorted(f"{r}:{n}" for r, n in want - got), sorted(f"{r}:{n}" for r, n in got - want),
        sorted(f"{r}:{n}.{m}" for r, n, m in members_want - members_got),
        sorted(edges_want - edges_got), sorted(edges_got - edges_want),
        f"{len(files)} files, {len(want)} exports, {len(members_want)} members, {len(edges_want)} edges",
    )


@dataclass
class DriftFigures:
    kinds: dict[str, tuple[float, float]]  # added/removed/changed → (precision, recall)
    breakage_recall: float
    misses: dict[str, list[str]]
    counts: str = ""  # what the oracles hold


def _oracle_drift(old: dict[str, ModuleApi], new: dict[str, ModuleApi]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {"added": set(), "removed": set(), "changed": set()}
    for rel in old.keys() | new.keys():
        before, after = old.get(rel, ModuleApi()), new.get(rel, ModuleApi())
        out["added"] |= {f"{rel}:{n}" for n in after.exports.keys() - before.exports.keys()}
        out["removed"] |= {f"{rel}:{n}" for n in before.exports.keys() - after.exports.keys()}
        out["changed"] |= {f"{rel}:{n}" for n in before.functions.keys() & after.functions.keys()
                           if before.functions[n] != after.functions[n]}
    return out


def _flat_functions(merged: MergedSkeleton) -> dict[tuple[str, str], Export]:
    out = {}
    for f in merged.files:
        for e in f.exports:
            if e.kind in FUNCTION_KINDS:
                out[(f.path, e.name)] = e
            for m in e.members:
                if m.kind in FUNCTION_KINDS:
                    out[(f.path, f"{e.name}.{m.name}")] = m
    return out


def _ours_drift(old: MergedSkeleton, new: MergedSkeleton, files: set[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {"added": set(), "removed": set(), "changed": set()}
    functions = _flat_functions(old).keys() | _flat_functions(new).keys()
    for item in compare(old, new).items:
        if item.path not in files:
            continue
        if item.change in ("added", "removed"):
            out[item.change].add(f"{item.path}:{item.name}")
        elif item.change in ("signature", "member-changed") and (item.path, item.name) in functions:
            out["changed"].add(f"{item.path}:{item.name}")
    return out


def _breakages(old_dir: Path, new_dir: Path) -> set[str]:
    """What griffe's breakage check flags, as file:object (removals and signature breaks of public objects)."""
    import griffe

    found = set()
    for name in top_packages(old_dir):
        old, new = _griffe_load(old_dir, name), _griffe_load(new_dir, name)
        for breakage in griffe.find_breaking_changes(old, new):
            obj = breakage.obj
            path = obj.path.split(".")
            module = obj
            while not module.is_module:
                module = module.parent
            file = Path(module.filepath).resolve()
            base = old_dir if file.is_relative_to(old_dir.resolve()) else new_dir
            rel = file.relative_to(base.resolve()).as_posix()
            local = ".".join(path[len(module.path.split(".")):])
            kind = breakage.kind.name
            if _dunder(path[-1]) or _instance_attribute(obj):
                continue  # module machinery and instance attributes: outside code3's skeleton (docstring)
            if kind == "OBJECT_REMOVED":
                found.add(f"removed {rel}:{local}")
            elif kind.startswith("PARAMETER_") or kind == "RETURN_CHANGED_TYPE":
                found.add(f"changed {rel}:{local}")
    return found


def measure_drift(old_dir: Path, new_dir: Path) -> DriftFigures:
    old_sk, new_sk = scan(old_dir), scan(new_dir)
    files = set(package_files(old_dir)) | set(package_files(new_dir))
    oracle = _oracle_drift(griffe_api(old_dir), griffe_api(new_dir))
    ours = _ours_drift(old_sk, new_sk, files)
    kinds, misses = {}, {}
    for kind in ("added", "removed", "changed"):
        hit = oracle[kind] & ours[kind]
        kinds[kind] = (ratio(len(hit), len(ours[kind])), ratio(len(hit), len(oracle[kind])))
        misses[f"{kind} missed"] = sorted(oracle[kind] - ours[kind])
        misses[f"{kind} extra"] = sorted(ours[kind] - oracle[kind])
    breaks = _breakages(old_dir, new_dir)
    seen = {f"removed {x}" for x in ours["removed"]} | {f"changed {x}" for x in ours["changed"]}
    # a breakage on a member of a removed or changed object counts when that object is reported
    covered = {b for b in breaks if b in seen or any(b.startswith(s + ".") for s in seen)}
    misses["breakages missed"] = sorted(breaks - covered)
    counts = ", ".join(f"{len(oracle[k])} {k}" for k in oracle) + f", {len(breaks)} breakages"
    return DriftFigures(kinds, ratio(len(covered), len(breaks)), misses, counts)


def rows(ci: bool = False) -> list[Row]:
    """Per package: export recall/precision, member recall, edge recall/precision; drift precision/recall."""
    out: list[Row] = []
    names = CI_PACKAGES if ci else PACKAGES
    for name in names:
        package_dir = CORPUS / name
        if not package_dir.is_dir():
            log(f"{package_dir} missing: run scripts/corpus/python.sh")
            continue
        f = measure(package_dir)
        log(f"{name} ({f.counts}): missed exports {f.missed[:8]} extra {f.extra[:8]} "
            f"missed members {f.missed_members[:8]} missed edges {f.missed_edges[:6]} extra edges {f.extra_edges[:6]}")
        out += api_rows(f"python {name}", f.export_recall, f.export_precision, f.member_recall, f.edge_recall,
                        f.edge_precision)
    old_dir, new_dir = (CORPUS / n for n in DRIFT)
    if old_dir.is_dir() and new_dir.is_dir():
        d = measure_drift(old_dir, new_dir)
        log(f"drift {DRIFT[0]}→{DRIFT[1]} (griffe: {d.counts})")
        for key, values in d.misses.items():
            if values:
                log(f"drift {key}: {values[:10]}")
        out += drift_rows(f"python drift {DRIFT[0]}→{DRIFT[1]}", d.kinds)
        out.append(target_row(f"python drift {DRIFT[0]}→{DRIFT[1]} griffe breakages reported", d.breakage_recall,
                              DRIFT_TARGET))
    return out


if __name__ == "__main__":
    print(format_table(rows(ci="--ci" in sys.argv)))
