"""reverse-spec's pure parts: the spec document (render/parse/accept), drift classification, the module graph."""

from __future__ import annotations

from domain.knowledge.drift import compare
from domain.knowledge.module_graph import build
from domain.knowledge.skeleton import Export, FileSkeleton, Import, MergedSkeleton
from domain.knowledge.spec_document import SECTION_KEYS, parse, parse_front, render, render_front, replace_baseline


def export(name: str, signature: str, kind: str = "function", doc: str | None = None, start: int = 1,
           members: list[Export] | None = None) -> Export:
    return Export(name=name, kind=kind, signature=signature, doc=doc, start_line=start, end_line=start + 2,
                  members=members or [])


def skeleton(*exports: Export, path: str = "pkg/a.py", imports: list[Import] | None = None,
             sha: str = "0" * 64) -> MergedSkeleton:
    f = FileSkeleton(path=path, language="python", lines=10, sha256=sha, exports=list(exports),
                     imports=imports or [])
    return MergedSkeleton.build("pkg", [f])


BASE = skeleton(
    export("run", "def run(x: int, y: int = 2) -> int", doc="Run once."),
    export("Engine", "class Engine", kind="class", start=10,
           members=[export("start", "def start(self) -> None", kind="method", start=11)]),
    export("old", "def old() -> None", start=20),
    imports=[Import(specifier="os", names=["os"]), Import(specifier="json", names=["json"])],
)


# -- the document ---------------------------------------------------------------------------------------------

def test_front_matter_round_trips_scalars_lists_and_quotes() -> None:
    front = {"type": "module-spec", "version": 3, "sourceTarget": 'src/we"ird: path',
             "relatedFiles": ["a.py", "b c.py"],
             "lastUpdated": "2026-11-23T06:00:00Z", "confidence": "high", "skeletonHash": "ab" * 32, "model": "m"}
    assert parse_front(render_front(front) + "\n# x\n") == front


def test_rendered_spec_parses_back_with_nine_sections_and_its_baseline() -> None:
    sections = {key: f"text of {key}" for key in SECTION_KEYS}
    tricky = skeleton(export("f", "def f() -> None", doc="closes a comment --> and <!-- opens one"))
    text = render({"type": "module-spec", "version": 1, "sourceTarget": "pkg"}, "Module spec: pkg", sections, tricky)
    assert text.count("<!-- baseline-skeleton:") == 1 and "```mermaid\nclassDiagram" in text
    assert "```mermaid\ngraph LR" in text and "## File inventory" in text
    document = parse(text)
    assert document.sections == sections
    assert document.baseline == tricky
    assert document.version == 1


def test_accepting_drift_rewrites_the_baseline_and_keeps_the_prose_byte_for_byte() -> None:
    sections = {key: f"hand-edited {key} ✍" for key in SECTION_KEYS}
    text = render({"type": "module-spec", "version": 2, "skeletonHash": "old"}, "T", sections, BASE)
    changed = skeleton(export("run", "def run(x: int) -> int"))
    updated = replace_baseline(text, changed, {"skeletonHash": "new"})
    prose = text[text.index("## 1."):text.index("## Diagrams")]
    assert prose in updated
    assert parse(updated).baseline == changed
    assert parse_front(updated)["skeletonHash"] == "new" and parse_front(updated)["version"] == 2
    assert compare(parse(updated).baseline, changed).items == []


# -- drift ----------------------------------------------------------------------------------------------------

def test_no_drift_against_itself() -> None:
    drift = compare(BASE, BASE)
    assert not drift.has_drift and drift.summary()["totalChanges"] == 0


def test_removed_export_is_high_signature_and_member_changes_medium_additions_low() -> None:
    current = skeleton(
        export("run", "def run(x: int, y: str = 2) -> int", doc="Run once."),
        export("Engine", "class Engine", kind="class", start=10,
               members=[export("stop", "def stop(self) -> None", kind="method", start=11)]),
        export("new", "def new() -> None", start=20),
        imports=[Import(specifier="os", names=["os"]), Import(specifier="json", names=["json"])],
    )
    drift = compare(BASE, current)
    found = {(i.severity, i.change, i.name) for i in drift.items}
    assert found == {("high", "removed", "old"), ("medium", "signature", "run"),
                     ("medium", "member-removed", "Engine.start"), ("medium", "member-added", "Engine.stop"),
                     ("low", "added", "new")}
    assert drift.summary()["high"] == 1 and drift.summary()["medium"] == 3 and drift.summary()["low"] == 1
    assert "regenerate" in drift.recommendation()


