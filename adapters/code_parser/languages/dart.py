"""Dart: library privacy is by name (a leading `_` is private to the library).

Exported: top-level classes, mixins, enums, extensions, typedefs, functions, getters/setters and variables
(`const` → "const", otherwise "variable") whose names do not start with `_`. Members: fields, constructors
(`Engine.named` as "named"), methods, getters and setters of the class body whose names do not start with
`_`, enum values. Docs: `///` and `/** */` comments. Imports: `import`, `export` (a re-export, names ["*"]),
`part` directives; names are the `show` list, the `as` prefix, or ["*"]. Resolved: relative URIs beside the
file, `package:name/x.dart` to lib/x.dart.
"""

from __future__ import annotations

from adapters.code_parser.resolution import ProjectIndex, join, resolve_relative
from adapters.code_parser.source import Node, Source, clean_comment, end_line, export, make_import, unquote
from domain.knowledge.skeleton import Export, Import


def _public(name: str) -> bool:
    return bool(name) and not name.startswith("_")


def _doc(node: Node, src: Source) -> str | None:
    parts = []
    prev = node.prev_named_sibling
    while prev is not None and prev.type in ("documentation_comment", "comment"):
        text = src.text(prev)
        if not text.startswith(("///", "/**")):
            break
        parts.append(text)
        prev = prev.prev_named_sibling
    return clean_comment("\n".join(reversed(parts))) or None if parts else None


def _ident(src: Source, node: Node, *types: str) -> str:
    named = node.child_by_field_name("name")
    if named is not None:
        return src.text(named)
    found = next((c for c in node.named_children if c.type in (types or ("identifier",))), None)
    return src.text(found) if found is not None else ""


def _with_body(src: Source, sig: Node, kind: str, name: str, doc_anchor: Node) -> Export:
    body = sig.next_named_sibling
    item = export(name, kind, sig, src.signature(sig, None, "{;=>"), _doc(doc_anchor, src))
    if body is not None and body.type == "function_body":
        item.end_line = end_line(body)
    return item


def _signature_name(src: Source, sig: Node) -> tuple[str, str]:
    inner = sig.named_children[0] if sig.type == "method_signature" and sig.named_child_count else sig
    t = inner.type
    if t in ("getter_signature", "setter_signature"):
        return _ident(src, inner), "property"
    if t in ("constructor_signature", "factory_constructor_signature", "redirecting_factory_constructor_signature",
             "constant_constructor_signature"):
        idents = [src.text(c) for c in inner.named_children if c.type == "identifier"]
        return (idents[1] if len(idents) > 1 else idents[0] if idents else ""), "constructor"
    if t == "operator_signature":
        return "operator", "method"
    return _ident(src, inner), "method"


def _fields(src: Source, decl: Node, kind: str) -> list[Export]:
    out = []
    for lst in decl.named_children:
        if lst.type in ("initialized_identifier_list", "static_final_declaration_list"):
            for item in lst.named_children:
                name = _ident(src, item)
                if _public(name):
                    out.append(export(name, kind, decl, " ".join(src.text(decl).split()).split("=")[0].strip(),
                                      _doc(decl, src)))
    return out


def _class_members(src: Source, body: Node | None) -> list[Export]:
    out: list[Export] = []
    for m in body.named_children if body is not None else []:
        if m.type == "method_signature":
            name, kind = _signature_name(src, m)
            if _public(name):
                out.append(_with_body(src, m, kind, name, m))
        elif m.type == "declaration":
            first = m.named_children[0] if m.named_child_count else None
            if first is not None and first.type in ("constructor_signature", "factory_constructor_signature",
                                                    "redirecting_factory_constructor_signature",
                                                    "constant_constructor_signature", "function_signature",
                                                    "getter_signature", "setter_signature"):
                name, kind = _signature_name(src, first)
                if _public(name):
                    out.append(export(name, kind, m, src.signature(first, None, ";"), _doc(m, src)))
            else:
                out += _fields(src, m, "field")
        elif m.type == "enum_constant":
            out.append(export(src.field_text(m, "name"), "enum_member", m, src.text(m)))
    return out


def _import(src: Source, node: Node) -> list[Import]:
    out = []
    for target in [node, *node.named_children]:
        if target.type not in ("library_import", "library_export", "part_directive"):
            continue
        spec_node = next((c for c in target.named_children if c.type == "import_specification"), target)
        uri = next((c for c in spec_node.named_children if c.type in ("configurable_uri", "uri")), None)
        spec = unquote(src.text(uri).split(" if ")[0]) if uri is not None else ""
        names: list[str] = []
        for c in spec_node.named_children:
            if c.type == "combinator" and src.text(c).startswith("show"):
                names += [src.text(i) for i in c.named_children if i.type == "identifier"]
            elif c.type == "identifier":
                names.append(src.text(c))
        relative = not spec.startswith(("dart:", "package:")) and ":" not in spec
        out.append(make_import(spec, target, relative=relative, names=names or ["*"]))
    return out


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    children = root.named_children
    for i, node in enumerate(children):
        t = node.type
        if t in ("import_or_export", "part_directive"):
            imports += _import(src, node)
        elif t in ("class_definition", "mixin_declaration", "extension_declaration", "enum_declaration",
                   "extension_type_declaration"):
            name = _ident(src, node)
            if not _public(name):
                continue
            body = node.child_by_field_name("body") or next(
                (c for c in node.named_children if c.type in ("class_body", "extension_body", "enum_body")), None)
            kind = {"class_definition": "class", "mixin_declaration": "mixin", "enum_declaration": "enum"}.get(
                t, "extension")
            exports.append(export(name, kind, node, src.signature(node, body, "{"), _doc(node, src),
                                  _class_members(src, body)))
        elif t == "type_alias":
            name = _ident(src, node, "type_identifier", "identifier")
            if _public(name):
                exports.append(export(name, "type", node, src.signature(node, None, ";"), _doc(node, src)))
        elif t in ("function_signature", "getter_signature", "setter_signature"):
            name = _ident(src, node)
            if _public(name):
                kind = "function" if t == "function_signature" else "property"
                exports.append(_with_body(src, node, kind, name, node))
        elif t in ("static_final_declaration_list", "initialized_identifier_list"):
            prev = children[i - 1] if i else None
            kind = "const" if prev is not None and prev.type == "const_builtin" else "variable"
            anchor = prev if prev is not None and prev.type in ("const_builtin", "final_builtin") else node
            for item in node.named_children:
                name = _ident(src, item)
                if _public(name):
                    exports.append(export(name, kind, item, f"{src.span(anchor.start_byte, item.start_byte)}"
                                          f"{name}".strip(), _doc(anchor, src)))
    return exports, imports


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    spec = imp.specifier
    if spec.startswith("package:"):
        rest = spec[len("package:"):].split("/", 1)
        return ix.first_file([join("lib", rest[1])]) if len(rest) == 2 else None
    return resolve_relative(imp, path, ix)
