"""Source bytes → FileSkeleton (without import resolution): the grammar, the language's extractor, errors."""

from __future__ import annotations

import hashlib
import importlib
import logging
import re
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


# Rust 2015's `try!(…)` (a keyword since 2018, so tree-sitter reports a syntax error at each): parsed as the
# same-length macro name `tr_!`, offsets unchanged; the extractors still read the original bytes.
_RUST_2015_TRY = re.compile(rb"(?<![\w#])try!")


def skeleton_of(path: str, grammar: str, data: bytes) -> FileSkeleton:
    """Parse and extract; an extractor failure is reported as a parse error, never raised."""
    parsed = _RUST_2015_TRY.sub(b"tr_!", data) if grammar == "rust" and b"try!" in data else data
    tree = parser(grammar).parse(parsed)
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
