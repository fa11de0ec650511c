"""Python idioms of real packages (issue 19, found on click): re-exports, overloads, a comment after the colon,
function-local imports, `from . import a, b`, `__main__` guards, import fallbacks, namespace packages."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.code_parser.treesitter import TreeSitterCodeParser
from domain.knowledge.drift import compare
from domain.knowledge.skeleton import FileSkeleton, MergedSkeleton


@pytest.fixture(scope="module")
def parser() -> TreeSitterCodeParser:
    return TreeSitterCodeParser(workers=1)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def parse(parser: TreeSitterCodeParser, text: str, path: str = "pkg/mod.py") -> FileSkeleton:
    return parser.parse_source(path, text.encode())


def test_redundant_aliases_re_export_the_api(parser: TreeSitterCodeParser) -> None:
    sk = parse(parser, "from .core import Argument as Argument\nfrom .core import Option\nimport json as json\n"
                       "from .core import _Hidden as _Hidden\nfrom .types import Path as P\n", "click/__init__.py")
    assert [(e.name, e.kind, e.signature) for e in sk.exports] == [
        ("Argument", "other", "from .core import Argument"), ("json", "other", "import json")]


def test_all_still_decides_when_the_module_has_one(parser: TreeSitterCodeParser) -> None:
    sk = parse(parser, "from .core import Argument as Argument\nfrom .core import Option\n__all__ = ['Option']\n")
    assert [e.name for e in sk.exports] == ["Option"]


OVERLOADED = '''
import typing as t

@t.overload
def command(name: t.Callable[..., t.Any]) -> Command: ...
@t.overload
def command(name: str | None = None, **attrs: t.Any) -> t.Callable[[F], Command]: ...
def command(name=None, cls=None, **attrs):
    """Creates a command."""

class Group:
    @t.overload
    def command(self, __func: t.Callable[..., t.Any]) -> Command: ...
    @t.overload
    def command(self, *args: t.Any, **kwargs: t.Any) -> t.Callable[..., Command]: ...
    def command(self, *args, **kwargs):
        pass
'''


def test_an_overloaded_function_shows_its_implementation(parser: TreeSitterCodeParser) -> None:
    sk = parse(parser, OVERLOADED)
    command = next(e for e in sk.exports if e.name == "command")
    assert command.signature == "def command(name=None, cls=None, **attrs)"
    assert command.doc == "Creates a command."
    assert [e.name for e in sk.exports] == ["command", "Group"]
    group = next(e for e in sk.exports if e.name == "Group")
    assert [(m.name, m.signature) for m in group.members] == [("command", "def command(self, *args, **kwargs)")]


def test_stubs_without_an_implementation_keep_the_first_overload(parser: TreeSitterCodeParser) -> None:
    sk = parse(parser, "from typing import overload\n@overload\ndef f(x: int) -> int: ...\n"
                       "@overload\ndef f(x: str) -> str: ...\n", "pkg/mod.pyi")
    assert [(e.name, e.signature) for e in sk.exports] == [("f", "def f(x: int) -> int")]


def test_a_comment_after_the_colon_is_not_part_of_the_signature(parser: TreeSitterCodeParser) -> None:
    before = parse(parser, "class A:  # one\n    def f(self) -> None:  # Steps stay in order\n        pass\n")
    after = parse(parser, "class A:  # two\n    def f(self) -> None:  # Steps are kept\n        pass\n")
    assert before.exports[0].signature == "class A"
    assert before.exports[0].members[0].signature == "def f(self) -> None"
    drift = compare(MergedSkeleton.build(".", [before]), MergedSkeleton.build(".", [after]))
    assert drift.items == []


def test_function_local_imports_make_edges(parser: TreeSitterCodeParser, tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "def f():\n    from .b import g\n    return g()\n\nclass C:\n    def m(self):\n"
                    "        if True:\n            import pkg.c\n",
        "pkg/b.py": "def g():\n    pass\n",
        "pkg/c.py": "",
    })
    a = parser.scan(tmp_path).file("pkg/a.py")
    assert a is not None
    assert [(i.specifier, i.resolved) for i in a.imports] == [(".b", "pkg/b.py"), ("pkg.c", "pkg/c.py")]
    assert [e.name for e in a.exports] == ["f", "C"]


def test_from_dot_import_several_submodules_makes_an_edge_to_each(parser: TreeSitterCodeParser,
                                                                   tmp_path: Path) -> None:
    write(tmp_path, {"pkg/__init__.py": "from . import errors, themes\n", "pkg/errors.py": "", "pkg/themes.py": ""})
    init = parser.scan(tmp_path).file("pkg/__init__.py")
    assert init is not None
    assert [(i.names, i.resolved) for i in init.imports] == [(["errors"], "pkg/errors.py"),
                                                              (["themes"], "pkg/themes.py")]


def test_a_main_guard_binds_no_export_but_its_imports_count(parser: TreeSitterCodeParser) -> None:
    sk = parse(parser, "def run():\n    pass\n\nif __name__ == '__main__':\n    import sys\n    table = run()\n"
                       "    def helper():\n        pass\n")
    assert [e.name for e in sk.exports] == ["run"]
    assert [i.specifier for i in sk.imports] == ["sys"]


def test_an_import_with_a_fallback_is_not_an_export(parser: TreeSitterCodeParser) -> None:
    sk = parse(parser, "try:\n    import chardet\nexcept ImportError:\n    chardet = None\n\n"
                       "try:\n    from socks import SOCKSProxyManager\nexcept ImportError:\n"
                       "    def SOCKSProxyManager(*args):\n        raise ValueError\n\n"
                       "if WIN:\n    TIMEOUT = 1\nelse:\n    TIMEOUT = 2\n")
    assert [e.name for e in sk.exports] == ["TIMEOUT"]


def test_namespace_packages_resolve(parser: TreeSitterCodeParser, tmp_path: Path) -> None:
    """acme/ and acme/tools/ have no __init__.py (PEP 420); the project is not laid out under src/."""
    write(tmp_path, {
        "plugins/acme/tools/__init__.py": "",
        "plugins/acme/tools/run.py": "import acme.tools.util\nfrom acme.tools import util\nfrom acme.core import x\n"
                                     "import json\n",
        "plugins/acme/tools/util.py": "",
        "plugins/acme/core.py": "x = 1\n",
        "plugins/json.py": "",
    })
    run = parser.scan(tmp_path).file("plugins/acme/tools/run.py")
    assert run is not None
    assert [(i.specifier, i.resolved) for i in run.imports] == [
        ("acme.tools.util", "plugins/acme/tools/util.py"), ("acme.tools", "plugins/acme/tools/util.py"),
        ("acme.core", "plugins/acme/core.py"), ("json", None)]


def test_a_quoted_annotation_is_the_type_it_names(parser: TreeSitterCodeParser) -> None:
    before = parse(parser, 'def find_root(self, other: "Context", name: str = "x") -> "Context":\n    pass\n')
    after = parse(parser, 'def find_root(self, other: Context, name: str = "x") -> Context:\n    pass\n')
    assert before.exports[0].signature == 'def find_root(self, other: Context, name: str = "x") -> Context'
    assert compare(MergedSkeleton.build(".", [before]), MergedSkeleton.build(".", [after])).items == []
    nested = parse(parser, 'def f(a: t.Optional["Context"]) -> "A" "B":\n    pass\n')
    assert nested.exports[0].signature == 'def f(a: t.Optional["Context"]) -> "A" "B"'


def test_platform_variants_show_the_last_definition_as_griffe_does(parser: TreeSitterCodeParser) -> None:
    sk = parse(parser, "auto_wrap: t.Callable[[t.TextIO], t.TextIO] | None = None\n\n"
                       "if WIN:\n    def auto_wrap(stream: t.TextIO) -> t.TextIO:\n        pass\n\n"
                       "if WIN:\n    def get_buffer(obj):\n        pass\nelse:\n"
                       "    def get_buffer(obj: Buffer, writable: bool = False) -> bytes:\n        pass\n\n"
                       "class Future:\n    def done(self):\n        pass\n\n"
                       "if FAST:\n    Future = _speedups.Future\n")
    assert [(e.name, e.kind, e.signature) for e in sk.exports] == [
        ("auto_wrap", "function", "def auto_wrap(stream: t.TextIO) -> t.TextIO"),
        ("get_buffer", "function", "def get_buffer(obj: Buffer, writable: bool = False) -> bytes"),
        ("Future", "class", "class Future")]
