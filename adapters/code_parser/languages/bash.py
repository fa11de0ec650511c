"""Bash: the functions a sourcing script gets and `export`ed variables.

Docs: the `#` comments above. Imports: `source f` and `. f` (relative unless the path holds a variable or is
absolute; `$(dirname "$0")/` prefixes understood), resolved beside the script, then from the project root.
"""

from __future__ import annotations

import posixpath
import re

from adapters.code_parser.resolution import ProjectIndex, join
from adapters.code_parser.source import Node, Source, doc_before, export, make_import, unquote
from domain.knowledge.skeleton import Export, Import

# A character beyond the Basic Multilingual Plane (4 UTF-8 bytes). tree-sitter-bash 0.25.1's scanner reads memory
# it does not own on some of them after a `{` (U+C0000 and up crashed the process with SIGSEGV in about half the
# runs of `{` + U+E0000: tests/unit/test_skeleton_fuzz.py found it), so a hostile script could take a serve down.
_ASTRAL = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}")


def parseable(data: bytes) -> bytes:
    """The bytes tree-sitter parses of a script: each character beyond U+FFFF becomes four `_` (offsets and lines
    unchanged; names and text are read from the file's own bytes)."""
    return _ASTRAL.sub(b"____", data)


_DIRNAME = re.compile(r'^"?\$\((?:dirname|cd)[^)]*\)"?/|^"?\$\{BASH_SOURCE(?:\[0\])?%/\*\}"?/|^"?\$(?:SCRIPT_)?DIR"?/')


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    for node in root.named_children:
        t = node.type
        if t == "function_definition":
            name = src.field_text(node, "name")
            exports.append(export(name, "function", node, src.signature(node, node.child_by_field_name("body"), "{"),
                                  doc_before(src, node)))
        elif t == "declaration_command" and src.text(node).startswith("export"):
            for a in node.named_children:
                name = src.field_text(a, "name") if a.type == "variable_assignment" else src.text(a)
                if a.type in ("variable_assignment", "variable_name", "word"):
                    exports.append(export(name, "variable", node, f"export {name}", doc_before(src, node)))
        elif t == "command":
            cmd = src.field_text(node, "name")
            args = node.children_by_field_name("argument")
            if cmd in ("source", ".") and args:
                raw = src.text(args[0])
                spec = _DIRNAME.sub("", raw)
                spec = unquote(spec) if spec[:1] in "\"'" else spec.strip('"')
                relative = "$" not in spec and not spec.startswith("/")
                imports.append(make_import(spec, node, relative=relative, names=[spec.rsplit("/", 1)[-1]]))
    return exports, imports


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    if not imp.relative:
        return None
    return ix.first_file([join(posixpath.dirname(path), imp.specifier), join(imp.specifier)])
