"""The tree-sitter grammars, loaded lazily on first use and cached; one parser per grammar and thread.

Nothing here imports tree_sitter at module import: `language()` and `parser()` do, the first time a grammar is
needed. Which wheel holds a grammar is the languages table's (adapters.code_parser.languages).
"""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

from adapters.code_parser.languages import GRAMMARS


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

    row = GRAMMARS[grammar]
    handle = getattr(importlib.import_module(row.wheel), row.factory)()
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
