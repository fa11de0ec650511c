"""Ruby: classes, modules and their public methods.

Exported: top-level classes and modules (nested ones as members), top-level methods ("function") and
constants. Members: public instance methods (before any bare `private`/`protected`, not named by
`private :x`/`private def x`), singleton methods (`def self.x`), constants, `attr_reader`/`attr_writer`/
`attr_accessor` names ("property"), nested classes and modules. Docs: the `#` comments above. Imports:
`require`, `require_relative` (relative, resolved beside the file), `load`, `autoload`; a `require` is resolved
under lib/, then from the project root (with or without its .rb).
"""

from __future__ import annotations

import posixpath

from adapters.code_parser.resolution import ProjectIndex, join
from adapters.code_parser.source import Node, Source, clean_comment, export, make_import, unquote
from domain.knowledge.skeleton import Export, Import

_REQUIRES = ("require", "require_relative", "load", "autoload")
_ATTRS = ("attr_reader", "attr_writer", "attr_accessor")


def _doc(src: Source, node: Node) -> str | None:
    parts: list[str] = []
    current, prev = node, node.prev_sibling
    if prev is None and node.parent is not None and node.parent.type == "body_statement":
        prev = node.parent.prev_sibling
    while prev is not None and prev.type == "comment" and prev.end_point[0] >= current.start_point[0] - 1:
        parts.append(src.text(prev))
        current, prev = prev, prev.prev_sibling
    return clean_comment("\n".join(reversed(parts))) or None if parts else None


def _method(src: Source, node: Node, member: bool) -> Export:
    name = src.field_text(node, "name")
    body = node.child_by_field_name("body")
    kind = "method" if member else "function"
    if node.type == "singleton_method":
        name = f"self.{name}"
        kind = "method"
    if name == "initialize":
        kind = "constructor"
    sig = src.signature(node, body, "=")
    return export(name, kind, node, sig, _doc(src, node))


def _call_name(src: Source, call: Node) -> str:
    return src.field_text(call, "method") if call.type == "call" else ""


def _symbols(src: Source, call: Node) -> list[str]:
    args = call.child_by_field_name("arguments")
    return [src.text(a).lstrip(":") for a in (args.named_children if args is not None else [])
            if a.type in ("simple_symbol", "string")]


def _body_members(src: Source, body: Node | None) -> list[Export]:
    out: list[Export] = []
    visible = True
    hidden: set[str] = set()
    for node in body.named_children if body is not None else []:
        t = node.type
        if t == "identifier" and src.text(node) in ("private", "protected", "public", "module_function"):
            visible = src.text(node) in ("public", "module_function")
        elif t == "call" and _call_name(src, node) in ("private", "protected", "private_class_method",
                                                        "private_constant"):
            hidden.update(_symbols(src, node))
            args = node.child_by_field_name("arguments")
            for a in args.named_children if args is not None else []:
                if a.type in ("method", "singleton_method"):
                    hidden.add(src.field_text(a, "name"))
                    hidden.add(f"self.{src.field_text(a, 'name')}")
        elif t == "call" and _call_name(src, node) in _ATTRS and visible:
            out += [export(n, "property", node, " ".join(src.text(node).split())) for n in _symbols(src, node)]
        elif (t == "method" and visible) or t == "singleton_method":
            out.append(_method(src, node, True))
        elif t in ("class", "module"):
            out.append(_namespace(src, node))
        elif t == "assignment":
            left = node.child_by_field_name("left")
            if left is not None and left.type == "constant":
                out.append(export(src.text(left), "const", node, src.text(left), _doc(src, node)))
    return [m for m in out if m.name not in hidden]


def _namespace(src: Source, node: Node) -> Export:
    body = node.child_by_field_name("body")
    kind = "class" if node.type == "class" else "module"
    name = src.field_text(node, "name")
    last = node.child_by_field_name("superclass") or node.child_by_field_name("name")
    sig = " ".join(src.span(node.start_byte, last.end_byte).split()) if last is not None else kind
    return export(name, kind, node, sig, _doc(src, node), _body_members(src, body))


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    for node in root.named_children:
        t = node.type
        if t == "call" and _call_name(src, node) in _REQUIRES:
            args = node.child_by_field_name("arguments")
            strings = [a for a in (args.named_children if args is not None else []) if a.type == "string"]
            if strings:
                spec = unquote(src.text(strings[-1]))
                relative = _call_name(src, node) == "require_relative"
                imports.append(make_import(spec, node, relative=relative, names=[spec.rsplit("/", 1)[-1]]))
        elif t in ("class", "module"):
            exports.append(_namespace(src, node))
        elif t in ("method", "singleton_method"):
            exports.append(_method(src, node, False))
        elif t == "assignment":
            left = node.child_by_field_name("left")
            if left is not None and left.type == "constant":
                exports.append(export(src.text(left), "const", node, src.text(left), _doc(src, node)))
    return exports, imports


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    spec = imp.specifier
    candidates = [spec, spec + ".rb"]
    if imp.relative:
        return ix.first_file([join(posixpath.dirname(path), c) for c in candidates])
    return ix.first_file([join(root, c) for root in ("lib", "") for c in candidates])
