"""Rust items: what a module's (or an inline module's, a trait's, an impl's) items export and import; the rules are the
package's (adapters/code_parser/languages/rust/)."""

from __future__ import annotations

import re

from adapters.code_parser.source import Node, Source, clean_comment, export, make_import
from domain.knowledge.skeleton import Export, Import

_KINDS = {
    "function_item": "function",
    "function_signature_item": "function",
    "struct_item": "struct",
    "union_item": "union",
    "enum_item": "enum",
    "trait_item": "trait",
    "type_item": "type",
    "const_item": "const",
    "static_item": "variable",
    "mod_item": "module",
    "associated_type": "type",
}


TYPE_ITEMS = ("struct_item", "enum_item", "union_item", "trait_item", "type_item")
_PATH_ATTR = re.compile(r'#\[\s*path\s*=\s*"([^"]+)"\s*\]')


def _pub(src: Source, node: Node) -> bool:
    return any(c.type == "visibility_modifier" and src.text(c) == "pub" for c in node.named_children)


def _attributes_and_doc(src: Source, node: Node) -> tuple[list[str], str | None]:
    attrs: list[str] = []
    docs: list[str] = []
    prev = node.prev_sibling
    while prev is not None and prev.type in ("attribute_item", "line_comment", "block_comment"):
        text = src.text(prev)
        if prev.type == "attribute_item":
            attrs.append(text)
        elif (text.startswith("///") and not text.startswith("////")) or text.startswith("/**"):
            docs.append(text)
        else:
            break
        prev = prev.prev_sibling
    return attrs, (clean_comment("\n".join(reversed(docs))) or None) if docs else None


def _type_name(src: Source, node: Node | None) -> str:
    while node is not None and node.type in ("generic_type", "reference_type", "pointer_type", "bounded_type",
                                             "dynamic_type"):
        if node.type == "bounded_type":  # Tr + 'a, dyn Tr + Send: the first bound names it
            node = node.named_children[0] if node.named_child_count else None
        else:
            node = node.child_by_field_name("trait" if node.type == "dynamic_type" else "type")
    if node is None:
        return ""
    return src.text(node).split("::")[-1].split("<")[0].strip()


def _tuple_fields(src: Source, body: Node) -> list[Export]:
    """The pub fields of a tuple struct, named by position ("0", "1", …)."""
    out, index, public = [], 0, False
    for c in body.named_children:
        if c.type == "visibility_modifier":
            public = src.text(c) == "pub"
        elif c.type not in ("attribute_item", "line_comment", "block_comment"):
            if public:
                out.append(export(str(index), "field", c, f"pub {' '.join(src.text(c).split())}"))
            index, public = index + 1, False
    return out


def _fields(src: Source, body: Node | None, all_public: bool = False) -> list[Export]:
    if body is not None and body.type == "ordered_field_declaration_list":
        return _tuple_fields(src, body)
    out = []
    for f in body.named_children if body is not None else []:
        if f.type == "field_declaration" and (all_public or _pub(src, f)):
            out.append(export(src.field_text(f, "name"), "field", f, " ".join(src.text(f).split()),
                              _attributes_and_doc(src, f)[1]))
        elif f.type == "enum_variant":
            out.append(export(src.field_text(f, "name"), "enum_member", f, " ".join(src.text(f).split()),
                              _attributes_and_doc(src, f)[1]))
    return out


def _item(src: Source, node: Node, in_trait: bool = False) -> Export | None:
    kind = _KINDS.get(node.type)
    if kind is None:
        return None
    name = src.field_text(node, "name")
    body = node.child_by_field_name("body")
    members: list[Export] = []
    if kind in ("struct", "union"):
        members = _fields(src, body)
    elif kind == "enum":
        members = _fields(src, body, all_public=True)
    elif kind == "trait":
        members = [m for c in (body.named_children if body is not None else []) if (m := _item(src, c, True))]
    elif kind == "module" and body is not None:
        members = items(src, body)[0]
    if in_trait and kind == "function":
        kind = "method"
    sig = src.signature(node, body if kind not in ("struct", "union", "enum") or body is None or
                        body.type != "ordered_field_declaration_list" else None, "{;")
    if kind in ("const", "variable", "type"):
        value = node.child_by_field_name("value")
        sig = src.signature(node, None, ";") if kind == "type" else src.signature(node, value, "=;")
    return export(name, kind, node, sig, _attributes_and_doc(src, node)[1], members)


