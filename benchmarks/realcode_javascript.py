"""JavaScript and TypeScript skeletons, import edges and drift on real npm packages, against Node and tsc (issue 19).

Run: `scripts/corpus/npm.sh` (or scripts/fetch_corpus.sh), then `.venv/bin/python -m benchmarks.realcode_javascript`
(`--ci`: only the two expresses, as tests/realcode/test_javascript.py). The corpus is installed under
$CODE3_CORPUS_DIR/npm (default .cache/corpus/npm): express 4.22.3 and 5.3.0 and lodash 4.18.1 (CommonJS), got
16.1.0 (ES modules compiled to dist/source/*.js with their .d.ts), rxjs 7.8.2 (its TypeScript sources, src/, the
declarations it ships, dist/types/, and the CommonJS TypeScript compiled them to, dist/cjs/: ES5 classes).

Oracles:
- CommonJS — Node itself (tests/tools/cjs_oracle.js): exports are `Object.keys(require(file))` plus "export="
  when module.exports is callable; members are the prototype's own properties of an exported constructor; edges
  are the files Node's loader resolves (Module._resolveFilename) for each require() a file makes while loading.
  A file whose module.exports is another package file's (`module.exports = require('./lib/express')`) has that
  file's names: code3 records it as a whole re-export (an import with names ["*"]), which this benchmark follows,
  as a consumer does. Names made by computed keys in a loop (`app[method] = …` over the HTTP methods) cannot be
  read from the text: a name (or member) counts only when the file defining it spells it where it defines it, as
  the TypeScript parser reads the file (`x.name =`, a key of an object literal that is not a call argument, a
  class member, `defineProperty(x, 'name', …)`); the others are counted in their own informational row.
  Members of a constructor count in the package file whose module.exports it is (lib/router/route.js for
  Route), not again in each file that hands it on (lib/express.js's `exports.Route = Route`), and only when the
  file spells them as members of that constructor (`Route.prototype.dispatch = …`, `X.prototype = {m: …}`,
  `defineProperty(X.prototype, "m", …)`, a class member; the oracle's spelledMembers, matched by the
  constructor's own name): lodash's prototype gets ~300 methods from `mixin(lodash, lodash)` at run time
  (`object.prototype[methodName] = …` over the statics), which the file spells as statics (`lodash.chunk =
  chunk`) or as another constructor's members (`LazyWrapper.prototype.compact`), never as lodash's: they are
  counted in the "members made by computed keys" row, as Node lists them, and left out of member recall.
  lodash is read as a reader reads it (adapters/code_parser/languages/ecmascript/commonjs.py): lodash.js and
  core.js are immediately invoked wrappers whose `(freeModule.exports = _)._ = _` sits behind environment
  checks, `_` being what runInContext() returns; fp/<category>.js is `convert(require('../<category>'))`, which
  Node shows to be the category module's own object (the oracle's reexports), mutated: the names convert adds
  at run time (`placeholder`, `convert`, aliases such as `all`) are spelled nowhere and counted as computed.
- ES modules and TypeScript — the TypeScript compiler: exports and class/interface members from its parser
  (tests/tools/ts_exports.js; `export *` adds no names of its own, as in code3), edges from ts.preProcessFile
  and ts.resolveModuleName (tests/tools/ts_imports.js; a .js file's import is the .js it loads at run time);
  for TypeScript sources (rxjs) also the public members of exported classes as the type checker lists them
  (tests/tools/ts_class_members.js: statics and parameter properties included, constructors not).
- Drift express 4.22.3 → 5.3.0, names only: the exports Node lists per file added and removed between the two
  releases (re-exporting files left out: their names are the other file's), against the added and removed
  exports of domain.knowledge.drift.compare on the two skeletons.
Targets (issue 19): ≥ 0.98 export recall and precision, ≥ 0.95 member recall and edge recall/precision, ≥ 0.95
drift precision and recall for added and removed exports.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from adapters.code_parser.scan import GENERATED_NAMES  # noqa: E402
from adapters.code_parser.treesitter import TreeSitterCodeParser  # noqa: E402
from benchmarks.realcode_scoring import CORPUS as CORPUS_ROOT  # noqa: E402
from benchmarks.realcode_scoring import MEMBER_TARGET, api_rows, drift_rows, log, ratio  # noqa: E402
from benchmarks.realcode_scoring import target_row as _target  # noqa: E402
from benchmarks.report import Row, format_table  # noqa: E402
from domain.knowledge.drift import compare  # noqa: E402
from domain.knowledge.skeleton import MergedSkeleton  # noqa: E402

CORPUS = CORPUS_ROOT / "npm"
TOOLS = ROOT / "tests" / "tools"
TYPESCRIPT = ROOT / ".cache" / "node" / "node_modules" / "typescript"


@dataclass(frozen=True)
class Package:
    spec: str  # name@version, the folder under CORPUS
    oracle: str  # "node" (CommonJS) or "tsc"
    under: str = ""  # the scanned root inside the package (got: its dist/)
    pattern: str = r"\.js$"  # the files measured, relative to the scanned root

    @property
    def root(self) -> Path:
        name = self.spec.rsplit("@", 1)[0]
        return CORPUS / self.spec / "node_modules" / name / self.under


CI_PACKAGES = (Package("express@4.22.3", "node"), Package("express@5.3.0", "node"))
PACKAGES = (*CI_PACKAGES,
            Package("lodash@4.18.1", "node"),
            Package("got@16.1.0", "tsc", "dist", r"^source/.*\.(js|d\.ts)$"),
            Package("rxjs@7.8.2", "tsc", "", r"^src/.*\.ts$"), Package("rxjs@7.8.2", "tsc", "dist/types", r"\.d\.ts$"),
            Package("rxjs@7.8.2", "node", "dist/cjs"))
DRIFT = CI_PACKAGES


def package_files(pkg: Package) -> list[str]:
    out = []
    for p in sorted(pkg.root.rglob("*")):
        rel = p.relative_to(pkg.root).as_posix()
        if p.is_file() and "node_modules" not in rel.split("/") and re.search(pkg.pattern, rel) and not (
                GENERATED_NAMES.search(rel)):  # minified bundles (lodash.min.js) are not read, by design
            out.append(rel)
    return out


def _node(script: str, *args: str) -> dict:
    done = subprocess.run(["node", str(TOOLS / script), *args], capture_output=True, text=True, timeout=600,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{script} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


@dataclass
class Api:
    """Per file: export name → member names (None when the oracle sees no members for it); edges; how many names
    and members were made by computed keys."""

    exports: dict[str, dict[str, set[str] | None]]
    edges: set[tuple[str, str]]
    reexports: dict[str, str]
    dynamic: int = 0
    dynamic_members: int = 0


def node_api(pkg: Package, files: list[str]) -> Api:
    found = _node("cjs_oracle.js", str(TYPESCRIPT), str(pkg.root), *files)
    exports: dict[str, dict[str, set[str] | None]] = {}
    dynamic = dynamic_members = 0
    for rel, info in found.items():
        if "error" in info:
            log(f"{pkg.spec} {rel}: Node could not load it: {info['error'][:200]}")
        # a re-exporting file's names are spelled in the file it hands on
        home = found[info["reexports"]] if info.get("reexports") in found else info
        spelled, spelled_members = set(home["spelled"]), set(home["spelledMembers"])
        names: dict[str, set[str] | None] = {}
        for n in info["exports"]:
            if n != "export=" and n not in spelled:
                dynamic += 1
                continue
            if info["homes"].get(n) in found:  # a constructor another package file exports: counted there
                names[n] = None
                continue
            ctor = info["constructors"].get(n, "")  # a member is spelled as one of that constructor, or of any class
            members = {m for m in info["members"].get(n, []) if f"*.{m}" in spelled_members
                       or f"{ctor}.{m}" in spelled_members}
            dynamic_members += len(info["members"].get(n, [])) - len(members)
            names[n] = members or None
        exports[rel] = names
    edges = {(rel, t) for rel, info in found.items() for t in info["edges"] if t in found}  # measured files only
    reexports = {rel: info["reexports"] for rel, info in found.items() if info.get("reexports")}
    return Api(exports, edges, reexports, dynamic, dynamic_members)


def tsc_api(pkg: Package, files: list[str]) -> Api:
    cwd = os.getcwd()
    os.chdir(pkg.root)  # the tools print the paths they are given: relative ones
    try:
        found = _node("ts_exports.js", str(TYPESCRIPT), *files)
        imports = _node("ts_imports.js", str(TYPESCRIPT), ".", *files)
    finally:
        os.chdir(cwd)
    exports = {rel: {n: (set(ms) if ms else None) for n, ms in names.items()} for rel, names in found.items()}
    return Api(exports, {(rel, t) for rel, ts in imports.items() for t in ts}, {})


def scan(pkg: Package) -> MergedSkeleton:
    return TreeSitterCodeParser(workers=1).scan(pkg.root)


def ours_api(merged: MergedSkeleton, files: list[str], follow_reexports: bool) -> Api:
    by_path = {f.path: f for f in merged.files}

    def names_of(rel: str, seen: frozenset[str]) -> dict[str, set[str] | None]:
        sk = by_path.get(rel)
        out: dict[str, set[str] | None] = {e.name: ({m.name for m in e.members} or None) for e in
                                           (sk.exports if sk else [])}
        if follow_reexports and sk is not None:  # CommonJS `module.exports = require("./m")`
            for imp in sk.imports:
                if imp.names == ["*"] and imp.resolved and imp.resolved not in seen:
                    for n, ms in names_of(imp.resolved, seen | {rel}).items():
                        out.setdefault(n, ms)
        return out

    wanted = set(files)
    exports = {rel: names_of(rel, frozenset()) for rel in files}
    edges = {(f.path, i.resolved) for f in merged.files if f.path in wanted for i in f.imports
             if i.resolved and i.resolved in wanted and i.resolved != f.path}
    return Api(exports, edges, {})


@dataclass
class Figures:
    package: str
    files: int
    export_recall: float
    export_precision: float
    member_recall: float
    edge_recall: float
    edge_precision: float
    dynamic: int
    dynamic_members: int
    missed: list[str]
    extra: list[str]
    missed_members: list[str]
    missed_edges: list[tuple[str, str]]
    extra_edges: list[tuple[str, str]]


def oracle_api(pkg: Package, files: list[str]) -> Api:
    return node_api(pkg, files) if pkg.oracle == "node" else tsc_api(pkg, files)


def measure(pkg: Package) -> Figures:
    files = package_files(pkg)
    oracle = oracle_api(pkg, files)
    ours = ours_api(scan(pkg), files, follow_reexports=pkg.oracle == "node")
    want = {(r, n) for r, names in oracle.exports.items() for n in names}
    got = {(r, n) for r, names in ours.exports.items() for n in names}
    m_want = {(r, n, m) for r, names in oracle.exports.items() for n, ms in names.items() for m in ms or ()}
    m_got = {(r, n, m) for r, names in ours.exports.items() for n, ms in names.items() for m in ms or ()}
    e_want, e_got = oracle.edges, ours.edges
    return Figures(
        pkg.spec, len(files),
        ratio(len(want & got), len(want)), ratio(len(want & got), len(got)), ratio(len(m_want & m_got), len(m_want)),
        ratio(len(e_want & e_got), len(e_want)), ratio(len(e_want & e_got), len(e_got)), oracle.dynamic,
        oracle.dynamic_members,
        sorted(f"{r}:{n}" for r, n in want - got), sorted(f"{r}:{n}" for r, n in got - want),
        sorted(f"{r}:{n}.{m}" for r, n, m in m_want - m_got), sorted(e_want - e_got), sorted(e_got - e_want),
    )


def class_member_recall(pkg: Package, merged: MergedSkeleton | None = None) -> tuple[float, int, list[str]]:
    """Public members of exported TypeScript classes found, against the type checker (tests/tools/
    ts_class_members.js: what a consumer of the class can use, parameter properties and statics included):
    (recall, how many the checker lists, those missed)."""
    files = [f for f in package_files(pkg) if f.endswith(".ts")]
    cwd = os.getcwd()
    try:
        found = _node("ts_class_members.js", str(TYPESCRIPT), str(pkg.root), *files)
    finally:
        os.chdir(cwd)
    want = {(rel, c, m) for rel, classes in found.items() for c, ms in classes.items() for m in ms}
    merged = merged or scan(pkg)
    got = {(f.path, e.name, m.name) for f in merged.files for e in f.exports if e.kind == "class"
           for m in e.members}
    return ratio(len(want & got), len(want)), len(want), sorted(f"{r}:{c}.{m}" for r, c, m in want - got)


@dataclass
class DriftFigures:
    kinds: dict[str, tuple[float, float]]  # added/removed → (precision, recall)
    misses: dict[str, list[str]]
    oracle_counts: dict[str, int]  # how many names Node sees added and removed


def _names(api: Api) -> set[str]:
    return {f"{r}:{n}" for r, names in api.exports.items() if r not in api.reexports for n in names}


def measure_drift(old: Package, new: Package) -> DriftFigures:
    old_files, new_files = package_files(old), package_files(new)
    before, after = _names(node_api(old, old_files)), _names(node_api(new, new_files))
    oracle = {"added": after - before, "removed": before - after}
    ours: dict[str, set[str]] = {"added": set(), "removed": set()}
    files = set(old_files) | set(new_files)
    for item in compare(scan(old), scan(new)).items:
        if item.path in files and item.change in ours:
            ours[item.change].add(f"{item.path}:{item.name}")
    kinds, misses = {}, {}
    for kind in ("added", "removed"):
        hit = oracle[kind] & ours[kind]
        kinds[kind] = (ratio(len(hit), len(ours[kind])), ratio(len(hit), len(oracle[kind])))
        misses[f"{kind} missed"] = sorted(oracle[kind] - ours[kind])
        misses[f"{kind} extra"] = sorted(ours[kind] - oracle[kind])
    return DriftFigures(kinds, misses, {k: len(v) for k, v in oracle.items()})


def rows(ci: bool = False) -> list[Row]:
    """Per package: export recall/precision, member recall, edge recall/precision; drift express 4 → 5."""
    out: list[Row] = []
    for pkg in CI_PACKAGES if ci else PACKAGES:
        if not pkg.root.is_dir():
            log(f"{pkg.root} missing: run scripts/corpus/npm.sh")
            continue
        f = measure(pkg)
        log(f"{pkg.spec} {pkg.under} ({f.files} files): missed exports {f.missed[:8]} extra {f.extra[:8]} "
            f"missed members {f.missed_members[:8]} missed edges {f.missed_edges[:6]} extra edges {f.extra_edges[:6]}")
        language = "javascript" if pkg.oracle == "node" else "typescript"
        label = f"{language} {pkg.spec}" + (f" {pkg.under}" if pkg.under else "")
        out += api_rows(label, f.export_recall, f.export_precision, f.member_recall, f.edge_recall, f.edge_precision)
        if pkg.oracle == "node":
            out.append(Row(f"{label} names made by computed keys (left out)", f.dynamic, "names"))
            out.append(Row(f"{label} members made by computed keys (left out)", f.dynamic_members, "members"))
        if pkg.pattern.endswith(r"\.ts$"):
            recall, total, missed = class_member_recall(pkg)
            log(f"{pkg.spec} class members (type checker, {total}): missed {missed[:8]}")
            out.append(_target(f"{label} class member recall (type checker, {total})", recall, MEMBER_TARGET))
    old, new = DRIFT
    if old.root.is_dir() and new.root.is_dir():
        d = measure_drift(old, new)
        for key, values in d.misses.items():
            if values:
                log(f"drift {key}: {values[:10]}")
        out += drift_rows(f"javascript drift {old.spec}→{new.spec}", d.kinds)
    return out


if __name__ == "__main__":
    print(format_table(rows(ci="--ci" in sys.argv)))
