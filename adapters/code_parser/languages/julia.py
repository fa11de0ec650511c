"""Julia: a module's API is its `export` list (kinds from the definitions).

Without an `export` list, every top-level function, struct, abstract type, macro, const and module whose name does
not start with `_`. Modules are exports of kind "module" with their exports as members; struct fields are members.
Docs: the docstring before a definition. Imports: `using`, `import` (selected names), and `include("file.jl")`
(relative, resolved beside the file).
"""

from __future__ import annotations

from adapters.code_parser.resolution import resolve_relative
from adapters.code_parser.source import Node, Source, export, make_import, unquote
from domain.knowledge.skeleton import Export, Import

_KINDS = {"function_definition": "function", "struct_definition": "struct", "abstract_definition": "type",
                "primitive_definition": "type", "macro_definition": "macro", "module_definition": "module",
                "const_statement": "const"}


def _doc(src: Source, node: Node) -> str | None:
    prev = node.prev_named_sibling
    if prev is not None and prev.type == "string_literal" and prev.end_point[0] >= node.start_point[0] - 1:
        return src.text(prev).strip('"').strip() or None
    return None


def _call_name(src: Source, node: Node | None) -> str:
    while node is not None and node.type in ("typed_expression", "where_expression", "signature"):
        node = node.named_children[0] if node.named_child_count else None
    if node is not None and node.type == "call_expression" and node.named_child_count:
        return src.text(node.named_children[0])
    return src.text(node) if node is not None and node.type == "identifier" else ""


def _items(src: Source, container: Node, imports: list[Import]) -> list[Export]:
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
            name = _call_name(src, node.named_children[0])
            defined.append(export(name, "function", node, " ".join(src.text(node.named_children[0]).split()),
                                  _doc(src, node)))
        elif t in _KINDS:
            defined += _definition(src, node, imports)
    if exported is None:
        return [d for d in defined if not d.name.startswith("_")]
    by_name: dict[str, Export] = {}
    for d in defined:
        by_name.setdefault(d.name, d)
    return [by_name[n] for n in dict.fromkeys(exported) if n in by_name]


def _definition(src: Source, node: Node, imports: list[Import]) -> list[Export]:
    t = node.type
    kind = _KINDS[t]
    doc = _doc(src, node)
    if t == "const_statement":
        assign = node.named_children[0] if node.named_child_count else None
        name = src.text(assign.named_children[0]) if assign is not None and assign.named_child_count else ""
        return [export(name, "const", node, f"const {name}", doc)]
    if t == "module_definition":
        name = src.field_text(node, "name")
        return [export(name, "module", node, f"module {name}", doc, _items(src, node, imports))]
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
    name = _call_name(src, sig)
    keyword = "macro" if t == "macro_definition" else "function"
    return [export(name, kind, node, f"{keyword} {' '.join(src.text(sig).split())}" if sig is not None else
                   keyword, doc)]


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    imports: list[Import] = []
    exports = _items(src, root, imports)
    return exports, imports


resolve_import = resolve_relative  # include("file.jl"): beside the file; `using`/`import` name packages