def test_kind_change_is_medium() -> None:
    current = skeleton(export("run", "def run(x: int, y: int = 2) -> int"),
                       export("Engine", "Engine = make_engine()", kind="variable", start=10),
                       export("old", "def old() -> None", start=20), imports=BASE.files[0].imports)
    assert [(i.severity, i.change) for i in compare(BASE, current).items] == [("medium", "kind")]


def test_reformatting_is_noise_counted_never_drift() -> None:
    current = skeleton(
        export("run", "def run(\n    x: int,\n    y: int = 2,\n) -> int", doc="Runs once, now documented better.",
               start=3),
        export("Engine", "class Engine", kind="class", start=14,
               members=[export("start", "def start(self)  ->  None", kind="method", start=15)]),
        export("old", "def old() -> None", start=25),
        imports=[Import(specifier="json", names=["json"]), Import(specifier="os", names=["os"])],
        sha="1" * 64,
    )
    drift = compare(BASE, current)
    assert drift.items == [], drift.items
    noise = drift.summary()["filteredNoise"]
    assert noise["whitespace"] >= 2 and noise["trailingCommas"] == 1 and noise["comments"] == 1
    assert noise["importOrder"] == 1 and noise["lineMoves"] >= 3
    assert drift.recommendation().startswith("nothing to do")


def test_a_body_only_change_is_counted_as_noise() -> None:
    current = BASE.model_copy(update={"files": [BASE.files[0].model_copy(update={"sha256": "f" * 64})]})
    drift = compare(BASE, current)
    assert not drift.has_drift and drift.summary()["filteredNoise"]["bodyOnly"] == 1


def test_a_removed_file_removes_all_its_exports_and_a_new_dependency_is_low() -> None:
    other = FileSkeleton(path="pkg/b.py", language="python", lines=1, sha256="2" * 64,
                         exports=[export("b", "def b() -> None")])
    with_b = MergedSkeleton.build("pkg", [*BASE.files, other])
    assert {(i.severity, i.name) for i in compare(with_b, BASE).items} == {("high", "b")}
    more_imports = skeleton(*BASE.files[0].exports, imports=[*BASE.files[0].imports, Import(specifier="re")])
    assert [(i.severity, i.change, i.name) for i in compare(BASE, more_imports).items] == [("low", "dependency", "re")]


# -- module graph ---------------------------------------------------------------------------------------------

def _file(path: str, *targets: str) -> FileSkeleton:
    return FileSkeleton(path=path, language="python", lines=1, sha256="0" * 64,
                        exports=[export(path.replace("/", "_").removesuffix(".py"), "def x() -> None")],
                        imports=[Import(specifier=t, resolved=t) for t in targets])


def test_modules_come_leaves_first_and_cycles_are_reported_and_broken_deterministically() -> None:
    merged = MergedSkeleton.build(".", [
        _file("app/main.py", "core/engine.py", "util/text.py"),
        _file("core/engine.py", "util/text.py"),
        _file("util/text.py"),
        _file("cyc_b/b.py", "cyc_a/a.py"),
        _file("cyc_a/a.py", "cyc_b/b.py"),
        _file("top.py", "app/main.py"),
    ])
    graph = build(merged)
    assert graph.order == ["util", "core", "app", ".", "cyc_a", "cyc_b"]
    assert graph.cycles == [["cyc_a", "cyc_b"]]
    assert graph.broken == [("cyc_a", "cyc_b")]
    assert build(merged).keys() == graph.keys()


def test_a_changed_leaf_changes_its_key_and_its_dependants_keys_only() -> None:
    files = [_file("app/main.py", "core/engine.py"), _file("core/engine.py", "util/text.py"), _file("util/text.py"),
             _file("other/o.py")]
    before = build(MergedSkeleton.build(".", files)).keys()
    leaf = files[2].model_copy(update={"exports": [*files[2].exports, export("added", "def added() -> None")],
                                       "sha256": "1" * 64})  # new content, new hash: surfaces are kept per content
    after = build(MergedSkeleton.build(".", [*files[:2], leaf, files[3]])).keys()
    assert {m for m in before if before[m] != after[m]} == {"util", "core", "app"}
