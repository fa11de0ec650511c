"""Lua, Bash and Julia.

Lua — a module is the table a file returns: exported are the functions and fields set on it (`function
M.f`, `function M:m`, `M.x = …`, or the fields of a returned table constructor), plus global (non-`local`)
functions. Imports: `require("a.b")` calls (resolved to a/b.lua or a/b/init.lua). Docs: `---` comments.

Bash — exported are the functions a sourcing script gets and `export`ed variables. Imports: `source f` and
`. f` (relative; resolved beside the script, then from the project root; `$(dirname "$0")/` prefixes
understood). Docs: the `#` comments above.

Julia — a module's API is its `export` list (kinds from the definitions); without one, every top-level
function, struct, abstract type, macro, const and module whose name does not start with `_`. Modules are
exports of kind "module" with their exports as members; struct fields are members. Docs: the docstring
before a definition. Imports: `using`, `import` (selected names), and `include("file.jl")` (relative).
"""

from __future__ import annotations

import re

from adapters.code_parser.base import Node, Source, doc_before, export, make_import, unquote
from domain.skeleton import Export, Import

# --- Lua ---------------------------------------------------------------------------------------------------------


def _lua_require(src: Source, node: Node, out: list[Import]) -> None:
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


def _lua_doc(src: Source, node: Node) -> str | None:
    return doc_before(src, node, ("comment",), accept=lambda t: t.startswith("---"))


def extract_lua(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
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
        _lua_require(src, node, imports)
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
                    exports.append(export(member, kind, node, sig, _lua_doc(src, node)))
            elif name_node is not None:
                exports.append(export(name, "function", node, sig, _lua_doc(src, node)))
        elif t == "assignment_statement" and table:
            names = node.named_children[0] if node.named_child_count else None
            values = node.named_children[1] if node.named_child_count > 1 else None
            for i, target in enumerate(names.named_children if names is not None else []):
                text = src.text(target)
                if target.type == "dot_index_expression" and text.startswith(table + "."):
                    value = values.named_children[i] if values is not None and i < values.named_child_count else None
                    kind = "function" if value is not None and value.type == "function_definition" else "variable"
                    sig = src.signature(node, value.child_by_field_name("body") if kind == "function" else None, "")
                    exports.append(export(text.split(".", 1)[1], kind, node, sig.split("=")[0].strip()
                                          if kind == "variable" else sig, _lua_doc(src, node)))
    if returned is not None and returned.type == "table_constructor":
        for field in returned.named_children:
            name = field.child_by_field_name("name")
            if name is not None:
                exports.append(export(src.text(name), "variable", field, " ".join(src.text(field).split())))
    return exports, imports


# --- Bash --------------------------------------------------------------------------------------------------------

_DIRNAME = re.compile(r'^"?\$\((?:dirname|cd)[^)]*\)"?/|^"?\$\{BASH_SOURCE(?:\[0\])?%/\*\}"?/|^"?\$(?:SCRIPT_)?DIR"?/')


def extract_bash(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
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


# --- Julia -------------------------------------------------------------------------------------------------------

_JULIA_KINDS = {"function_definition": "function", "struct_definition": "struct", "abstract_definition": "type",
                "primitive_definition": "type", "macro_definition": "macro", "module_definition": "module",
                "const_statement": "const"}


def _julia_doc(src: Source, node: Node) -> str | None:
    prev = node.prev_named_sibling
    if prev is not None and prev.type == "string_literal" and prev.end_point[0] >= node.start_point[0] - 1:
        return src.text(prev).strip('"').strip() or None
    return None


def _julia_call_name(src: Source, node: Node | None) -> str:
    while node is not None and node.type in ("typed_expression", "where_expression", "signature"):
        node = node.named_children[0] if node.named_child_count else None
    if node is not None and node.type == "call_expression" and node.named_child_count:
        return src.text(node.named_children[0])
    return src.text(node) if node is not None and node.type == "identifier" else ""


def _julia_items(src: Source, container: Node, imports: list[Import]) -> list[Export]:
    defined: list[Export] = []
    exported: list[str] | None = None
    for node in container.named_children:
        t = node.type
        if t in ("using_statement", "import_statement"):
            for c in node.named_children:
                if c.type == "selected_import":
                    ids = [src.text(i) for i in c.named_children]
                    imports.append(make_import(ids[0] if ids else "", node, names=ids[1:]))
                else:
                    imports.append(make_import(src.text(c), node, names=[src.text(c).rsplit(".", 1)[-1]]))
        elif t == "call_expression" and node.named_child_count and src.text(node.named_children[0]) == "include":
            args = node.named_children[1] if node.named_child_count > 1 else None
            lit = next((a for a in args.named_children if a.type == "string_literal"), None) if args else None
            if lit is not None:
                spec = unquote(src.text(lit))
                imports.append(make_import(spec, node, relative=True, names=[spec]))
        elif t in ("export_statement", "public_statement"):
            exported = (exported or []) + [src.text(c) for c in node.named_children]
        elif t == "assignment" and node.named_child_count and node.named_children[0].type == "call_expression":
            name = _julia_call_name(src, node.named_children[0])
            defined.append(export(name, "function", node, " ".join(src.text(node.named_children[0]).split()),
                                  _julia_doc(src, node)))
        elif t in _JULIA_KINDS:
            defined += _julia_definition(src, node, imports)
    if exported is None:
        return [d for d in defined if not d.name.startswith("_")]
    by_name: dict[str, Export] = {}
    for d in defined:
        by_name.setdefault(d.name, d)
    return [by_name[n] for n in dict.fromkeys(exported) if n in by_name]


def _julia_definition(src: Source, node: Node, imports: list[Import]) -> list[Export]:
    t = node.type
    kind = _JULIA_KINDS[t]
    doc = _julia_doc(src, node)
    if t == "const_statement":
        assign = node.named_children[0] if node.named_child_count else None
        name = src.text(assign.named_children[0]) if assign is not None and assign.named_child_count else ""
        return [export(name, "const", node, f"const {name}", doc)]
    if t == "module_definition":
        name = src.field_text(node, "name")
        return [export(name, "module", node, f"module {name}", doc, _julia_items(src, node, imports))]
    if t in ("struct_definition", "abstract_definition", "primitive_definition"):
        head = next((c for c in node.named_children if c.type == "type_head"), None)
        name = src.text(head).split("<:")[0].split("{")[0].strip() if head is not None else ""
        members = []
        if t == "struct_definition":
            for c in node.named_children:
                if c.type in ("typed_expression", "identifier") and c != head:
                    field = src.text(c.named_children[0]) if c.type == "typed_expression" else src.text(c)
                    members.append(export(field, "field", c, " ".join(src.text(c).split())))
        header = src.text(node).split("\n", 1)[0].strip()
        return [export(name, kind, node, header, doc, members)]
    sig = next((c for c in node.named_children if c.type == "signature"), None)
    name = _julia_call_name(src, sig)
    keyword = "macro" if t == "macro_definition" else "function"
    return [export(name, kind, node, f"{keyword} {' '.join(src.text(sig).split())}" if sig is not None else
                   keyword, doc)]


def extract_julia(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    imports: list[Import] = []
    exports = _julia_items(src, root, imports)
    return exports, imports
