"""Per-language fixture projects (tests/fixtures/code/<language>/): exports, kinds, members, resolved imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.code_parser.treesitter import TreeSitterCodeParser
from domain.skeleton import Export, FileSkeleton, MergedSkeleton

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "code"


@pytest.fixture(scope="module")
def parser() -> TreeSitterCodeParser:
    return TreeSitterCodeParser(workers=1)


def scan(parser: TreeSitterCodeParser, language: str) -> MergedSkeleton:
    merged = parser.scan(FIXTURES / language)
    for f in merged.files:
        assert f.parse_errors == [], (f.path, f.parse_errors)
    return merged


def file(merged: MergedSkeleton, path: str) -> FileSkeleton:
    found = merged.file(path)
    assert found is not None, [f.path for f in merged.files]
    return found


def shape(exports: list[Export]) -> dict[str, str]:
    return {e.name: e.kind for e in exports}


def members(exports: list[Export], name: str) -> dict[str, str]:
    found = [e for e in exports if e.name == name]
    assert found, (name, [e.name for e in exports])
    return shape(found[0].members)


def imports(f: FileSkeleton) -> list[tuple[str, str | None]]:
    return [(i.specifier, i.resolved) for i in f.imports]


def test_python(parser: TreeSitterCodeParser) -> None:
    m = scan(parser, "python")
    init = file(m, "pkg/__init__.py")
    assert shape(init.exports) == {"Engine": "other", "make": "function"}  # __all__ decides
    core = file(m, "pkg/core.py")
    assert shape(core.exports) == {"LIMIT": "const", "Base": "class", "Engine": "class", "fetch": "function"}
    assert members(core.exports, "Engine") == {"kind": "field", "__init__": "constructor", "run": "method",
                                               "label": "property", "start": "method"}
    engine = next(e for e in core.exports if e.name == "Engine")
    assert engine.doc == "Runs things." and engine.signature == "class Engine(Base)"
    run = next(e for e in engine.members if e.name == "run")
    assert run.signature == "def run(self, x: int, y: int = 2) -> int" and run.doc == "Run once."
    assert (run.start_line, run.end_line) == (24, 27)
    assert imports(core) == [("os", None), (".", "pkg/util.py"), (".util", "pkg/util.py"), (".util", "pkg/util.py")]
    util = file(m, "pkg/util.py")
    assert shape(util.exports) == {"VERSION": "const", "helper": "function", "build": "function",
                                   "conditional": "function"}
    assert imports(util) == [("pkg.core", "pkg/core.py")]  # the cycle core → util → core
    main = file(m, "main.py")
    assert imports(main) == [("json", None), ("pkg", "pkg/__init__.py"), ("pkg", "pkg/core.py"),
                             ("pkg.util", "pkg/util.py")]
    assert [i.names for i in main.imports] == [["json"], ["pkg"], ["core"], ["helper"]]
    assert main.exports == []


def test_typescript(parser: TreeSitterCodeParser) -> None:
    m = scan(parser, "typescript")
    engine = file(m, "src/engine.ts")
    assert engine.language == "typescript"
    assert shape(engine.exports) == {
        "Options": "interface", "Mode": "type", "Color": "enum", "Engine": "class", "DEFAULT_MODE": "const",
        "other": "const", "counter": "variable", "build": "function", "declared": "function",
        "Shapes": "namespace", "renamed": "const", "inner": "function"}
    assert members(engine.exports, "Engine") == {"name": "field", "count": "field", "constructor": "constructor",
                                                 "run": "method", "label": "property", "stop": "method"}
    assert members(engine.exports, "Options") == {"name": "field", "size": "field", "run": "method"}
    assert members(engine.exports, "Color") == {"Red": "enum_member", "Green": "enum_member"}
    cls = next(e for e in engine.exports if e.name == "Engine")
    assert cls.signature == "abstract class Engine<T = unknown> extends Base implements Runner"
    assert cls.doc == "Runs things."
    assert imports(engine) == [("./lib/util", "src/lib/util.ts"), ("./index", "src/index.ts")]  # cycle
    index = file(m, "src/index.ts")
    assert shape(index.exports) == {"assist": "other", "VERSION": "other", "make": "function", "default": "class"}
    assert next(e for e in index.exports if e.name == "make").doc == "Create an engine."
    assert imports(index) == [("./engine", "src/engine.ts"), ("./lib/util.js", "src/lib/util.ts"), ("react", None),
                              ("./lib", "src/lib/index.ts"), ("./lib/util", "src/lib/util.ts")]
    assert [i.names for i in index.imports] == [["Engine", "Options"], ["*"], ["default"], ["*"],
                                                ["helper", "VERSION"]]
    view = file(m, "src/view.tsx")
    assert view.language == "typescript" and shape(view.exports) == {"View": "function", "Page": "function"}
    assert imports(view) == [(".", "src/index.ts")]


def test_javascript(parser: TreeSitterCodeParser) -> None:
    m = scan(parser, "javascript")
    main = file(m, "lib/main.js")
    assert shape(main.exports) == {"main": "function", "Cli": "class", "default": "function"}
    assert members(main.exports, "Cli") == {"create": "method", "run": "method"}  # #secret is private
    assert imports(main) == [("fs", None), ("./helper", "lib/helper.js"), ("./esm.mjs", "lib/esm.mjs")]
    helper = file(m, "lib/helper.js")
    assert shape(helper.exports) == {"helper": "variable", "internal": "variable", "extra": "variable",
                                     "more": "function"}
    esm = file(m, "lib/esm.mjs")
    assert shape(esm.exports) == {"default": "function", "a": "const", "c": "const", "alias": "const"}


def test_go(parser: TreeSitterCodeParser) -> None:
    m = scan(parser, "go")
    engine = file(m, "pkg/core/engine.go")
    assert shape(engine.exports) == {
        "MaxSize": "const", "ModeFast": "const", "ModeSlow": "const", "Default": "variable", "Engine": "struct",
        "Options": "struct", "Runner": "interface", "ID": "type", "New": "function", "Map": "function"}
    assert members(engine.exports, "Engine") == {"Name": "field", "Builder": "field", "Options": "field",
                                                 "Run": "method"}
    assert members(engine.exports, "Runner") == {"Run": "method", "Stringer": "interface"}
    new = next(e for e in engine.exports if e.name == "New")
    assert (new.signature, new.doc) == ("func New(name string) *Engine", "New builds an engine.")
    assert imports(engine) == [("strings", None), ("example.com/app/pkg/util", "pkg/util")]
    assert shape(file(m, "pkg/core/extra.go").exports) == {"Engine.Stop": "method"}
    assert imports(file(m, "pkg/util/util.go")) == [("example.com/app/pkg/core", "pkg/core")]  # the cycle
    assert imports(file(m, "main.go")) == [("fmt", None), ("example.com/app/pkg/core", "pkg/core")]


def test_rust(parser: TreeSitterCodeParser) -> None:
    m = scan(parser, "rust")
    lib = file(m, "src/lib.rs")
    assert shape(lib.exports) == {"net": "module", "MAX": "const", "NAME": "variable", "Engine": "struct",
                                  "Mode": "enum", "Runner": "trait", "Map": "type", "make": "function",
                                  "engine": "macro", "Client": "other"}  # not internal, hidden, crate_only
    assert members(lib.exports, "Engine") == {"name": "field", "new": "method", "Runner": "impl"}
    assert members(lib.exports, "Mode") == {"Fast": "enum_member", "Slow": "enum_member"}
    assert members(lib.exports, "Runner") == {"run": "method", "stop": "method"}
    engine = next(e for e in lib.exports if e.name == "Engine")
    assert (engine.signature, engine.doc) == ("pub struct Engine<T>", "An engine.")
    assert imports(lib) == [("mod net", "src/net/mod.rs"), ("mod util", "src/util.rs"),
                            ("crate::util", "src/util.rs"), ("std::collections", None), ("net", "src/net/mod.rs")]
    assert lib.imports[3].names == ["HashMap", "HashSet"]
    assert imports(file(m, "src/util.rs")) == [("crate", "src/lib.rs")]  # the cycle lib → util → lib
    client = file(m, "src/net/client.rs")
    assert shape(client.exports) == {"Client": "struct", "raw": "function"}
    assert members(client.exports, "Client") == {"get": "method"}
    assert imports(client) == [("super::super::util", "src/util.rs")]
    assert imports(file(m, "src/net/mod.rs")) == [("mod client", "src/net/client.rs"),
                                                  ("self::client", "src/net/client.rs")]


def test_java(parser: TreeSitterCodeParser) -> None:
    m = scan(parser, "java")
    base = "src/main/java/com/acme/"
    engine = file(m, base + "core/Engine.java")
    assert shape(engine.exports) == {"Engine": "class"}  # Base is package-private
    assert members(engine.exports, "Engine") == {"MAX": "const", "name": "field", "alias": "field",
                                                 "Engine": "constructor", "run": "method", "map": "method",
                                                 "Mode": "enum", "Listener": "interface"}
    cls = engine.exports[0]
    assert cls.doc == "Runs things."
    assert next(x for x in cls.members if x.name == "map").signature == \
        "public <U> List<U> map(List<T> xs) throws Exception"
    assert imports(engine) == [("java.util.List", None), ("com.acme.util.Helper", base + "util/Helper.java"),
                               ("com.acme.util.*", base + "util"),
                               ("static com.acme.util.Helper.clean", base + "util/Helper.java")]
    assert members(file(m, base + "core/Runner.java").exports, "Runner") == {
        "VERSION": "const", "start": "method", "stop": "method"}
    helper = file(m, base + "util/Helper.java")
    assert members(helper.exports, "Helper") == {"clean": "method", "Pair": "record"}
    assert imports(helper) == [("com.acme.core.Engine", base + "core/Engine.java")]  # the cycle


def test_kotlin(parser: TreeSitterCodeParser) -> None:
    kt = file(scan(parser, "kotlin"), "src/main/kotlin/acme/Engine.kt")
    assert shape(kt.exports) == {"Engine": "class", "Runner": "interface", "Point": "class", "Color": "enum",
                                 "Registry": "object", "topLevel": "function", "answer": "const", "Name": "type"}
    assert members(kt.exports, "Engine") == {"name": "field", "label": "field", "run": "method", "create": "method"}
    assert members(kt.exports, "Color") == {"RED": "enum_member", "GREEN": "enum_member"}
    assert [(i.specifier, i.names) for i in kt.imports] == [
        ("kotlin.math.max", ["max"]), ("acme.util.Helper", ["H"]), ("acme.util.*", ["*"])]


def test_scala(parser: TreeSitterCodeParser) -> None:
    sc = file(scan(parser, "scala"), "src/main/scala/acme/Engine.scala")
    assert [(e.name, e.kind) for e in sc.exports] == [
        ("Engine", "class"), ("Runner", "trait"), ("Engine", "object"), ("Point", "class"), ("Shape", "class"),
        ("Color", "enum"), ("topLevel", "function"), ("answer", "const")]
    assert members(sc.exports, "Engine") == {"name": "field", "run": "method", "size": "field", "count": "field",
                                             "Id": "type"}
    assert members(sc.exports, "Point") == {"x": "field", "y": "field"}
    assert [(i.specifier, i.names) for i in sc.imports] == [
        ("scala.collection.mutable", ["mutable"]), ("acme.util", ["Helper", "Other"])]
