"""Lua: a module is the table a file returns.

Exported: the functions and fields set on the returned table (`function M.f`, `function M:m`, `M.x = …`, or the
fields of a returned table constructor), plus global (non-`local`) functions. Docs: `---` comments. Imports:
`require("a.b")` calls, resolved to a/b.lua or a/b/init.lua (from the project root, src/ or lua/).
"""

from __future__ import annotations

import re

from adapters.code_parser.resolution import ProjectIndex, join
from adapters.code_parser.source import Node, Source, doc_before, export, make_import, unquote
from domain.knowledge.skeleton import Export, Import


def _requires(src: Source, node: Node, out: list[Import]) -> None:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "function_call":
            name = n.child_by_field_name("name")
            if name is not None and src.text(name) == "require":
                args = n.child_by_field_name("arguments")
                strings = [a for a in (args.named_children if args is not None else [args]) if a is not None and
                           a.type == "string"] if args is not None and args.type != "string" else [args]
                for s in strings:
                    if s is not None:
                        spec = unquote(src.text(s))
                        out.append(make_import(spec, node, names=[spec.rsplit(".", 1)[-1]]))
                continue
        if n.type not in ("function_declaration", "function_definition", "block"):
            stack.extend(reversed(n.named_children))


def _doc(src: Source, node: Node) -> str | None:
    return doc_before(src, node, ("comment",), accept=lambda t: t.startswith("---"))


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    imports: list[Import] = []
    children = root.named_children
    returned = None
    for node in children:
        if node.type == "return_statement" and node.named_child_count:
            expr = node.named_children[0]
            value = expr.named_children[0] if expr.type == "expression_list" and expr.named_child_count else expr
            returned = value
    table = src.text(returned) if returned is not None and returned.type == "identifier" else None
    exports: list[Export] = []
    for i, node in enumerate(children):
        _requires(src, node, imports)
        t = node.type
        if root.field_name_for_named_child(i) == "local_declaration":
            continue
        if t == "function_declaration":
            name_node = node.child_by_field_name("name")
            name = src.text(name_node)
            params = node.child_by_field_name("parameters")
            sig = " ".join(src.span(node.start_byte, params.end_byte).split()) if params else src.signature(node)
            if name_node is not None and name_node.type in ("dot_index_expression", "method_index_expression"):
                owner, _, member = re.split(r"[.:]", name, maxsplit=1)[0], None, re.split(r"[.:]", name)[-1]
                if owner == table:
                    kind = "method" if name_node.type == "method_index_expression" else "function"
                    exports.append(export(member, kind, node, sig, _doc(src, node)))
            elif name_node is not None:
                exports.append(export(name, "function", node, sig, _doc(src, node)))
        elif t == "assignment_statement" and table:
            names = node.named_children[0] if node.named_child_count else None
            values = node.named_children[1] if node.named_child_count > 1 else None
            for i, target in enumerate(names.named_children if names is not None else []):
                text = src.text(target)
                if target.type == "dot_index_expression" and text.startswith(table + "."):
                    value = values.named_children[i] if values is not None and i < values.named_child_count else None
                    fn = value if value is not None and value.type == "function_definition" else None
                    kind = "variable" if fn is None else "function"
                    sig = src.signature(node, fn.child_by_field_name("body") if fn is not None else None, "")
                    exports.append(export(text.split(".", 1)[1], kind, node, sig.split("=")[0].strip()
                                          if kind == "variable" else sig, _doc(src, node)))
    if returned is not None and returned.type == "table_constructor":
        for field in returned.named_children:
            name = field.child_by_field_name("name")
            if name is not None:
                exports.append(export(src.text(name), "variable", field, " ".join(src.text(field).split())))
    return exports, imports


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    mod = imp.specifier.replace(".", "/")
    return ix.first_file([mod + ".lua", join(mod, "init.lua"), join("src", mod) + ".lua", join("lua", mod) + ".lua"])