def _use_tree(src: Source, node: Node, prefix: str, out: list[tuple[str, list[str]]]) -> None:
    t = node.type
    join = (lambda a, b: f"{a}::{b}" if a else b)  # noqa: E731
    if t == "scoped_use_list":
        path = node.child_by_field_name("path")
        new_prefix = join(prefix, src.text(path)) if path is not None else prefix
        lst = node.child_by_field_name("list")
        if lst is not None:
            _use_tree(src, lst, new_prefix, out)
    elif t == "use_list":
        leaves = []
        for c in node.named_children:
            if c.type in ("identifier", "self", "crate", "super"):
                leaves.append(src.text(c))
            else:
                _use_tree(src, c, prefix, out)
        if leaves:
            out.append((prefix, leaves))
    elif t == "use_wildcard":
        inner = node.named_children[0] if node.named_child_count else None
        out.append((join(prefix, src.text(inner)) if inner is not None else prefix, ["*"]))
    elif t == "use_as_clause":  # the whole path (it names what is imported), binding the alias
        out.append((join(prefix, src.field_text(node, "path")), [src.field_text(node, "alias")]))
    elif t == "scoped_identifier":
        head, _, leaf = join(prefix, src.text(node)).rpartition("::")
        out.append((head, [leaf]))
    else:  # `use ser;` names the module ser
        out.append((prefix or src.text(node), [src.text(node)]))


def items(src: Source, container: Node) -> tuple[list[Export], list[Import], list[tuple[str, Export]]]:
    exports: list[Export] = []
    imports: list[Import] = []
    impls: list[tuple[str, Export]] = []  # (type name, impl member or method)
    for node in container.named_children:
        t = node.type
        if t == "use_declaration":
            arg = node.child_by_field_name("argument")
            trees: list[tuple[str, list[str]]] = []
            if arg is not None:
                _use_tree(src, arg, "", trees)
            for spec, leaves in trees:  # a `self` leaf binds the last segment: use a::b::{self} binds b
                names = [spec.rsplit("::", 1)[-1] if n == "self" and spec else n for n in leaves]
                relative = spec.split("::", 1)[0] in ("self", "super", "crate")
                imports.append(make_import(spec, node, relative=relative, names=names))
                if _pub(src, node):
                    exports += [export(n, "other", node, src.signature(node, None, ";"))
                                for n in names if n not in ("*", "_")]
        elif t == "mod_item":
            if node.child_by_field_name("body") is None:
                name = src.field_text(node, "name")
                where = next((m.group(1) for a in _attributes_and_doc(src, node)[0] if (m := _PATH_ATTR.match(a))),
                             None)
                spec = f'#[path = "{where}"] mod {name}' if where else f"mod {name}"
                imports.append(make_import(spec, node, relative=True, names=[name]))
            if _pub(src, node):
                item = _item(src, node)
                if item:
                    exports.append(item)
        elif t == "extern_crate_declaration":
            name = src.field_text(node, "name")
            imports.append(make_import(name, node, names=[name]))
        elif t == "macro_definition":
            attrs, doc = _attributes_and_doc(src, node)
            if any("macro_export" in a for a in attrs):
                exports.append(export(src.field_text(node, "name"), "macro", node,
                                      f"macro_rules! {src.field_text(node, 'name')}", doc))
        elif t == "impl_item":
            type_name = _type_name(src, node.child_by_field_name("type"))
            body = node.child_by_field_name("body")
            trait = node.child_by_field_name("trait")
            fns = [fn for c in (body.named_children if body is not None else [])
                   if c.type in ("function_item", "function_signature_item", "const_item", "type_item")
                   and (trait is not None or _pub(src, c)) and (fn := _item(src, c, True))]
            if trait is not None:
                impls.append((type_name, export(_type_name(src, trait), "impl", node, src.signature(node, body),
                                                members=fns)))
            else:
                impls += [(type_name, f) for f in fns]
        elif t in _KINDS and _pub(src, node):
            item = _item(src, node)
            if item:
                exports.append(item)
    return exports, imports, impls
