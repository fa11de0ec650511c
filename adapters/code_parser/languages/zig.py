"""Zig: declarations marked `pub`.

Exported: `pub fn` ("function"), `pub const`/`pub var` ("const"/"variable"; a const bound to a `struct`,
`enum`, `union` or `opaque` gets that kind, with its fields — always public in Zig — and its `pub`
declarations as members). Docs: `///` comments. Imports: `@import("…")` (relative for paths ending in .zig,
resolved beside the file).
"""

from __future__ import annotations

from adapters.code_parser.resolution import resolve_relative
from adapters.code_parser.source import Node, Source, doc_before, export, make_import, unquote
from domain.knowledge.skeleton import Export, Import

_CONTAINERS = {"struct_declaration": "struct", "enum_declaration": "enum", "union_declaration": "union",
               "opaque_declaration": "struct"}


def _pub(node: Node) -> bool:
    return any(c.type == "pub" for c in node.children)


def _doc(src: Source, node: Node) -> str | None:
    return doc_before(src, node, ("comment",), accept=lambda t: t.startswith("///"))


def _import_of(src: Source, node: Node) -> str | None:
    call = next((c for c in node.named_children if c.type == "builtin_function"), None)
    if call is None or not src.text(call).startswith("@import"):
        return None
    args = next((c for c in call.named_children if c.type == "arguments"), None)
    lit = next((c for c in args.named_children if c.type == "string"), None) if args is not None else None
    return unquote(src.text(lit)) if lit is not None else None


def _decls(src: Source, container: Node, member: bool) -> list[Export]:
    out: list[Export] = []
    field_kind = "enum_member" if container.type == "enum_declaration" else "field"
    for node in container.named_children:
        t = node.type
        if t == "container_field" and member:
            out.append(export(src.field_text(node, "name"), field_kind, node, " ".join(src.text(node).split())))
        elif t == "function_declaration" and _pub(node):
            out.append(export(src.field_text(node, "name"), "method" if member else "function", node,
                              src.header(node), _doc(src, node)))
        elif t == "variable_declaration" and _pub(node):
            ident = next((c for c in node.named_children if c.type == "identifier"), None)
            value = next((c for c in node.named_children if c.type in _CONTAINERS), None)
            is_const = any(c.type == "const" for c in node.children)
            if value is not None:
                kind = _CONTAINERS[value.type]
                out.append(export(src.text(ident), kind, node, src.signature(node, value, "="), _doc(src, node),
                                  _decls(src, value, True)))
            else:
                out.append(export(src.text(ident), "const" if is_const else "variable", node,
                                  src.signature(node, None, ";"), _doc(src, node)))
    return out


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    imports: list[Import] = []
    for node in root.named_children:
        if node.type == "variable_declaration":
            spec = _import_of(src, node)
            if spec is not None:
                ident = next((c for c in node.named_children if c.type == "identifier"), None)
                imports.append(make_import(spec, node, relative=spec.endswith(".zig"), names=[src.text(ident)]))
    return _decls(src, root, False), imports


resolve_import = resolve_relative  # a relative `@import("x.zig")`: beside the file; `@import("std")` is not a file
