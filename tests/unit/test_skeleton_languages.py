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
