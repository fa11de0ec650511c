"""Per-language fixture projects (tests/fixtures/code/<language>/): exports, kinds, members, resolved imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.code_parser.treesitter import TreeSitterCodeParser
from domain.knowledge.skeleton import Export, FileSkeleton, MergedSkeleton

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
                                                 "run": "method", "label": "property", "stop": "method",
                                                 "size": "field"}  # constructor(…, public size: number)
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
    assert imports(engine) == [("strings", None), ("example.com/app/pkg/util", "pkg/util/util.go")]
    assert shape(file(m, "pkg/core/extra.go").exports) == {"Engine.Stop": "method"}
    # a package resolves to one of its files (no core.go nor doc.go in pkg/core: the first one)
    assert imports(file(m, "pkg/util/util.go")) == [("example.com/app/pkg/core", "pkg/core/engine.go")]  # the cycle
    assert imports(file(m, "main.go")) == [("fmt", None), ("example.com/app/pkg/core", "pkg/core/engine.go")]


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
    base = "src/main/kotlin/acme/util"
    assert [i.resolved for i in kt.imports] == [None, f"{base}/Helper.kt", base]


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
    assert [i.resolved for i in sc.imports] == [None, "src/main/scala/acme/util/Helper.scala"]


# language → {path: (exports {name: kind}, members {export: {member: kind}}, imports [(specifier, resolved)])}
EXPECTED: dict[str, dict[str, tuple[dict[str, str], dict[str, dict[str, str]], list[tuple[str, str | None]]]]] = {
    "c": {
        "include/lib/engine.h": (
            {"ENGINE_MAX": "macro", "ENGINE_SQUARE": "macro", "engine_t": "struct", "mode": "enum", "value": "union",
             "engine_new": "function", "engine_run": "function", "engine_count": "variable",
             "engine_twice": "function"},
            {"engine_t": {"name": "field", "size": "field"}, "mode": {"MODE_FAST": "enum_member",
                                                                       "MODE_SLOW": "enum_member"}},
            [("stddef.h", None), ("util.h", "include/lib/util.h")]),
        "include/lib/util.h": ({"util_clean": "function"}, {}, [("engine.h", "include/lib/engine.h")]),  # cycle
        "src/engine.c": (
            {"engine_count": "variable", "engine_new": "function", "engine_run": "function"},  # no static ones
            {}, [("stdlib.h", None), ("lib/engine.h", "include/lib/engine.h"), ("local.h", "src/local.h")]),
    },
    "cpp": {
        "include/shapes.hpp": (
            {"geo": "namespace", "distance": "function"},
            {"geo": {"Shape": "class", "Point": "struct", "clamp": "function", "Color": "enum", "Id": "type",
                     "detail": "namespace"}},
            [("string", None), ("base.hpp", "include/base.hpp")]),
        "src/shapes.cpp": ({"distance": "function"}, {}, [("shapes.hpp", "include/shapes.hpp"), ("cmath", None)]),
    },
    "c_sharp": {
        "Acme/Engine.cs": (
            {"Engine": "class", "IRunner": "interface", "Point": "struct", "Pair": "record", "Handler": "type"},
            {"Engine": {"Max": "const", "Name": "property", "Engine": "constructor", "Run": "method",
                        "Changed": "event", "Mode": "enum"},
             "IRunner": {"Run": "method"}, "Pair": {"A": "property", "B": "property"}},
            [("System", None), ("System.Collections.Generic", None), ("Acme.Util", None),
             ("Acme.Util.Helper", None)]),
        "Acme/Helper.cs": ({"Helper": "class", "Color": "enum"}, {"Helper": {"Clean": "method"}},
                           [("Acme.Core", None)]),
    },
    "swift": {
        "Sources/Acme/Engine.swift": (
            {"Engine": "class", "Runner": "protocol", "Point": "struct", "Color": "enum", "make": "function",
             "answer": "const", "Name": "type", "Base": "class"},
            {"Engine": {"name": "property", "init": "constructor", "run": "method", "hook": "method",
                        "describe": "method"},
             "Color": {"red": "enum_member", "green": "enum_member", "custom": "enum_member"}},
            [("Foundation", None), ("Swift.Array", None)]),
    },
    "dart": {
        "lib/engine.dart": (
            {"Engine": "class", "Runner": "class", "Logging": "mixin", "Color": "enum", "Callback": "type",
             "Shout": "extension", "make": "function", "version": "const"},
            {"Engine": {"name": "field", "max": "field", "Engine": "constructor", "named": "constructor",
                        "run": "method", "label": "property"}},
            [("dart:async", None), ("package:acme/src/util.dart", "lib/src/util.dart"),
             ("src/util.dart", "lib/src/util.dart"), ("src/util.dart", "lib/src/util.dart"),
             ("src/part.dart", "lib/src/part.dart")]),
        "lib/src/util.dart": ({"helper": "function", "build": "function"}, {},
                              [("../engine.dart", "lib/engine.dart")]),  # the cycle
    },
    "ruby": {
        "lib/acme.rb": ({"Acme": "module"}, {"Acme": {"VERSION": "const", "self.make": "method"}},
                        [("json", None), ("acme/engine", "lib/acme/engine.rb"), ("acme/util", "lib/acme/util.rb")]),
        "lib/acme/engine.rb": (
            {"Acme": "module", "top_level_helper": "function"}, {"Acme": {"Engine": "class"}},
            [("../acme", "lib/acme.rb")]),  # the cycle
    },
    "php": {
        "src/Engine.php": (
            {"VERSION": "const", "Engine": "class", "Runner": "interface", "Loggable": "trait", "Color": "enum",
             "make": "function"},
            {"Engine": {"MAX": "const", "name": "property", "__construct": "constructor", "run": "method",
                        "implicitPublic": "method", "create": "method"},
             "Color": {"Red": "enum_member", "Green": "enum_member"}},
            [("Acme\\Util\\Helper", "src/Util/Helper.php"), ("Acme\\Util\\Clean", None), ("Acme\\Util\\Trim", None),
             ("helpers.php", "src/helpers.php"), ("helpers.php", "src/helpers.php")]),
        "src/helpers.php": ({"helper": "function"}, {}, [("Engine.php", "src/Engine.php")]),
        "src/Util/Helper.php": ({"Helper": "class"}, {"Helper": {"clean": "method"}},
                                [("Acme\\Core\\Engine", None)]),  # not at its PSR-4 place, src/Core/Engine.php
    },
    "lua": {
        "acme/init.lua": ({"make": "function", "VERSION": "variable", "run": "function", "global_helper": "function"},
                          {}, [("acme.util", "acme/util.lua"), ("cjson", None)]),
        "acme/util.lua": ({"clean": "function", "method": "method"}, {}, [("acme", "acme/init.lua")]),
    },
    "bash": {
        "lib/main.sh": ({"ACME_HOME": "variable", "main": "function", "cleanup": "function"}, {},
                        [("./lib/util.sh", "lib/util.sh"), ("other.sh", None), ("lib/util.sh", "lib/util.sh")]),
        "lib/util.sh": ({"helper": "function"}, {}, [("lib/main.sh", "lib/main.sh")]),
    },
    "julia": {
        "src/Acme.jl": ({"Acme": "module"}, {"Acme": {"Engine": "struct", "run!": "function", "VERSION": "const"}},
                        [("LinearAlgebra", None), ("Base", None), ("util.jl", "src/util.jl")]),
        "src/util.jl": ({"clean": "function"}, {}, [("Acme.jl", "src/Acme.jl")]),
    },
    "elixir": {
        "lib/acme/engine.ex": (
            {"Acme.Engine": "module"},
            {"Acme.Engine": {"__struct__": "struct", "new/1": "function", "run/2": "function", "run/1": "function",
                             "debug/1": "macro", "is_small/1": "function"}},
            [("Acme.Util", "lib/acme/util.ex"), ("Enum", None), ("Logger", None), ("GenServer", None)]),
        "lib/acme/util.ex": ({"Acme.Util": "module", "Acme.Util.Inner": "module"},
                             {"Acme.Util": {"clean/1": "function"}}, [("Acme.Engine", "lib/acme/engine.ex")]),
    },
    "haskell": {
        "src/Acme/Engine.hs": (
            {"Engine": "type", "Mode": "type", "make": "function", "run": "function", "Runner": "typeclass"},
            {"Engine": {"Engine": "constructor", "name": "field", "size": "field"}, "Mode": {"Fast": "constructor"}},
            [("Data.Map", None), ("Data.List", None), ("Acme.Util", "src/Acme/Util.hs")]),
        "src/Acme/Util.hs": ({"Wrapper": "type", "Name": "type", "clean": "function", "<+>": "function"}, {},
                             [("Acme.Engine", "src/Acme/Engine.hs")]),  # the cycle
    },
    "ocaml": {
        "src/engine.ml": (
            {"U": "module", "t": "type", "mode": "type", "Failed": "error", "make": "function", "run": "function",
             "loop": "function", "other": "function", "Inner": "module", "S": "interface", "counter": "class"},
            {"t": {"name": "field", "size": "field"}, "mode": {"Fast": "constructor", "Slow": "constructor"}},
            [("Printf", None), ("Util", "src/util.ml")]),
        "src/engine.mli": ({"t": "type", "make": "function", "run": "function", "Failed": "error"}, {}, []),
    },
    "zig": {
        "src/main.zig": ({"Engine": "struct", "Mode": "enum", "make": "function", "counter": "variable"},
                         {"Engine": {"name": "field", "size": "field", "init": "method"},
                          "Mode": {"fast": "enum_member", "slow": "enum_member"}},
                         [("std", None), ("util.zig", "src/util.zig")]),
        "src/util.zig": ({"clean": "function"}, {}, [("main.zig", "src/main.zig")]),
    },
    "solidity": {
        "contracts/Bounty.sol": (
            {"Bounty": "contract", "IBounty": "interface", "Math": "library", "freeFunction": "function"},
            {"Bounty": {"total": "variable", "Created": "event", "NotOwner": "error", "Entry": "struct",
                        "State": "enum", "onlyWorker": "modifier", "constructor": "constructor", "create": "function",
                        "view_": "function"},
             "IBounty": {"create": "function"}, "Math": {}},
            [("./Ownable.sol", "contracts/Ownable.sol"), ("./lib/Tokens.sol", "contracts/lib/Tokens.sol")]),
        "contracts/Ownable.sol": ({"Ownable": "contract"}, {"Ownable": {"owner": "variable"}},
                                  [("./Bounty.sol", "contracts/Bounty.sol")]),
    },
}


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_fixture_language(parser: TreeSitterCodeParser, language: str) -> None:
    m = scan(parser, language)
    assert {f.language for f in m.files} == {language}
    for path, (exported, member_kinds, imported) in EXPECTED[language].items():
        f = file(m, path)
        assert shape(f.exports) == exported, path
        for owner, expected_members in member_kinds.items():
            assert members(f.exports, owner) == expected_members, (path, owner)
        assert imports(f) == imported, path


def test_docs_and_signatures_of_other_languages(parser: TreeSitterCodeParser) -> None:
    def get(language: str, path: str, name: str) -> Export:
        return next(e for e in file(scan(parser, language), path).exports if e.name == name)

    assert get("c", "include/lib/engine.h", "engine_new").doc == "Build an engine."
    assert get("c", "include/lib/engine.h", "ENGINE_MAX").signature == "#define ENGINE_MAX 10"
    assert get("c_sharp", "Acme/Engine.cs", "Engine").doc == "Runs things."
    assert get("swift", "Sources/Acme/Engine.swift", "make").signature == "public func make(name: String) -> Engine"
    assert get("dart", "lib/engine.dart", "Engine").doc == "Runs things."
    assert get("php", "src/Engine.php", "make").signature == "function make(string $name): Engine"
    assert get("lua", "acme/init.lua", "make").doc == "Make an engine."
    assert get("bash", "lib/main.sh", "main").doc == "Run everything."
    assert get("haskell", "src/Acme/Engine.hs", "make").signature == "make :: String -> Engine"
    assert get("ocaml", "src/engine.ml", "make").doc == "Make one."
    assert get("zig", "src/main.zig", "Engine").doc == "Runs things."
    assert get("solidity", "contracts/Bounty.sol", "Bounty").doc == "@title Bounties\n@notice Escrows rewards."
    assert get("elixir", "lib/acme/engine.ex", "Acme.Engine").doc == "Runs things."
    julia = get("julia", "src/Acme.jl", "Acme")
    assert next(m for m in julia.members if m.name == "Engine").doc == "Engine(name)\n\nRuns things."


def test_every_supported_language_has_a_fixture() -> None:
    from adapters.code_parser.languages import SUPPORTED

    assert len(SUPPORTED) == 23
    assert {p.name for p in FIXTURES.iterdir() if p.is_dir()} >= set(SUPPORTED)


def test_typescript_import_and_export_forms(parser: TreeSitterCodeParser) -> None:
    sk = parser.parse_source("a.ts", b'import fs = require("fs");\nimport type { A } from "./a";\n'
                                     b'export import B = N.B;\nexport type { T } from "./t";\nexport = fs;\n'
                                     b'export * as ns from "./n";\n')
    assert sk.parse_errors == []
    assert [(i.specifier, i.names) for i in sk.imports] == [("fs", ["fs"]), ("./a", ["A"]), ("./t", ["T"]),
                                                           ("./n", ["*"])]
    assert shape(sk.exports) == {"B": "other", "T": "other", "export=": "other", "ns": "namespace"}
    cjs = parser.parse_source("c.ts", b"module.exports = { a };\nexports.b = 1;\n")
    assert cjs.exports == []  # TypeScript does not read CommonJS assignments as exports; JavaScript does
    assert shape(parser.parse_source("c.js", b"module.exports = { a };\nexports.b = 1;\n").exports) == {
        "a": "variable", "b": "variable"}
