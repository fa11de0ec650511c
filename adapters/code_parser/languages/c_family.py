"""C and C++: what other translation units can link to or include.

Exported at file scope (also inside `#ifdef` blocks, `extern "C" {}` and, for C++, named namespaces):
non-`static` function definitions and prototypes ("function"), non-`static` variables ("variable"), struct,
union and enum definitions, typedefs and `using` aliases ("type", or "struct"/"union"/"enum" when the typedef
names a body), C++ classes ("class"), named namespaces ("namespace", their exports as members), and in headers
(.h/.hpp/…) `#define` macros ("macro"; not include guards) and `static inline` functions. Out-of-line member
definitions (`A::f() {}`) are not new exports. Members: fields and methods of structs/unions/classes that are
public (`public:` sections; a class starts private, a struct public), enumerators. Docs: the comment above.
Imports: `#include "…"` (relative) and `#include <…>`, resolved beside the file (`"…"` only), then under the
`include/` directory and the directory itself of each ancestor directory, up to the project root.
"""

from __future__ import annotations

import posixpath

from adapters.code_parser.resolution import ProjectIndex, join
from adapters.code_parser.source import Node, Source, doc_before, export, make_import, unquote
from domain.knowledge.skeleton import Export, Import

HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".inl")
_CONTAINERS = ("preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif", "preproc_elifdef")
_TYPES = {"struct_specifier": "struct", "union_specifier": "union", "enum_specifier": "enum",
          "class_specifier": "class"}


def _declarator_name(src: Source, node: Node | None) -> tuple[str, bool]:
    """(name, is_function) of a declarator chain: *f(int) → (f, True)."""
    is_function = False
    while node is not None:
        t = node.type
        if t == "function_declarator":
            is_function = True
        if t in ("identifier", "field_identifier", "type_identifier", "qualified_identifier", "destructor_name",
                 "operator_name", "primitive_type"):
            return src.text(node), is_function
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type.endswith("declarator") or c.type in (
                "identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name")), None)
        node = inner
    return "", is_function


def _static(src: Source, node: Node) -> tuple[bool, bool]:
    words = {src.text(c) for c in node.named_children if c.type == "storage_class_specifier"}
    return "static" in words, "inline" in words


def _doc(src: Source, node: Node) -> str | None:
    return doc_before(src, node, ("comment",))


def _members(src: Source, body: Node | None, public_default: bool) -> list[Export]:
    out: list[Export] = []
    public = public_default
    for m in body.named_children if body is not None else []:
        t = m.type
        if t == "access_specifier":
            public = src.text(m).strip().rstrip(":") == "public"
            continue
        if t == "enumerator":
            out.append(export(src.field_text(m, "name"), "enum_member", m, " ".join(src.text(m).split())))
            continue
        if not public:
            continue
        inner = m
        if t == "template_declaration":
            inner = next((c for c in m.named_children if c.type in (
                "function_definition", "declaration", "field_declaration")), m)
        if inner.type in ("field_declaration", "declaration", "function_definition"):
            decls = inner.children_by_field_name("declarator")
            nested = inner.child_by_field_name("type")
            if nested is not None and nested.type in _TYPES and nested.child_by_field_name("body") is not None:
                out += _type(src, nested, m)
            for d in decls:
                name, is_fn = _declarator_name(src, d)
                if not name:
                    continue
                kind = "method" if is_fn else "field"
                if is_fn and body is not None and name.split("<")[0] == _owner_name(src, body):
                    kind = "constructor"
                sig = src.signature(m, inner.child_by_field_name("body"), "{;=")
                if not is_fn and len(decls) > 1:
                    sig = " ".join(filter(None, [src.field_text(inner, "type"), src.text(d)]))
                elif not is_fn:
                    sig = src.signature(m, None, ";")
                out.append(export(name, kind, m, sig, _doc(src, m)))
        elif inner.type in _TYPES and inner.child_by_field_name("body") is not None:
            out += _type(src, inner, m)
        elif inner.type == "alias_declaration":
            out.append(export(src.field_text(inner, "name"), "type", m, src.signature(m, None, ";")))
    return out


def _owner_name(src: Source, body: Node) -> str:
    parent = body.parent
    return src.field_text(parent, "name") if parent is not None else ""


def _type(src: Source, spec: Node, span: Node, name: str | None = None) -> list[Export]:
    body = spec.child_by_field_name("body")
    kind = _TYPES[spec.type]
    name = name or src.field_text(spec, "name")
    if not name or body is None:
        return []
    members = _members(src, body, public_default=kind != "class")
    return [export(name, kind, spec, src.signature(spec, body, "{"), _doc(src, span), members, span_node=span)]


