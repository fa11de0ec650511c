"""Go and Rust skeletons, import edges and drift on real Debian-packaged sources (issue 19).

Run: `scripts/corpus/debian.sh` (or scripts/fetch_corpus.sh), then `.venv/bin/python -m benchmarks.realcode_go_rust`
(`--ci` measures the same two packages: both are small). The corpus is $CODE3_CORPUS_DIR/debian (default
.cache/corpus/debian): cobra 1.6.1 (golang-github-spf13-cobra-dev) and serde 1.0.152 (librust-serde-dev).

Oracles:
- Go exports and members: go/parser (tests/tools/go_exports.go) on every .go file `go list` names in a package
  (GoFiles, IgnoredGoFiles, TestGoFiles, XTestGoFiles), methods as "Type.Method"; the functions `go test` runs
  are not exports (`go help testfunc`);
- Go import edges: `GO111MODULE=off GOPATH=<tmp>:/usr/share/gocode go list -e -json ./...` on a copy under a
  temporary GOPATH (module mode cannot work offline): per package and file group (package, in-package tests,
  external tests) the import paths, each with the project directory it resolves to (a package of ./...) or none;
- Rust: no tool of the language answers offline (rustdoc's JSON needs a nightly compiler and the crate's
  dependencies), so the fixtures in SERDE are checked by hand against serde 1.0.152's sources (see there);
- drift: scripted edits of a temporary copy (exported functions removed, signatures changed — a parameter
  added —, types added), compared by reverse-spec's machinery (domain.knowledge.drift.compare) with what the script did;
  for Go, added and removed are what go/parser sees before and after the edits.
Targets (issue 19): ≥ 0.98 export recall and precision, ≥ 0.95 member recall and edge recall/precision,
≥ 0.95 drift precision and recall for added, removed and changed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from adapters.code_parser.treesitter import TreeSitterCodeParser  # noqa: E402
from benchmarks.realcode_scoring import CORPUS as CORPUS_ROOT  # noqa: E402
from benchmarks.realcode_scoring import api_rows, drift_rows, log, ratio  # noqa: E402
from benchmarks.report import Row, format_table  # noqa: E402
from domain.knowledge.drift import compare  # noqa: E402
from domain.knowledge.skeleton import Export, MergedSkeleton  # noqa: E402

CORPUS = CORPUS_ROOT / "debian"
GO_PACKAGES = ("cobra-1.6.1",)
RUST_PACKAGES = ("serde-1.0.152",)
GOPATH_DEBIAN = "/usr/share/gocode"
DRIFT_EVERY = 3  # every third candidate of each kind is edited


@dataclass
class Figures:
    export_recall: float
    export_precision: float
    member_recall: float
    edge_recall: float
    edge_precision: float
    misses: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class DriftFigures:
    kinds: dict[str, tuple[float, float]]  # kind -> (precision, recall)
    counts: dict[str, int]
    misses: dict[str, list[str]] = field(default_factory=dict)


def scan(root: Path) -> MergedSkeleton:
    return TreeSitterCodeParser(workers=1).scan(root)


def _compare(expected: set[Any], found: set[Any], misses: dict[str, list[str]], what: str) -> tuple[float, float]:
    misses[f"{what} missed"] = sorted(map(str, expected - found))
    misses[f"{what} extra"] = sorted(map(str, found - expected))
    hit = len(expected & found)
    return ratio(hit, len(expected)), ratio(hit, len(found))


# --- Go -----------------------------------------------------------------------------------------------------------

def _go_env(gopath: str) -> dict[str, str]:
    return {**os.environ, "GO111MODULE": "off", "GOPATH": gopath, "GOFLAGS": "-mod=mod", "GOPROXY": "off",
            "GOCACHE": str(ROOT / ".cache" / "go-build"), "CGO_ENABLED": "0"}


@cache
def go_exports_tool() -> Path:
    """tests/tools/go_exports.go built once per process (into .cache/, never committed)."""
    go = shutil.which("go")
    if go is None:
        raise RuntimeError("go is not installed (apt-get install golang-go)")
    out = ROOT / ".cache" / "go_exports"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([go, "build", "-o", str(out), str(ROOT / "tests" / "tools" / "go_exports.go")], check=True,
                   env=_go_env(GOPATH_DEBIAN), capture_output=True, timeout=240)
    return out


def go_ast(root: Path, files: Iterable[str]) -> dict[str, dict[str, list[str] | None]]:
    """go/parser's exports per file: {path: {name: [members] | None}}."""
    rels = sorted(files)
    out = subprocess.run([str(go_exports_tool()), *rels], cwd=root, capture_output=True, text=True, check=True,
                         timeout=120)
    return json.loads(out.stdout)


