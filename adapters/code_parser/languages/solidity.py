"""Solidity: contracts, interfaces and libraries, and what other contracts can call or see.

Exported: every top-level contract ("contract"), interface ("interface"), library ("library"), free
function, struct, enum, event, error, user-defined value type and constant. Members: `public`/`external`
functions (an interface's functions, which are external), the constructor, `public` state variables (they get
a getter), events, errors, modifiers, structs and enums. `internal`/`private` functions and variables are
not. Docs: NatSpec `///` and `/** */` comments (tags kept). Imports: `import "…"` and
`import {A, B as C} from "…"` (relative paths resolved beside the file).
"""

from __future__ import annotations

from adapters.code_parser.resolution import resolve_relative
from adapters.code_parser.source import Node, Source, doc_before, export, make_import, unquote
from domain.knowledge.skeleton import Export, Import

_CONTRACTS = {"contract_declaration": "contract", "interface_declaration": "interface",
              "library_declaration": "library"}
_PLAIN = {"struct_declaration": "struct", "enum_declaration": "enum", "event_definition": "event",
          "error_declaration": "error", "modifier_definition": "modifier",
          "user_defined_type_definition": "type"}


def _doc(src: Source, node: Node) -> str | None:
    return doc_before(src, node, ("comment",), accept=lambda t: t.startswith(("///", "/**")))


def _visibility(src: Source, node: Node) -> str:
    vis = next((c for c in node.named_children if c.type == "visibility"), None)
    return src.text(vis) if vis is not None else ""


def _plain(src: Source, node: Node) -> Export:
    kind = _PLAIN[node.type]
    body = node.child_by_field_name("body")
    members = []
    for m in body.named_children if body is not None else []:
        if m.type == "enum_value":
            members.append(export(src.text(m), "enum_member", m, src.text(m)))
        elif m.type == "struct_member":
            members.append(export(src.field_text(m, "name"), "field", m, src.signature(m, None, ";")))
    sig = src.signature(node, body if kind in ("struct", "enum", "modifier") else None, "{;")
    return export(src.field_text(node, "name"), kind, node, sig, _doc(src, node), members)


def _contract(src: Source, node: Node) -> Export:
    kind = _CONTRACTS[node.type]
    body = node.child_by_field_name("body")
    members: list[Export] = []
    for m in body.named_children if body is not None else []:
        t = m.type
        if t == "function_definition":
            if kind == "interface" or _visibility(src, m) in ("public", "external"):
                members.append(export(src.field_text(m, "name"), "function", m,
                                      src.signature(m, m.child_by_field_name("body"), "{;"), _doc(src, m)))
        elif t == "constructor_definition":
            members.append(export("constructor", "constructor", m, src.signature(m, m.child_by_field_name("body")),
                                  _doc(src, m)))
        elif t == "state_variable_declaration":
            if _visibility(src, m) == "public":
                members.append(export(src.field_text(m, "name"), "variable", m, src.signature(m, None, ";"),
                                      _doc(src, m)))
        elif t in _PLAIN:
            members.append(_plain(src, m))
        elif t in ("fallback_receive_definition",):
            members.append(export(src.text(m).split("(")[0].strip(), "function", m,
                                  src.signature(m, m.child_by_field_name("body"))))
    return export(src.field_text(node, "name"), kind, node, src.signature(node, body, "{"), _doc(src, node), members)


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    for node in root.named_children:
        t = node.type
        if t == "import_directive":
            source = node.child_by_field_name("source")
            spec = unquote(src.text(source))
            names = [src.text(n) for n in node.children_by_field_name("import_name")] or ["*"]
            imports.append(make_import(spec, node, relative=spec.startswith("."), names=names))
        elif t in _CONTRACTS:
            exports.append(_contract(src, node))
        elif t == "function_definition":
            exports.append(export(src.field_text(node, "name"), "function", node,
                                  src.signature(node, node.child_by_field_name("body"), "{;"), _doc(src, node)))
        elif t in _PLAIN:
            exports.append(_plain(src, node))
        elif t == "constant_variable_declaration":
            exports.append(export(src.field_text(node, "name"), "const", node, src.signature(node, None, ";"),
                                  _doc(src, node)))
    return exports, imports


resolve_import = resolve_relative  # relative paths, beside the file
