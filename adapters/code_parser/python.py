"""Python: what `import module` exposes.

Exported: top-level `def`/`async def`/`class`, `type` aliases and assignments, including those nested in
top-level `if`/`try`/`with` blocks, whose names do not start with `_`; when the module assigns `__all__` as
literal lists/tuples of strings (`=`, `+=`, `+`), exactly the names listed there that the module defines or
imports (imported ones become kind "other" with the import as signature). An `__all__` computed at run time
(a comprehension, a name) is ignored. Members of a class: its methods whose names do not start with `_`
plus dunder methods (`__init__` as "constructor", `@property` as "property"), public class attributes
("field") and public nested classes. Docs are docstrings. Imports: `import a.b`, `from .x import y`
(relative when dotted).
"""

from __future__ import annotations

import inspect

from adapters.code_parser.base import Node, Source, export, make_import
from domain.skeleton import Export, Import

_BLOCKS = ("if_statement", "try_statement", "with_statement")


def _public(name: str) -> bool:
    return not name.startswith("_")


def _member_visible(name: str) -> bool:
    return _public(name) or (name.startswith("__") and name.endswith("__"))


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


def _function(src: Source, fn: Node, span: Node, member: bool, decorators: list[str]) -> Export:
    name = src.field_text(fn, "name")
    kind = "function"
    if member:
        kind = "constructor" if name == "__init__" else "method"
        if any(d in ("property", "cached_property", "functools.cached_property") or d.endswith(".setter")
               for d in decorators):
            kind = "property"
    body = fn.child_by_field_name("body")
    return export(name, kind, fn, src.signature(fn, body, ":"), _docstring(src, body), span_node=span)


def _class(src: Source, cls: Node, span: Node) -> Export:
    body = cls.child_by_field_name("body")
    members: list[Export] = []
    seen: set[str] = set()
    for stmt in body.named_children if body is not None else []:
        for item in _definitions(src, stmt, member=True):
            if _member_visible(item.name) and item.name not in seen:
                seen.add(item.name)
                members.append(item)
    return export(src.field_text(cls, "name"), "class", cls, src.signature(cls, body, ":"), _docstring(src, body),
                  members, span_node=span)


def _definitions(src: Source, stmt: Node, member: bool) -> list[Export]:
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


def _nested_statements(node: Node) -> list[Node]:
    """Statements of top-level if/try/with blocks (definitions made there are module attributes too)."""
    out: list[Node] = []
    for child in node.named_children:
        if child.type == "block":
            out.extend(child.named_children)
        elif child.type in ("else_clause", "elif_clause", "except_clause", "finally_clause", "except_group_clause"):
            out.extend(_nested_statements(child))
    return out


def _literal_names(src: Source, node: Node | None) -> list[str] | None:
    """Strings of a literal list/tuple, or of `+` concatenations of them; None when not static."""
    if node is None:
        return None
    if node.type in ("list", "tuple", "expression_list"):
        names = []
        for item in node.named_children:
            if item.type == "comment":
                continue
            if item.type != "string" or any(c.type == "interpolation" for c in item.named_children):
                return None
            names.append("".join(src.text(c) for c in item.named_children if c.type == "string_content"))
        return names
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return _literal_names(src, node.named_children[0])
    if node.type == "binary_operator" and src.text(node.child_by_field_name("operator")) == "+":
        left = _literal_names(src, node.child_by_field_name("left"))
        right = _literal_names(src, node.child_by_field_name("right"))
        return None if left is None or right is None else left + right
    return None


_DYNAMIC: list[str] = ["<dynamic>"]  # marks an __all__ that cannot be read statically


def _all_names(src: Source, stmt: Node) -> list[str] | None:
    """The names an `__all__ = …` / `__all__ += …` statement lists; _DYNAMIC when they are computed."""
    if stmt.type != "expression_statement" or stmt.named_child_count != 1:
        return None
    node = stmt.named_children[0]
    if node.type not in ("assignment", "augmented_assignment"):
        return None
    left = node.child_by_field_name("left")
    if left is None or src.text(left) != "__all__":
        return None
    names = _literal_names(src, node.child_by_field_name("right"))
    return _DYNAMIC if names is None else names


def _imports(src: Source, stmt: Node) -> list[Import]:
    if stmt.type == "import_statement":
        out = []
        for item in stmt.named_children:
            target = item.child_by_field_name("name") if item.type == "aliased_import" else item
            alias = item.child_by_field_name("alias") if item.type == "aliased_import" else None
            spec = src.text(target)
            out.append(make_import(spec, stmt, names=[src.text(alias) if alias else spec.split(".")[0]]))
        return out
    if stmt.type == "import_from_statement":
        module = stmt.child_by_field_name("module_name")
        spec = src.text(module)
        names: list[str] = []
        for item in stmt.named_children:
            if item == module:
                continue
            if item.type == "wildcard_import":
                names.append("*")
            elif item.type == "aliased_import":
                names.append(src.field_text(item, "name"))
            elif item.type == "dotted_name":
                names.append(src.text(item))
        return [make_import(spec, stmt, relative=spec.startswith("."), names=names)]
    if stmt.type == "future_import_statement":
        return []
    return []


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    seen: set[str] = set()
    declared_all: list[str] | None = None
    imported: dict[str, Import] = {}
    pending = []
    for stmt in root.named_children:  # a top-level ERROR node (tree-sitter gave up on a span) still holds statements
        pending.extend(stmt.named_children if stmt.type == "ERROR" else [stmt])
    while pending:
        stmt = pending.pop(0)
        if stmt.type in _BLOCKS:
            pending[0:0] = _nested_statements(stmt)
            continue
        if stmt.type in ("import_statement", "import_from_statement"):
            for imp in _imports(src, stmt):
                imports.append(imp)
                for name in imp.names:
                    imported.setdefault(name, imp)
            continue
        names = _all_names(src, stmt)
        if names is not None:
            if names is _DYNAMIC or declared_all is _DYNAMIC:
                declared_all = _DYNAMIC
            elif stmt.named_children[0].type == "assignment":
                declared_all = names
            else:
                declared_all = (declared_all or []) + names
            continue
        for item in _definitions(src, stmt, member=False):
            if item.name not in seen:
                seen.add(item.name)
                exports.append(item)
    if declared_all is None or declared_all is _DYNAMIC:  # no __all__, or one computed at run time
        return [e for e in exports if _public(e.name)], imports
    by_name = {e.name: e for e in exports}
    chosen: list[Export] = []
    for name in dict.fromkeys(declared_all):
        if name in by_name:
            chosen.append(by_name[name])
        elif name in imported:
            imp = imported[name]
            chosen.append(Export(name=name, kind="other", signature=f"from {imp.specifier} import {name}",
                                 start_line=imp.line or 1, end_line=imp.line or 1))
    return chosen, imports
