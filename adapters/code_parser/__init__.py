"""Source code → skeletons (exports, imports, parse errors) for 23 languages, behind the CodeParser port.

Importing this package is cheap: tree_sitter and the grammars load on first use.
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
