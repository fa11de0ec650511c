"""File extension → language, and the tree-sitter grammars, loaded lazily on first use and cached.

Only per-language grammar wheels are used (never the downloading language pack). Nothing here imports
tree_sitter at module import: `language()` and `parser()` do, the first time a language is needed.
"""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

# language name → (grammar module, factory function)
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "c_sharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "swift": ("tree_sitter_swift", "language"),
    "scala": ("tree_sitter_scala", "language"),
    "lua": ("tree_sitter_lua", "language"),
    "bash": ("tree_sitter_bash", "language"),
    "elixir": ("tree_sitter_elixir", "language"),
    "haskell": ("tree_sitter_haskell", "language"),
    "zig": ("tree_sitter_zig", "language"),
    "solidity": ("tree_sitter_solidity", "language"),
    "ocaml": ("tree_sitter_ocaml", "language_ocaml"),
    "ocaml_interface": ("tree_sitter_ocaml", "language_ocaml_interface"),
    "julia": ("tree_sitter_julia", "language"),
    "dart": ("tree_sitter_dart", "language"),
}

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".h++": "cpp", ".ipp": "cpp",
    ".cs": "c_sharp",
    ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby",
    ".php": "php",
    ".kt": "kotlin", ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala", ".sc": "scala",
    ".lua": "lua",
    ".sh": "bash", ".bash": "bash",
    ".ex": "elixir", ".exs": "elixir",
    ".hs": "haskell",
    ".zig": "zig",
    ".sol": "solidity",
    ".ml": "ocaml", ".mli": "ocaml_interface",
    ".jl": "julia",
    ".dart": "dart",
}

# The name reported in FileSkeleton.language (tsx is TypeScript, an .mli file is OCaml).
REPORTED = {"tsx": "typescript", "ocaml_interface": "ocaml"}

# The 23 languages skeletons are built for.
SUPPORTED = sorted({REPORTED.get(name, name) for name in GRAMMARS})


def grammar_for(path: str) -> str | None:
    """The grammar a file is parsed with, from its extension (None: not a supported source file)."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return EXTENSIONS.get(path[dot:].lower())


def _capsule(pointer: int) -> Any:
    """Wrap a raw TSLanguage pointer (older grammar wheels return an int) in the capsule tree-sitter expects.

    `Language(int)` is deprecated in tree-sitter 0.26; a PyCapsule named "tree_sitter.Language" is the
    supported form, and it is what current grammar wheels return themselves.
    """
    import ctypes

    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(pointer, b"tree_sitter.Language", None)


@cache
def language(grammar: str) -> Any:
    """The tree_sitter.Language of a grammar, imported on first use."""
    import importlib

    from tree_sitter import Language

    module_name, factory = GRAMMARS[grammar]
    handle = getattr(importlib.import_module(module_name), factory)()
    if isinstance(handle, int):
        handle = _capsule(handle)
    return Language(handle)


_local = threading.local()


def parser(grammar: str) -> Any:
    """A tree_sitter.Parser for the grammar, one per thread (parsers are not shared across threads)."""
    parsers = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    found = parsers.get(grammar)
    if found is None:
        from tree_sitter import Parser

        found = parsers[grammar] = Parser(language(grammar))
    return found
