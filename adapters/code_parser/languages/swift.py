"""Swift: what another module sees (`public` and `open`; the default, `internal`, is not exported).

Exported: public/open classes, structs, enums, actors, protocols, functions, properties (`let` → "const",
`var` → "variable") and typealiases. Members: public/open properties, methods, initializers and nested types,
every requirement of a protocol, the cases of an enum. Public members of an `extension` join the extended
type when it is declared in the same file, and otherwise form an export of kind "extension". Docs: `///`
comments above. Imports: `import Module` and `import kind Module.Symbol` (not resolved: modules are packages).
"""

from __future__ import annotations

from adapters.code_parser.source import Node, Source, doc_before, export, make_import
from domain.knowledge.skeleton import Export, Import

_VISIBLE = {"public", "open"}
_KEYWORDS = {"class": "class", "struct": "struct", "enum": "enum", "actor": "class", "extension": "extension"}


def _mods(src: Source, node: Node) -> set[str]:
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    return set(src.text(mods).split()) if mods is not None else set()


def _doc(src: Source, node: Node) -> str | None:
    return doc_before(src, node, ("comment", "multiline_comment"), accept=lambda t: t.startswith(("///", "/**")))


def _sig(src: Source, node: Node, body: Node | None) -> str:
    text = src.signature(node, body, "{=")
    return " ".join(w for w in text.split(" ") if not w.startswith("@")) if text.startswith("@") else text


def _item(src: Source, node: Node, member: bool, all_visible: bool = False) -> list[Export]:
    t = node.type
    if not all_visible and not (_mods(src, node) & _VISIBLE):
        return []
    body = node.child_by_field_name("body")
    if t in ("class_declaration", "protocol_declaration"):
        keyword = next((c.type for c in node.children if c.type in _KEYWORDS), "class")
        kind = "protocol" if t == "protocol_declaration" else _KEYWORDS[keyword]
        members: list[Export] = []
        for m in body.named_children if body is not None else []:
            if m.type == "enum_entry":
                members += [export(src.text(n), "enum_member", m, " ".join(src.text(m).split()))
                            for n in m.children_by_field_name("name")]
            else:
                members += _item(src, m, True, all_visible=kind == "protocol")
        name_node = node.child_by_field_name("name")
        return [export(src.text(name_node), kind, node, _sig(src, node, body), _doc(src, node), members)]
    if t in ("function_declaration", "protocol_function_declaration"):
        return [export(src.field_text(node, "name"), "method" if member else "function", node,
                       _sig(src, node, body), _doc(src, node))]
    if t == "init_declaration":
        return [export("init", "constructor", node, _sig(src, node, body), _doc(src, node))]
    if t in ("property_declaration", "protocol_property_declaration"):
        value = node.child_by_field_name("value") or node.child_by_field_name("computed_value")
        is_let = any(c.type == "value_binding_pattern" and src.text(c) == "let" for c in node.named_children)
        kind = "property" if member else ("const" if is_let else "variable")
        names = [src.text(n) for n in node.children_by_field_name("name")]
        return [export(n, kind, node, _sig(src, node, value), _doc(src, node)) for n in names]
    if t in ("typealias_declaration", "associatedtype_declaration"):
        return [export(src.field_text(node, "name"), "type", node, _sig(src, node, None), _doc(src, node))]
    return []


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    extensions: list[Export] = []
    for node in root.named_children:
        if node.type == "import_declaration":
            ident = next((c for c in node.named_children if c.type == "identifier"), None)
            spec = src.text(ident)
            imports.append(make_import(spec, node, names=[spec.rsplit(".", 1)[-1]]))
        elif node.type == "class_declaration" and any(c.type == "extension" for c in node.children):
            found = _item(src, node, False, all_visible=True)
            for ext in found:
                if ext.members:
                    extensions.append(ext)
        else:
            exports += _item(src, node, False)
    owners = {e.name: e for e in exports}
    for ext in extensions:
        owner = owners.get(ext.name)
        if owner is not None:
            owner.members.extend(ext.members)
        else:
            exports.append(ext)
    return exports, imports
