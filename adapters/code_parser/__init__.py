"""Source code → skeletons (exports, imports, parse errors) for 23 languages, behind the CodeParser port.

- port.py: the CodeParser port and its errors; treesitter.py: its implementation (files, scans, the cache in
  cache.py); scan.py: which files a scan reads;
- languages/: one module (or package) per language holding both its extractor and its import resolver, and, in
  languages/__init__.py, the one table from file extensions to grammars and language modules;
- the machinery they share: grammars.py (tree-sitter grammars, loaded on first use), source.py (node → text,
  signatures, docs), extraction.py (bytes → skeleton), resolution.py (imports → project files);
- version.py: a digest of all of it, recorded with a spec's baseline.

Importing this package is cheap: tree_sitter, the grammars and the language modules load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adapters.code_parser.cache import SkeletonCache
    from adapters.code_parser.port import CodeParser, FileTooLarge, OutsideRoot, UnsupportedLanguage
    from adapters.code_parser.treesitter import TreeSitterCodeParser

__all__ = ["CodeParser", "FileTooLarge", "OutsideRoot", "SkeletonCache", "TreeSitterCodeParser", "UnsupportedLanguage"]

_WHERE = {
    "CodeParser": "adapters.code_parser.port",
    "FileTooLarge": "adapters.code_parser.port",
    "OutsideRoot": "adapters.code_parser.port",
    "UnsupportedLanguage": "adapters.code_parser.port",
    "SkeletonCache": "adapters.code_parser.cache",
    "TreeSitterCodeParser": "adapters.code_parser.treesitter",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(name)