def _json_stream(text: str) -> list[dict[str, Any]]:
    decoder, out, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        obj, i = decoder.raw_decode(text, i)
        out.append(obj)


def go_module_path(root: Path) -> str:
    for line in (root / "go.mod").read_text().splitlines():
        if line.startswith("module "):
            return line.split()[1].strip('"')
    raise ValueError(f"{root}/go.mod has no module line")


def go_list(root: Path) -> list[dict[str, Any]]:
    """`go list -json ./...` in GOPATH mode on a copy under a temporary GOPATH (Dir made project-relative)."""
    module = go_module_path(root)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "src" / module
        shutil.copytree(root, copy)
        out = subprocess.run(["go", "list", "-e", "-json", "./..."], cwd=copy, capture_output=True, text=True,
                             env={**_go_env(f"{tmp}:{GOPATH_DEBIAN}"), "PWD": str(copy)}, check=True, timeout=120)
        packages = _json_stream(out.stdout)
        for p in packages:
            p["Dir"] = Path(p["Dir"]).relative_to(copy).as_posix() if p["Dir"] != str(copy) else ""
    return packages


GROUPS = (("GoFiles", "Imports"), ("TestGoFiles", "TestImports"), ("XTestGoFiles", "XTestImports"))


def _flatten_go(exports: list[Export]) -> dict[str, list[str] | None]:
    """Our exports as go_exports.go prints them: methods as "Type.Method", struct/interface members sorted."""
    out: dict[str, list[str] | None] = {}
    for e in exports:
        flatten = e.kind != "interface"
        if e.kind in ("interface", "struct"):
            out[e.name] = sorted({m.name for m in e.members if not flatten or m.kind != "method"})
        else:
            out[e.name] = None
        if flatten:
            out.update({f"{e.name}.{m.name}": None for m in e.members if m.kind == "method"})
    return out


def measure_go(root: Path) -> Figures:
    packages = go_list(root)
    merged = scan(root)
    by_path = {f.path: f for f in merged.files}
    files = []
    for p in packages:
        for key in ("GoFiles", "IgnoredGoFiles", "TestGoFiles", "XTestGoFiles"):
            files += [f"{p['Dir']}/{n}" if p["Dir"] else n for n in p.get(key) or [] if n.endswith(".go")]
    oracle = go_ast(root, files)
    misses: dict[str, list[str]] = {}
    exp_names = {(path, name) for path, names in oracle.items() for name in names or {}}
    exp_members = {(path, name, m) for path, names in oracle.items() for name, ms in (names or {}).items()
                   for m in ms or []}
    ours_names, ours_members = set(), set()
    for path in oracle:
        flat = _flatten_go(by_path[path].exports) if path in by_path else {}
        ours_names |= {(path, name) for name in flat}
        ours_members |= {(path, name, m) for name, ms in flat.items() for m in ms or []}
    export_recall, export_precision = _compare(exp_names, ours_names, misses, "exports")
    member_recall, _ = _compare(exp_members, ours_members, misses, "members")
    dirs = {p["ImportPath"]: p["Dir"] for p in packages}
    exp_edges, ours_edges = set(), set()
    for p in packages:
        for files_key, imports_key in GROUPS:
            for spec in p.get(imports_key) or []:
                exp_edges.add((p["Dir"], files_key, spec, dirs.get(spec)))
            for name in p.get(files_key) or []:
                sk = by_path.get(f"{p['Dir']}/{name}" if p["Dir"] else name)
                for imp in sk.imports if sk else []:
                    target = os.path.dirname(imp.resolved) if imp.resolved else None
                    ours_edges.add((p["Dir"], files_key, imp.specifier, target))
    edge_recall, edge_precision = _compare(exp_edges, ours_edges, misses, "edges")
    return Figures(export_recall, export_precision, member_recall, edge_recall, edge_precision, misses)


_GO_FUNC = re.compile(r"^func (\([^)]*\) )?([A-Z]\w*)(\[[^\]]*\])?\(", re.MULTILINE)


