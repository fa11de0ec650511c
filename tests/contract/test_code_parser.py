"""The CodeParser port's contract (adapters/code_parser/port.py), on every implementation: source files become
skeletons; bad source never raises (its errors land in `parse_errors`); a missing path is FileNotFoundError and one
outside the root OutsideRoot; `parse_file` refuses an unsupported or oversized file (UnsupportedLanguage,
FileTooLarge: ValueErrors) where a scan skips and counts it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adapters.code_parser.port import CodeParser, FileTooLarge, OutsideRoot, UnsupportedLanguage
from tests.contract.registry import covers


def tree_sitter(max_bytes: int) -> Any:
    from adapters.code_parser import TreeSitterCodeParser

    return TreeSitterCodeParser(max_bytes=max_bytes, workers=1)


PARSERS: dict[str, Callable[[int], Any]] = {"tree-sitter": tree_sitter}
MAX_BYTES = 2_000


@pytest.fixture(params=sorted(PARSERS))
def parser(request: pytest.FixtureRequest) -> Any:
    return PARSERS[request.param](MAX_BYTES)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {"app/main.py": "from app import util\n\n\ndef main():\n    return util.helper()\n",
             "app/util.py": "def helper():\n    return 1\n",
             "app/broken.py": "def ok():\n    pass\n\ndef broken(:\n    pass\n",
             "web/index.ts": "export function greet(name: string): string {\n  return name;\n}\n",
             "notes.txt": "not code\n",
             "big.py": "X = 1\n" * (MAX_BYTES // 6 + 1)}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


@covers(CodeParser, "parse_file")
def test_a_file_becomes_its_skeleton_and_bad_source_never_raises(parser: Any, project: Path) -> None:
    util = parser.parse_file(project, "app/util.py")
    assert util.path == "app/util.py" and [e.name for e in util.exports] == ["helper"] and util.parse_errors == []
    assert [e.name for e in parser.parse_file(str(project), "web/index.ts").exports] == ["greet"]
    broken = parser.parse_file(project, "app/broken.py")
    assert broken.parse_errors and [e.name for e in broken.exports][:1] == ["ok"], "what parsed is still reported"


@covers(CodeParser, "parse_file")
def test_parse_file_refuses_what_it_cannot_parse(parser: Any, project: Path) -> None:
    with pytest.raises(FileNotFoundError):
        parser.parse_file(project, "app/missing.py")
    for rel, refusal in (("../outside.py", OutsideRoot), ("notes.txt", UnsupportedLanguage), ("big.py", FileTooLarge)):
        with pytest.raises(refusal) as caught:
            parser.parse_file(project, rel)
        assert isinstance(caught.value, ValueError), rel


@covers(CodeParser, "scan")
def test_a_scan_merges_the_files_and_counts_what_it_skipped(parser: Any, project: Path) -> None:
    merged = parser.scan(project)
    assert [f.path for f in merged.files] == ["app/broken.py", "app/main.py", "app/util.py", "web/index.ts"]
    assert merged.skipped.get("unsupported") == 1 and merged.skipped.get("oversized") == 1
    assert merged.file("app/main.py") is not None and merged.file("app/broken.py").parse_errors
    app = parser.scan(project, "app")
    assert app.root == "app" and [f.path for f in app.files] == ["app/broken.py", "app/main.py", "app/util.py"]
    assert [f.path for f in parser.scan(project, "app/util.py").files] == ["app/util.py"]
    with pytest.raises(FileNotFoundError):
        parser.scan(project, "nothing-here")
    with pytest.raises(OutsideRoot):
        parser.scan(project, "..")
