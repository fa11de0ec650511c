"""Python definitions: what a `def`, `class`, `type` alias or assignment statement defines, with its members,
signature and docstring, and how a module's definitions of one name combine (adapters/code_parser/languages/python/).
"""

from __future__ import annotations

import inspect
import re

from adapters.code_parser.source import MAX_SIGNATURE, Node, Source, export
from domain.knowledge.skeleton import Export

_WS = re.compile(r"\s+")


def public(name: str) -> bool:
    return not name.startswith("_")


def _member_visible(name: str) -> bool:
    return public(name) or (name.startswith("__") and name.endswith("__"))


def _docstring(src: Source, body: Node | None) -> str | None:
    if body is None:
        return None
    for stmt in body.named_children:
        if stmt.type == "comment":
            continue
        if stmt.type == "expression_statement" and stmt.named_child_count == 1:
            string = stmt.named_children[0]
            if string.type == "string":
                content = "".join(src.text(c) for c in string.named_children if c.type == "string_content")
                return inspect.cleandoc(content) or None
        return None
    return None


def _decorators(node: Node, src: Source) -> list[str]:
    return [src.text(d).lstrip("@").strip() for d in node.named_children if d.type == "decorator"]


def _assignment_names(src: Source, assign: Node) -> list[str]:
    left, right = assign.child_by_field_name("left"), assign.child_by_field_name("right")
    names: list[str] = []
    if left is None:
        return names
    if left.type == "identifier":
        names.append(src.text(left))
    elif left.type in ("pattern_list", "tuple_pattern", "list_pattern"):
        names += [src.text(c) for c in left.named_children if c.type == "identifier"]
    if right is not None and right.type == "assignment":  # a = b = 1
        names += _assignment_names(src, right)
    return names


def _assignment_signature(src: Source, assign: Node, name: str) -> str:
    type_node = assign.child_by_field_name("type")
    right = assign.child_by_field_name("right")
    sig = name + (f": {src.text(type_node)}" if type_node is not None else "")
    if right is not None:
        value = " ".join(src.text(right).split())
        sig += f" = {value}" if len(value) <= 60 else " = …"
    return sig


def _header(src: Source, node: Node, body: Node | None) -> str:
    """A def's or class's header up to its colon: a comment after the colon (`def f(): # note`) belongs to the
    body, never to the signature (a comment edit would read as a changed signature)."""
    colon = body.prev_sibling if body is not None else None
    while colon is not None and colon.type != ":":  # comments between the colon and the block
        colon = colon.prev_sibling
    end = colon or body
    stop = end.start_byte if end is not None else node.end_byte
    quoted = []
    if node.type == "function_definition" and (src.data.find(b'"', node.start_byte, stop) >= 0
                                                or src.data.find(b"'", node.start_byte, stop) >= 0):
        quoted = _quoted_annotations(src, node)
    if not quoted:
        return src.signature(node, end, ":")
    # a string annotation is the type it names (PEP 563; griffe reads it so): `-> "Context"` shows as
    # `-> Context`, and quoting or unquoting one is no change of the signature
    pieces, at = [], node.start_byte
    for string in quoted:
        pieces += [src.span(at, string.start_byte), src.text(string.named_children[1])]
        at = string.end_byte
    pieces.append(src.span(at, stop))
    text = _WS.sub(" ", "".join(pieces)).strip().rstrip(":").rstrip()
    return text if len(text) <= MAX_SIGNATURE else text[: MAX_SIGNATURE - 1] + "…"


def _quoted_annotations(src: Source, fn: Node) -> list[Node]:
    """The plain string literals that make a whole parameter or return annotation, in source order."""
    types = [p.child_by_field_name("type") for p in (fn.child_by_field_name("parameters") or fn).named_children
             if p.type in ("typed_parameter", "typed_default_parameter")]
    types.append(fn.child_by_field_name("return_type"))
    out = []
    for t in types:
        if t is not None and t.named_child_count == 1 and t.named_children[0].type == "string":
            string = t.named_children[0]
            parts = [c.type for c in string.named_children]
            if parts == ["string_start", "string_content", "string_end"] and \
                    src.text(string.named_children[0]) in ('"', "'"):
                out.append(string)
    return out


def _function(src: Source, fn: Node, span: Node, member: bool, decorators: list[str]) -> Export:
    name = src.field_text(fn, "name")
    kind = "function"
    if member:
        kind = "constructor" if name == "__init__" else "method"
        if any(d in ("property", "cached_property", "functools.cached_property") or d.endswith(".setter")
               for d in decorators):
            kind = "property"
    body = fn.child_by_field_name("body")
    return export(name, kind, fn, _header(src, fn, body), _docstring(src, body), span_node=span)


def _class(src: Source, cls: Node, span: Node) -> Export:
    body = cls.child_by_field_name("body")
    members: list[Export] = []
    seen: dict[str, int] = {}
    overloads: set[str] = set()
    for stmt in body.named_children if body is not None else []:
        for item in definitions(src, stmt, member=True):
            if _member_visible(item.name):
                add(members, seen, overloads, item, is_overload(src, stmt))
    return export(src.field_text(cls, "name"), "class", cls, _header(src, cls, body), _docstring(src, body),
                  members, span_node=span)


_OVERLOAD = ("overload", "typing.overload", "typing_extensions.overload", "t.overload")


def is_overload(src: Source, stmt: Node) -> bool:
    return stmt.type == "decorated_definition" and any(d in _OVERLOAD for d in _decorators(stmt, src))


def add(exports: list[Export], seen: dict[str, int], overloads: set[str], item: Export, overload: bool,
         conditional: bool = False) -> None:
    """The first definition of a name stands, except `@overload` stubs, which the implementation replaces (its
    signature is the one callers get at run time), and except a def or class in an if/try block, which replaces
    an earlier definition (a platform variant or a fallback: the last one, as griffe reads it; a plain
    assignment there, such as asyncio's `Future = _asyncio.Future`, leaves the class it stands for)."""
    if item.name not in seen:
        seen[item.name] = len(exports)
        exports.append(item)
    elif (item.name in overloads or (conditional and item.kind not in ("variable", "const"))) and not overload:
        exports[seen[item.name]] = item
    else:
        return
    if overload:
        overloads.add(item.name)
    else:
        overloads.discard(item.name)


def definitions(src: Source, stmt: Node, member: bool) -> list[Export]:
    node, span, decorators = stmt, stmt, []
    if stmt.type == "decorated_definition":
        node = stmt.child_by_field_name("definition")
        decorators = _decorators(stmt, src)
        if node is None:
            return []
    if node.type == "function_definition":
        return [_function(src, node, span, member, decorators)]
    if node.type == "class_definition":
        return [_class(src, node, span)]
    if node.type == "type_alias_statement":
        left = node.named_children[0] if node.named_child_count else None
        name = src.text(left).split("[")[0].strip()
        return [export(name, "type", node, src.signature(node))]
    if node.type == "expression_statement" and node.named_child_count == 1:
        assign = node.named_children[0]
        if assign.type == "assignment":
            kind = "field" if member else "variable"
            return [export(n, "const" if not member and n.isupper() else kind, node,
                           _assignment_signature(src, assign, n)) for n in _assignment_names(src, assign)]
    return []
