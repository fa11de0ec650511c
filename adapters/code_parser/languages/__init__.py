"""The languages skeletons are built for: one table, a row per tree-sitter grammar, from file extensions to the
language module that reads what the grammar parses.

A language is a module (or a package) of this package holding both halves of reading its files, side by side:
its extractor, `extract(src, root) -> (exports, imports)` (adapters.code_parser.source), and its import resolver,
`resolve_import(imp, path, index) -> project path | None` (adapters.code_parser.resolution). A module serving two
grammars of one family names its functions in the row (jvm: `extract_java`, `extract_scala`).

Nothing here imports a language module or tree_sitter: `extractor()`, `preparer()` and `resolver()` import the
module on first use (adapters.code_parser.grammars loads the grammars likewise).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adapters.code_parser.source import Extractor
    from domain.knowledge.skeleton import Import

    # (import, importing file, adapters.code_parser.resolution.ProjectIndex) → the project file it names, or None
    Resolver = Callable[[Import, str, Any], str | None]


@dataclass(frozen=True, slots=True)
class Grammar:
    """One tree-sitter grammar, the files it parses, and the language module that reads them."""

    name: str  # the grammar ("tsx")
    language: str  # what FileSkeleton.language reports ("typescript": tsx is TypeScript, an .mli file is OCaml)
    module: str  # the language module under adapters.code_parser.languages
    wheel: str  # the grammar wheel's module (only per-language wheels, never the downloading language pack)
    extensions: tuple[str, ...]
    factory: str = "language"  # the wheel's function returning the grammar
    extract: str = "extract"  # the module's extractor
    resolve: str | None = "resolve_import"  # the module's import resolver (None: imports keep only their text)
    prepare: str | None = None  # a function of the module giving the bytes tree-sitter parses (offsets unchanged)
    resolves_by_file: bool = False  # resolution depends on the importing file's name, not just its directory


TABLE: tuple[Grammar, ...] = (
    Grammar("python", "python", "python", "tree_sitter_python", (".py", ".pyi")),
    Grammar("javascript", "javascript", "ecmascript", "tree_sitter_javascript", (".js", ".mjs", ".cjs", ".jsx")),
    Grammar("typescript", "typescript", "ecmascript", "tree_sitter_typescript", (".ts", ".mts", ".cts"),
            factory="language_typescript"),
    Grammar("tsx", "typescript", "ecmascript", "tree_sitter_typescript", (".tsx",), factory="language_tsx"),
    Grammar("go", "go", "go", "tree_sitter_go", (".go",)),
    Grammar("rust", "rust", "rust", "tree_sitter_rust", (".rs",), prepare="parseable", resolves_by_file=True),
    Grammar("java", "java", "jvm", "tree_sitter_java", (".java",), extract="extract_java", resolve="resolve_java"),
    Grammar("c", "c", "c_family", "tree_sitter_c", (".c", ".h")),
    Grammar("cpp", "cpp", "c_family", "tree_sitter_cpp",
            (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp")),
    Grammar("c_sharp", "c_sharp", "csharp", "tree_sitter_c_sharp", (".cs",), resolve=None),
    Grammar("ruby", "ruby", "ruby", "tree_sitter_ruby", (".rb", ".rake", ".gemspec")),
    Grammar("php", "php", "php", "tree_sitter_php", (".php",), factory="language_php"),
    Grammar("kotlin", "kotlin", "kotlin", "tree_sitter_kotlin", (".kt", ".kts")),
    Grammar("swift", "swift", "swift", "tree_sitter_swift", (".swift",), resolve=None),
    Grammar("scala", "scala", "jvm", "tree_sitter_scala", (".scala", ".sc"), extract="extract_scala",
            resolve="resolve_scala"),
    Grammar("lua", "lua", "lua", "tree_sitter_lua", (".lua",)),
    Grammar("bash", "bash", "bash", "tree_sitter_bash", (".sh", ".bash"), prepare="parseable"),
    Grammar("elixir", "elixir", "elixir", "tree_sitter_elixir", (".ex", ".exs")),
    Grammar("haskell", "haskell", "haskell", "tree_sitter_haskell", (".hs",)),
    Grammar("zig", "zig", "zig", "tree_sitter_zig", (".zig",)),
    Grammar("solidity", "solidity", "solidity", "tree_sitter_solidity", (".sol",)),
    Grammar("ocaml", "ocaml", "ocaml", "tree_sitter_ocaml", (".ml",), factory="language_ocaml"),
    Grammar("ocaml_interface", "ocaml", "ocaml", "tree_sitter_ocaml", (".mli",), factory="language_ocaml_interface"),
    Grammar("julia", "julia", "julia", "tree_sitter_julia", (".jl",)),
    Grammar("dart", "dart", "dart", "tree_sitter_dart", (".dart",)),
)

# grammar name → its row
GRAMMARS: dict[str, Grammar] = {g.name: g for g in TABLE}

# file extension (lower case, with its dot) → grammar name
EXTENSIONS: dict[str, str] = {ext: g.name for g in TABLE for ext in g.extensions}

# reported language → the row whose module resolves its imports (its first grammar: typescript, not tsx)
LANGUAGES: dict[str, Grammar] = {}
for _row in TABLE:
    LANGUAGES.setdefault(_row.language, _row)
del _row

# The 23 languages skeletons are built for.
SUPPORTED = sorted(LANGUAGES)


def grammar_for(path: str) -> str | None:
    """The grammar a file is parsed with, from its extension (None: not a supported source file)."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return EXTENSIONS.get(path[dot:].lower())


def _function(module: str, name: str) -> Any:
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


@cache
def extractor(grammar: str) -> Extractor:
    """The extractor of a grammar's language (its module imported on first use)."""
    row = GRAMMARS[grammar]
    return _function(row.module, row.extract)


@cache
def preparer(grammar: str) -> Callable[[bytes], bytes] | None:
    """What turns a file's bytes into those the grammar parses, when its language needs that (else None)."""
    row = GRAMMARS[grammar]
    return _function(row.module, row.prepare) if row.prepare else None


@cache
def resolver(language: str) -> Resolver | None:
    """The import resolver of a reported language (None: its imports keep only their text)."""
    row = LANGUAGES.get(language)
    if row is None or row.resolve is None:
        return None
    return _function(row.module, row.resolve)