def _go_edits(text: str, path: str, counter: dict[str, int]) -> tuple[str, set[str]]:
    """Every DRIFT_EVERY-th exported func of a non-test file removed, every other one's signature changed (a
    parameter added first); a type added at the end. Returns the new text and "changed path:Name" expected."""
    changed: set[str] = set()
    out, last = [], 0
    for m in _GO_FUNC.finditer(text):
        recv = re.search(r"\*?(\w+)(\[[^\]]*\])?\)\s*$", m.group(1) or "")
        name = f"{recv.group(1)}.{m.group(2)}" if recv else m.group(2)
        if recv and not recv.group(1)[:1].isupper():
            continue
        counter["funcs"] += 1
        turn = counter["funcs"] % DRIFT_EVERY
        if turn == 0:  # remove: up to the closing brace at column 0 (gofmt's layout)
            end = text.find("\n}\n", m.end())
            if end < 0:
                continue
            out.append(text[last:m.start()])
            last = end + 3
        elif turn == 1:  # change: a leading parameter
            out.append(text[last:m.end()])
            rest = text[m.end():]
            out.append("code3Drift int" + ("" if rest.startswith(")") else ", "))
            last = m.end()
            changed.add(f"{path}:{name}")
    out.append(text[last:])
    counter["types"] += 1
    new_text = "".join(out) + f"\n// Code3Added{counter['types']} was added by the drift script.\n" \
                              f"type Code3Added{counter['types']} struct{{ Field int }}\n"
    return new_text, changed


def _drift_figures(expected: dict[str, set[str]], merged_before: MergedSkeleton,
                   merged_after: MergedSkeleton) -> DriftFigures:
    ours: dict[str, set[str]] = {"added": set(), "removed": set(), "changed": set()}
    for item in compare(merged_before, merged_after).items:
        if item.change in ("added", "member-added"):
            ours["added"].add(f"{item.path}:{item.name}")
        elif item.change in ("removed", "member-removed"):
            ours["removed"].add(f"{item.path}:{item.name}")
        elif item.change in ("signature", "kind", "member-changed"):
            ours["changed"].add(f"{item.path}:{item.name}")
    kinds, misses = {}, {}
    for kind in ("added", "removed", "changed"):
        hit = expected[kind] & ours[kind]
        kinds[kind] = (ratio(len(hit), len(ours[kind])), ratio(len(hit), len(expected[kind])))
        misses[f"{kind} missed"] = sorted(expected[kind] - ours[kind])
        misses[f"{kind} extra"] = sorted(ours[kind] - expected[kind])
    return DriftFigures(kinds, {k: len(v) for k, v in expected.items()}, misses)


def _edited_copy(root: Path, tmp: Path, edit: Callable[[str, str, dict[str, int]], tuple[str, set[str]]],
                 suffix: str, skip: Callable[[str], bool]) -> tuple[Path, set[str]]:
    copy = tmp / "edited"
    shutil.copytree(root, copy)
    counter = {"funcs": 0, "types": 0}
    changed: set[str] = set()
    for file in sorted(copy.rglob(f"*{suffix}")):
        rel = file.relative_to(copy).as_posix()
        if skip(rel):
            continue
        text, found = edit(file.read_text(), rel, counter)
        file.write_text(text)
        changed |= found
    return copy, changed


def measure_go_drift(root: Path) -> DriftFigures:
    with tempfile.TemporaryDirectory() as tmp:
        copy, changed = _edited_copy(root, Path(tmp), _go_edits, ".go", lambda rel: rel.endswith("_test.go"))
        files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.go"))
        before, after = go_ast(root, files), go_ast(copy, files)
        names_before = {f"{p}:{n}" for p, names in before.items() for n in names or {}}
        names_after = {f"{p}:{n}" for p, names in after.items() for n in names or {}}
        expected = {"added": names_after - names_before, "removed": names_before - names_after,
                    "changed": changed & names_after}
        return _drift_figures(expected, scan(root), scan(copy))


# --- Rust ---------------------------------------------------------------------------------------------------------

