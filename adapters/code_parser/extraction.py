"""Source bytes → FileSkeleton (without import resolution): the grammar's parse, its language's extractor, the
syntax errors."""

from __future__ import annotations

import hashlib
import logging

from adapters.code_parser.grammars import parser
from adapters.code_parser.languages import GRAMMARS, extractor, preparer
from adapters.code_parser.source import Source, parse_errors
from domain.knowledge.skeleton import Export, FileSkeleton, Import

log = logging.getLogger(__name__)


def count_lines(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def skeleton_of(path: str, grammar: str, data: bytes) -> FileSkeleton:
    """Parse and extract; an extractor failure is reported as a parse error, never raised."""
    prepare = preparer(grammar)
    tree = parser(grammar).parse(prepare(data) if prepare is not None else data)
    root = tree.root_node
    errors = parse_errors(root)
    exports: list[Export] = []
    imports: list[Import] = []
    try:
        exports, imports = extractor(grammar)(Source(data, path), root)
    except Exception as exc:  # a grammar surprise must not sink a whole scan
        log.warning("skeleton extraction failed for %s: %s", path, exc, exc_info=True)
        errors.append(f"line 1: extraction failed ({type(exc).__name__}: {exc})")
    return FileSkeleton(path=path, language=GRAMMARS[grammar].language, lines=count_lines(data),
                        sha256=hashlib.sha256(data).hexdigest(), exports=exports, imports=imports,
                        parse_errors=errors)
