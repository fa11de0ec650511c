"""Source bytes → FileSkeleton (without import resolution): the grammar, the language's extractor, errors."""

from __future__ import annotations

import hashlib
import importlib
import logging
from functools import cache

from adapters.code_parser.base import Extractor, Source, parse_errors
from adapters.code_parser.languages import REPORTED, parser
from domain.skeleton import FileSkeleton

log = logging.getLogger(__name__)

# grammar → module holding its `extract` (or `extract_<grammar>`) function
EXTRACTORS: dict[str, str] = {
    "python": "python",
    "javascript": "ecmascript",
    "typescript": "ecmascript",
    "tsx": "ecmascript",
    "go": "go",
    "rust": "rust",
    "java": "jvm",
    "kotlin": "kotlin",
    "scala": "jvm",
    "c": "c_family",
    "cpp": "c_family",
    "c_sharp": "csharp",
    "swift": "swift",
    "dart": "dart",
    "ruby": "ruby",
    "php": "php",
    "lua": "scripting",
    "bash": "scripting",
    "julia": "scripting",
    "elixir": "elixir",
    "haskell": "functional",
    "ocaml": "functional",
    "ocaml_interface": "functional",
    "zig": "zig",
    "solidity": "solidity",
}


@cache
def extractor(grammar: str) -> Extractor:
    module = importlib.import_module(f"adapters.code_parser.{EXTRACTORS[grammar]}")
    return getattr(module, f"extract_{grammar}", None) or module.extract


def count_lines(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def skeleton_of(path: str, grammar: str, data: bytes) -> FileSkeleton:
    """Parse and extract; an extractor failure is reported as a parse error, never raised."""
    tree = parser(grammar).parse(data)
    root = tree.root_node
    errors = parse_errors(root)
    exports, imports = [], []
    try:
        exports, imports = extractor(grammar)(Source(data, path), root)
    except Exception as exc:  # a grammar surprise must not sink a whole scan
        log.warning("skeleton extraction failed for %s: %s", path, exc, exc_info=True)
        errors.append(f"line 1: extraction failed ({type(exc).__name__}: {exc})")
    return FileSkeleton(path=path, language=REPORTED.get(grammar, grammar), lines=count_lines(data),
                        sha256=hashlib.sha256(data).hexdigest(), exports=exports, imports=imports,
                        parse_errors=errors)
