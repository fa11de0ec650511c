"""OCaml (.ml) and its interfaces (.mli).

Without an interface everything at the top of a .ml file is visible: `let` bindings ("function" when they take
parameters, else "variable"), types (variants' constructors and records' fields as members), exceptions ("error"),
modules ("module", a struct's items as members), module types ("interface"), classes, `external`s. In an .mli
interface: `val` ("function"/"variable"), types, exceptions, modules, module types. Docs: `(** … *)` comments.
Imports: `open M`, `include M`, and module aliases `module A = M`; module Util is resolved to util.ml (else util.mli)
beside the file (a dune library's modules share a directory).
"""

from __future__ import annotations

import posixpath

from adapters.code_parser.resolution import ProjectIndex, join
from adapters.code_parser.source import Node, Source, doc_before, export, make_import
from domain.knowledge.skeleton import Export, Import


def _doc(src: Source, node: Node) -> str | None:
    return doc_before(src, node, ("comment",), accept=lambda t: t.startswith("(**"))


def _type_members(src: Source, binding: Node) -> list[Export]:
    body = binding.child_by_field_name("body") or binding.child_by_field_name("equation")
    out = []
    for n in body.named_children if body is not None else []:
        if n.type == "constructor_declaration":
            cname = next((c for c in n.named_children if c.type == "constructor_name"), n)
            out.append(export(src.text(cname), "constructor", n, " ".join(src.text(n).split())))
        elif n.type == "field_declaration":
            fname = next((c for c in n.named_children if c.type == "field_name"), n)
            out.append(export(src.text(fname), "field", n, " ".join(src.text(n).split())))
    return out


def _items(src: Source, container: Node, imports: list[Import]) -> list[Export]:
    out: list[Export] = []
    for node in container.named_children:
        t = node.type
        doc = _doc(src, node)
        if t == "value_definition":
            for b in node.named_children:
                if b.type != "let_binding":
                    continue
                pattern = b.child_by_field_name("pattern")
                if pattern is None or pattern.type != "value_name":
                    continue
                params = any(c.type == "parameter" for c in b.named_children)
                body = b.child_by_field_name("body")
                is_fun = params or (body is not None and body.type in ("fun_expression", "function_expression"))
                sig = src.signature(node if b == node.named_children[0] else b, body, "=")
                out.append(export(src.text(pattern), "function" if is_fun else "variable", b, sig, doc))
        elif t in ("value_specification", "external"):
            name = next((c for c in node.named_children if c.type == "value_name"), None)
            type_node = node.child_by_field_name("type")
            is_fun = (type_node is not None and type_node.type == "function_type") or t == "external"
            out.append(export(src.text(name), "function" if is_fun else "variable", node,
                              " ".join(src.text(node).split()), doc))
        elif t == "type_definition":
            for b in node.named_children:
                if b.type == "type_binding":
                    name = src.field_text(b, "name")
                    out.append(export(name, "type", b, " ".join(src.text(b).split("=")[0].split()).join(
                        ["type ", ""]), doc, _type_members(src, b)))
        elif t == "exception_definition":
            decl = next((c for c in node.named_children if c.type == "constructor_declaration"), None)
            cname = next((c for c in decl.named_children if c.type == "constructor_name"), None) if decl else None
            out.append(export(src.text(cname), "error", node, " ".join(src.text(node).split()), doc))
        elif t in ("module_definition", "module_specification"):
            binding = next((c for c in node.named_children if c.type == "module_binding"), node)
            name = next((src.text(c) for c in binding.named_children if c.type == "module_name"), "")
            body = binding.child_by_field_name("body")
            if body is not None and body.type == "module_path":
                imports.append(make_import(src.text(body), node, names=[name]))
            members = _items(src, body, imports) if body is not None and body.type in (
                "structure", "signature") else []
            out.append(export(name, "module", node, src.signature(node, body, "="), doc, members))
        elif t == "module_type_definition":
            name = next((src.text(c) for c in node.named_children if c.type == "module_type_name"), "")
            body = node.child_by_field_name("body")
            members = _items(src, body, imports) if body is not None and body.type == "signature" else []
            out.append(export(name, "interface", node, f"module type {name}", doc, members))
        elif t == "class_definition":
            for b in node.named_children:
                if b.type == "class_binding":
                    name = next((src.text(c) for c in b.named_children if c.type == "class_name"), "")
                    out.append(export(name, "class", b, f"class {name}", doc))
        elif t in ("open_module", "include_module"):
            module = node.child_by_field_name("module") or (node.named_children[0] if node.named_child_count else None)
            spec = src.text(module)
            imports.append(make_import(spec, node, names=[spec]))
    return out


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    imports: list[Import] = []
    return _items(src, root, imports), imports


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    """Module Util → util.ml beside the file (a dune library's modules share a directory)."""
    head = imp.specifier.split(".")[0]
    name = head[:1].lower() + head[1:]
    here = posixpath.dirname(path)
    return ix.first_file([join(here, name) + ".ml", join(here, name) + ".mli"])