# Checked by hand against serde 1.0.152's sources (librust-serde-dev 1.0.152-2), reading each file whole (15 of
# its 20 files; left out: the large de/impls.rs, de/value.rs, ser/impls.rs, private/de.rs, private/ser.rs):
# top-level exports are its `pub` items (fn, struct, enum, trait, type, const, static, `pub mod`), the names its
# `pub use`s bind (the alias when renamed), `#[macro_export]` macros, and the types of trait impls whose type is
# not declared in the file, named by the type (the trait's own name for a trait object `dyn Tr`; `T`/`A` for a
# blanket impl over a type parameter); members are pub fields, enum variants, trait items, pub fns of inherent
# impls and trait impls (named by the trait). Items a macro invocation expands to (`declare_error_trait!` in
# de/mod.rs and ser/mod.rs declares `pub trait Error`) are listed: code3 does not expand macros, so they count
# as missed. Edges: `mod x;` (with `#[path]`), `use crate::…`/`self::…`/`super::…` and 2015-edition crate-root
# paths (serde has no `edition`: `use lib::*` in de/mod.rs names the inline module `lib` of src/lib.rs) that name
# a file of the crate. Members None: not checked (Deserializer's and Visitor's 30-odd methods).
SERDE: dict[str, dict[str, Any]] = {
    "src/lib.rs": {
        "exports": {"de": None, "ser": None, "Deserialize": None, "Deserializer": None, "Serialize": None,
                    "Serializer": None, "__private": None},
        "edges": {"src/macros.rs", "src/integer128.rs", "src/de/mod.rs", "src/ser/mod.rs", "src/private/mod.rs",
                  "src/de/seed.rs", "src/std_error.rs"},
    },
    "src/de/ignored_any.rs": {
        "exports": {"IgnoredAny": ["Visitor", "Deserialize"]},
        "edges": {"src/lib.rs", "src/de/mod.rs"},
    },
    "src/ser/impossible.rs": {
        "exports": {"Impossible": ["SerializeSeq", "SerializeTuple", "SerializeTupleStruct",
                                   "SerializeTupleVariant", "SerializeMap", "SerializeStruct",
                                   "SerializeStructVariant"]},
        "edges": {"src/lib.rs", "src/ser/mod.rs"},
    },
    "src/de/mod.rs": {
        "exports": {
            "value": None, "IgnoredAny": None, "StdError": None, "Error": ["custom", "invalid_type",
                                                                            "invalid_value", "invalid_length",
                                                                            "unknown_variant", "unknown_field",
                                                                            "missing_field", "duplicate_field"],
            "Unexpected": ["Bool", "Unsigned", "Signed", "Float", "Char", "Str", "Bytes", "Unit", "Option",
                           "NewtypeStruct", "Seq", "Map", "Enum", "UnitVariant", "NewtypeVariant",
                           "TupleVariant", "StructVariant", "Other", "Display"],
            "Expected": ["fmt", "Display"], "Deserialize": ["deserialize", "deserialize_in_place"],
            "DeserializeOwned": [], "DeserializeSeed": ["Value", "deserialize"],
            "Deserializer": None, "Visitor": None,
            "SeqAccess": ["Error", "next_element_seed", "next_element", "size_hint"],
            "MapAccess": ["Error", "next_key_seed", "next_value_seed", "next_entry_seed", "next_key",
                          "next_value", "next_entry", "size_hint"],
            "EnumAccess": ["Error", "Variant", "variant_seed", "variant"],
            "VariantAccess": ["Error", "unit_variant", "newtype_variant_seed", "newtype_variant",
                              "tuple_variant", "struct_variant"],
            "IntoDeserializer": ["Deserializer", "into_deserializer"],
            "T": ["Expected", "DeserializeOwned"], "str": ["Expected"], "PhantomData": ["DeserializeSeed"],
            "A": ["SeqAccess", "MapAccess"],
        },
        "edges": {"src/lib.rs", "src/de/value.rs", "src/de/format.rs", "src/de/ignored_any.rs", "src/de/impls.rs",
                  "src/de/utf8.rs", "src/std_error.rs"},
    },
    "src/ser/mod.rs": {
        "exports": {
            "Impossible": None, "StdError": None, "Error": ["custom"], "Serialize": ["serialize"],
            "Serializer": None,
            "SerializeSeq": ["Ok", "Error", "serialize_element", "end"],
            "SerializeTuple": ["Ok", "Error", "serialize_element", "end"],
            "SerializeTupleStruct": ["Ok", "Error", "serialize_field", "end"],
            "SerializeTupleVariant": ["Ok", "Error", "serialize_field", "end"],
            "SerializeMap": ["Ok", "Error", "serialize_key", "serialize_value", "serialize_entry", "end"],
            "SerializeStruct": ["Ok", "Error", "serialize_field", "skip_field", "end"],
            "SerializeStructVariant": ["Ok", "Error", "serialize_field", "skip_field", "end"],
        },
        "edges": {"src/lib.rs", "src/ser/fmt.rs", "src/ser/impls.rs", "src/ser/impossible.rs", "src/std_error.rs"},
    },
    "src/private/size_hint.rs": {
        "exports": {"from_bounds": None, "cautious": None},
        "edges": {"src/lib.rs"},
    },
    "src/std_error.rs": {
        "exports": {"Error": ["source"]},
        "edges": {"src/lib.rs"},
    },
    "src/private/doc.rs": {
        "exports": {"Error": ["Error", "Display"], "__private_serialize": None, "__serialize_unimplemented": None,
                    "__serialize_unimplemented_method": None, "__serialize_unimplemented_helper": None},
        "edges": {"src/lib.rs", "src/ser/mod.rs"},  # `use ser;`
    },
    "src/integer128.rs": {"exports": {"serde_if_integer128": None}, "edges": set()},
    "src/macros.rs": {"exports": {"forward_to_deserialize_any": None, "forward_to_deserialize_any_method": None,
                                  "forward_to_deserialize_any_helper": None}, "edges": set()},
    "src/de/format.rs": {"exports": {}, "edges": {"src/lib.rs"}},  # Buf is pub(super)
    "src/de/utf8.rs": {"exports": {"encode": None, "Encode": ["as_str"]}, "edges": {"src/lib.rs"}},
    "src/ser/fmt.rs": {
        "exports": {"Error": ["Error"], "Formatter": ["Serializer"]},  # impls for fmt::Error, &mut Formatter
        "edges": {"src/lib.rs", "src/ser/mod.rs"},
    },
    "src/de/seed.rs": {"exports": {"InPlaceSeed": ["0", "DeserializeSeed"]}, "edges": {"src/de/mod.rs"}},
    "src/private/mod.rs": {
        "exports": {"de": None, "ser": None, "size_hint": None, "doc": None, "Clone": None, "From": None,
                    "Into": None, "Default": None, "fmt": None, "Formatter": None, "PhantomData": None,
                    "Option": None, "None": None, "Some": None, "ptr": None, "Result": None, "Err": None,
                    "Ok": None, "from_utf8_lossy": None, "ToString": None, "Vec": None, "TryFrom": None},
        "edges": {"src/lib.rs", "src/private/de.rs", "src/private/ser.rs", "src/private/size_hint.rs",
                  "src/private/doc.rs"},
    },
}


