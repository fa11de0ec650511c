"""C#: types other assemblies see.

Exported: `public` classes, interfaces, structs, records, enums and delegates, at file scope or in namespaces
(block or file-scoped; the namespace is not an export of its own). Members: `public` fields, constants,
properties, events, methods, constructors, indexers and nested types; every member of an interface that
is not `private`; enum members; a record's positional parameters. Docs: `///` XML comments above.
Imports: `using X.Y;` (names ["*"]), `using A = X.Y;` (names [A]), `using static X.Y;` (not resolved: a
namespace names no file).
"""

from __future__ import annotations

import re

from adapters.code_parser.source import Node, Source, doc_before, export, make_import
from domain.knowledge.skeleton import Export, Import

_TYPES = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "struct_declaration": "struct",
    "record_declaration": "record",
    "record_struct_declaration": "record",
    "enum_declaration": "enum",
    "delegate_declaration": "type",
}
_XML = re.compile(r"</?\w+[^>]*>")
_ATTRS = re.compile(r"^(?:\[[^\]]*\]\s*)+")


def _mods(src: Source, node: Node) -> set[str]:
    return {src.text(c) for c in node.named_children if c.type == "modifier"}


def _doc(src: Source, node: Node) -> str | None:
    text = doc_before(src, node, ("comment",), accept=lambda t: t.startswith("///"))
    if not text:
        return None
    # no tag starts after the last `>`: searching there made each `<` scan to the end (quadratic in a file's `<`s)
    end = text.rfind(">") + 1
    return (_XML.sub("", text[:end]) + text[end:]).strip() or None


def _sig(src: Source, node: Node, body: Node | None) -> str:
    return _ATTRS.sub("", src.signature(node, body, "{;=>"))


def _member(src: Source, m: Node, interface: bool) -> list[Export]:
    mods = _mods(src, m)
    if not ("public" in mods or (interface and "private" not in mods)):
        return []
    t = m.type
    if t in _TYPES:
        return [_type(src, m)]
    if t in ("method_declaration", "constructor_declaration", "operator_declaration", "indexer_declaration",
             "conversion_operator_declaration"):
        body = m.child_by_field_name("body")
        kind = "constructor" if t == "constructor_declaration" else "method"
        name = src.field_text(m, "name") or ("this" if t == "indexer_declaration" else t.split("_")[0])
        return [export(name, kind, m, _sig(src, m, body), _doc(src, m))]
    if t == "property_declaration":
        accessors = m.child_by_field_name("accessors") or m.child_by_field_name("value")
        return [export(src.field_text(m, "name"), "property", m, _sig(src, m, accessors), _doc(src, m))]
    if t in ("field_declaration", "event_field_declaration"):
        decl = next((c for c in m.named_children if c.type == "variable_declaration"), None)
        out = []
        for v in decl.named_children if decl is not None else []:
            if v.type == "variable_declarator":
                name_node = v.child_by_field_name("name") or (v.named_children[0] if v.named_child_count else v)
                kind = "const" if "const" in mods else "event" if t == "event_field_declaration" else "field"
                out.append(export(src.text(name_node), kind, m, _sig(src, m, None), _doc(src, m)))
        return out
    if t == "event_declaration":
        return [export(src.field_text(m, "name"), "event", m, _sig(src, m, m.child_by_field_name("accessors")))]
    return []


def _type(src: Source, node: Node) -> Export:
    kind = _TYPES[node.type]
    body = node.child_by_field_name("body")
    members: list[Export] = []
    for m in body.named_children if body is not None else []:
        if m.type == "enum_member_declaration":
            members.append(export(src.field_text(m, "name"), "enum_member", m, " ".join(src.text(m).split())))
        else:
            members += _member(src, m, kind == "interface")
    params = next((c for c in node.named_children if c.type == "parameter_list"), None)
    if kind == "record" and params is not None:
        members += [export(src.field_text(p, "name"), "property", p, " ".join(src.text(p).split()))
                    for p in params.named_children if p.type == "parameter"]
    return export(src.field_text(node, "name"), kind, node, _sig(src, node, body), _doc(src, node), members)


def _walk(src: Source, container: Node, exports: list[Export], imports: list[Import]) -> None:
    for node in container.named_children:
        t = node.type
        if t == "using_directive":
            alias = node.child_by_field_name("name")
            names = ("qualified_name", "identifier", "generic_name", "alias_qualified_name")
            target = [c for c in node.named_children if c != alias and c.type in names]
            spec = src.text(target[-1]) if target else src.text(node)
            static = any(c.type == "static" or src.text(c) == "static" for c in node.children)
            imports.append(make_import(("static " if static else "") + spec, node,
                                       names=[src.text(alias)] if alias is not None else ["*"]))
        elif t in ("namespace_declaration", "file_scoped_namespace_declaration"):
            body = node.child_by_field_name("body")
            _walk(src, body if body is not None else node, exports, imports)
        elif t in _TYPES and "public" in _mods(src, node):
            exports.append(_type(src, node))


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    _walk(src, root, exports, imports)
    return exports, imports