def _walk(src: Source, container: Node, header: bool, guard: str | None, out: list[Export],
          imports: list[Import]) -> None:
    for node in container.named_children:
        t = node.type
        if t == "preproc_include":
            path = node.child_by_field_name("path")
            if path is not None:
                spec = unquote(src.text(path))
                imports.append(make_import(spec, node, relative=path.type == "string_literal",
                                           names=[spec.rsplit("/", 1)[-1]]))
        elif t in _CONTAINERS:
            name = src.field_text(node, "name") if t == "preproc_ifdef" else None
            _walk(src, node, header, name or guard, out, imports)
        elif t in ("preproc_def", "preproc_function_def"):
            name = src.field_text(node, "name")
            if header and name != guard:
                value = node.child_by_field_name("value")
                cut = value if t == "preproc_function_def" else None  # a function-like macro: its head only
                out.append(export(name, "macro", node, src.signature(node, cut, ""), _doc(src, node)))
        elif t == "linkage_specification":
            body = node.child_by_field_name("body")
            if body is not None and body.type == "declaration_list":
                _walk(src, body, header, guard, out, imports)
            elif body is not None:
                _declaration(src, body, node, header, out)
        elif t == "namespace_definition":
            name = src.field_text(node, "name")
            body = node.child_by_field_name("body")
            if name and body is not None:
                inner: list[Export] = []
                _walk(src, body, header, guard, inner, imports)
                if inner or header:
                    out.append(export(name, "namespace", node, f"namespace {name}", _doc(src, node), inner))
        elif t == "template_declaration":
            inner_node = next((c for c in node.named_children if c.type in (
                "function_definition", "declaration", "class_specifier", "struct_specifier", "alias_declaration")),
                None)
            if inner_node is not None:
                _declaration(src, inner_node, node, header, out)
        else:
            _declaration(src, node, node, header, out)


def _declaration(src: Source, node: Node, span: Node, header: bool, out: list[Export]) -> None:
    t = node.type
    if t in _TYPES:
        out += _type(src, node, span)
        return
    if t == "alias_declaration":
        out.append(export(src.field_text(node, "name"), "type", span, src.signature(span, None, ";"), _doc(src, span)))
        return
    if t == "type_definition":
        type_node = node.child_by_field_name("type")
        for d in node.children_by_field_name("declarator"):
            name, _ = _declarator_name(src, d)
            if not name:
                continue
            if type_node is not None and type_node.type in _TYPES and type_node.child_by_field_name("body"):
                found = _type(src, type_node, span, name)
                out += [e.model_copy(update={"signature": src.signature(node, type_node.child_by_field_name("body"))
                                             + " " + src.text(d)}) for e in found]
            else:
                out.append(export(name, "type", span, src.signature(node, None, ";"), _doc(src, span)))
        return
    if t not in ("function_definition", "declaration"):
        return
    static, inline = _static(src, node)
    if static and not (header and inline):
        return
    type_node = node.child_by_field_name("type")
    if type_node is not None and type_node.type in _TYPES and type_node.child_by_field_name("body") is not None:
        out += _type(src, type_node, span)
    for d in node.children_by_field_name("declarator"):
        name, is_fn = _declarator_name(src, d)
        if not name or "::" in name:
            continue  # out-of-line definitions of members (A::f) are not new exports
        if is_fn:
            sig = src.signature(span, node.child_by_field_name("body"), "{;")
            out.append(export(name, "function", node, sig, _doc(src, span), span_node=span))
        else:
            target = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            sig = " ".join(filter(None, [src.field_text(node, "type"), src.text(target)]))
            out.append(export(name, "variable", node, sig, _doc(src, span), span_node=span))


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    _walk(src, root, src.path.lower().endswith(HEADER_SUFFIXES), None, exports, imports)
    seen: set[tuple[str, str]] = set()
    unique = []
    for e in exports:  # a prototype and its definition in one file: one export
        if (e.name, e.kind) not in seen:
            seen.add((e.name, e.kind))
            unique.append(e)
    return unique, imports


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    spec = imp.specifier
    here = posixpath.dirname(path)
    dirs = [here] if imp.relative else []
    for d in ix.ancestors(here):
        dirs += [join(d, "include"), d]
    return ix.first_file([join(d, spec) for d in dict.fromkeys(dirs)])