def measure_rust(root: Path) -> Figures:
    merged = scan(root)
    by_path = {f.path: f for f in merged.files}
    misses: dict[str, list[str]] = {}
    exp_names, exp_members, exp_edges = set(), set(), set()
    ours_names, ours_members, ours_edges = set(), set(), set()
    for path, fixture in SERDE.items():
        for name, members in fixture["exports"].items():
            exp_names.add((path, name))
            exp_members |= {(path, name, m) for m in members or []}
        exp_edges |= {(path, target) for target in fixture["edges"]}
        sk = by_path.get(path)
        for e in sk.exports if sk else []:
            ours_names.add((path, e.name))
            if fixture["exports"].get(e.name) is not None:
                ours_members |= {(path, e.name, m.name) for m in e.members}
        ours_edges |= {(path, i.resolved) for i in (sk.imports if sk else []) if i.resolved}
    export_recall, export_precision = _compare(exp_names, ours_names, misses, "exports")
    member_recall, _ = _compare(exp_members, ours_members, misses, "members")
    edge_recall, edge_precision = _compare(exp_edges, ours_edges, misses, "edges")
    return Figures(export_recall, export_precision, member_recall, edge_recall, edge_precision, misses)


_RUST_FN = re.compile(r"^pub fn (\w+)(<[^>(]*>)?\(", re.MULTILINE)
_RUST_TRAIT = re.compile(r"^pub trait (\w+)[^\n]*\{\n(.*?)^\}\n", re.MULTILINE | re.DOTALL)
_RUST_TRAIT_FN = re.compile(r"^    fn (\w+)(<[^>(]*>)?\(((&('\w+ )?(mut )?)?self\b)?", re.MULTILINE)


def _rust_candidates(text: str) -> list[tuple[int, int, str, bool, str]]:
    """(start, where a parameter goes, name, after self, "fn" | "method") of the top-level `pub fn`s and the
    methods of `pub trait`s (rustfmt's layout: a trait's methods indented by four, its closing brace at column 0)."""
    found = [(m.start(), m.end(), m.group(1), False, "fn") for m in _RUST_FN.finditer(text)]
    for trait in _RUST_TRAIT.finditer(text):
        for m in _RUST_TRAIT_FN.finditer(text, trait.start(2), trait.end(2)):
            found.append((m.start(), m.end(), f"{trait.group(1)}.{m.group(1)}", bool(m.group(3)), "method"))
    return sorted(found)


def _rust_edits(text: str, path: str, counter: dict[str, int],
                record: dict[str, set[str]] | None = None) -> tuple[str, set[str]]:
    """Every DRIFT_EVERY-th candidate (`_rust_candidates`) removed, every other one's signature changed (a
    parameter added, after self for a method); a pub struct added at the end of each file."""
    changed: set[str] = set()
    out, last = [], 0
    for start, param, name, after_self, kind in _rust_candidates(text):
        if start < last:
            continue
        counter["funcs"] += 1
        turn = counter["funcs"] % DRIFT_EVERY
        if turn == 0:
            if kind == "fn":
                close = text.find("\n}\n", param)
                end = close + 3 if close >= 0 else -1
            else:  # a required method ends at its `;`, a provided one at the brace closing its body
                semi, brace = text.find(";", param), text.find("{", param)
                close = text.find("\n    }\n", param)
                required = 0 <= semi < (brace if brace >= 0 else len(text))
                end = semi + 1 if required else (close + 7 if close >= 0 else -1)
            if end < 0:
                continue
            out.append(text[last:start])
            last = end
            if record is not None:
                record["removed"].add(f"{path}:{name}")
        elif turn == 1:
            out.append(text[last:param])
            rest = text[param:]
            if after_self:
                out.append(", code3_drift: u8")
            else:
                out.append("code3_drift: u8" + ("" if rest.lstrip().startswith(")") else ", "))
            last = param
            changed.add(f"{path}:{name}")
    out.append(text[last:])
    counter["types"] += 1
    if record is not None:
        record["added"].add(f"{path}:Code3Added{counter['types']}")
    return "".join(out) + f"\n/// Added by the drift script.\npub struct Code3Added{counter['types']};\n", changed


def measure_rust_drift(root: Path) -> DriftFigures:
    """Expected: the script's own record (the fns and trait methods it cut or changed, the structs it added)."""
    record: dict[str, set[str]] = {"added": set(), "removed": set()}

    def edit(text: str, path: str, counter: dict[str, int]) -> tuple[str, set[str]]:
        return _rust_edits(text, path, counter, record)

    with tempfile.TemporaryDirectory() as tmp:
        copy, changed = _edited_copy(root, Path(tmp), edit, ".rs", lambda rel: not rel.startswith("src/"))
        expected = {"added": record["added"], "removed": record["removed"], "changed": changed}
        return _drift_figures(expected, scan(root), scan(copy))


# --- rows ---------------------------------------------------------------------------------------------------------

def _figure_rows(prefix: str, f: Figures) -> list[Row]:
    return api_rows(prefix, f.export_recall, f.export_precision, f.member_recall, f.edge_recall, f.edge_precision)


def _drift_rows(prefix: str, d: DriftFigures) -> list[Row]:
    return drift_rows(f"{prefix} drift", {f"{kind} ({d.counts[kind]})": pr for kind, pr in d.kinds.items()})


def _misses(name: str, misses: dict[str, list[str]]) -> None:
    shown = {k: v[:6] for k, v in misses.items() if v}
    log(f"{name}: {shown or 'nothing missed'}")


def rows(ci: bool = False) -> list[Row]:
    """Per package: export recall/precision, member recall, edge recall/precision; drift precision/recall.
    `ci` changes nothing: the CI subset is the whole Debian corpus (two small packages)."""
    out: list[Row] = []
    for name in GO_PACKAGES:
        root = CORPUS / name
        if not root.is_dir():
            log(f"{root} missing: run scripts/corpus/debian.sh")
            continue
        f, d = measure_go(root), measure_go_drift(root)
        _misses(f"go {name}", {**f.misses, **d.misses})
        out += _figure_rows(f"go {name}", f) + _drift_rows(f"go {name}", d)
    for name in RUST_PACKAGES:
        root = CORPUS / name
        if not root.is_dir():
            log(f"{root} missing: run scripts/corpus/debian.sh")
            continue
        f, d = measure_rust(root), measure_rust_drift(root)
        _misses(f"rust {name}", {**f.misses, **d.misses})
        out += _figure_rows(f"rust {name} (hand-checked files)", f) + _drift_rows(f"rust {name}", d)
    return out


if __name__ == "__main__":
    print(format_table(rows(ci="--ci" in sys.argv)))
