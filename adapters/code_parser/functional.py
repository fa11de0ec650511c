"""Haskell and OCaml.

Haskell — the module header's export list decides (`T(..)` exports a type with all its constructors and
fields, `T(A, b)` the named ones, `module M` a re-export); without an export list every top-level
declaration is exported. Exports: functions and values (signature text as the signature), data types and
newtypes ("type", constructors as "constructor" members, record fields as "field"), type synonyms ("type"),
classes ("typeclass", their methods as members). Docs: Haddock `-- |` comments. Imports: `import [qualified]
M [as A] [(names)]`, resolved to M/Path.hs under src/, lib/, app/ or the project root.

OCaml — without an interface everything at the top of a .ml file is visible: `let` bindings ("function"
when they take parameters, else "variable"), types (variants' constructors and records' fields as members),
exceptions ("error"), modules ("module", a struct's items as members), module types ("interface"), classes,
`external`s. In an .mli interface: `val` ("function"/"variable"), types, exceptions, modules, module types.
Docs: `(** … *)` comments. Imports: `open M`, `include M`, and module aliases `module A = M`.
"""

from __future__ import annotations

from adapters.code_parser.base import Node, Source, clean_comment, doc_before, export, make_import
from domain.skeleton import Export, Import

# --- Haskell -----------------------------------------------------------------------------------------------------


def _haddock(src: Source, node: Node) -> str | None:
    prev = node.prev_named_sibling
    if prev is None and node.parent is not None and node.parent.type == "declarations":
        before = node.parent.prev_named_sibling
        prev = before.named_children[-1] if before is not None and before.named_child_count else None
    if prev is not None and prev.type == "haddock":
        return clean_comment(src.text(prev)) or None
    return None


def _hs_constructors(src: Source, node: Node) -> list[Export]:
    out: list[Export] = []
    kinds = ("data_constructors", "newtype_constructor", "gadt_constructors")
    stack = [c for c in node.named_children if c.type in kinds]
    while stack:
        n = stack.pop(0)
        if n.type in ("data_constructors", "gadt_constructors"):
            stack = list(n.named_children) + stack
            continue
        if n.type in ("data_constructor", "newtype_constructor", "gadt_constructor"):
            inner = n.named_children[0] if n.type == "data_constructor" and n.named_child_count else n
            name_node = inner.child_by_field_name("name") or inner.child_by_field_name("constructor") or (
                inner.named_children[0] if inner.named_child_count else inner)
            out.append(export(src.text(name_node).split()[0], "constructor", n, " ".join(src.text(n).split())))
            for f in _descendants(n, "field"):
                name = f.child_by_field_name("name")
                if name is not None:
                    out.append(export(src.text(name), "field", f, " ".join(src.text(f).split())))
    return out


def _descendants(node: Node, type_: str) -> list[Node]:
    found, stack = [], list(reversed(node.named_children))
    while stack:
        n = stack.pop()
        if n.type == type_:
            found.append(n)
        else:
            stack.extend(reversed(n.named_children))
    return found


def extract_haskell(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    imports: list[Import] = []
    defined: dict[str, Export] = {}
    listed: list[tuple[str, list[str] | None, Node]] | None = None
    header = next((c for c in root.named_children if c.type == "header"), None)
    if header is not None:
        exports_node = header.child_by_field_name("exports")
        if exports_node is not None:
            listed = []
            for e in exports_node.named_children:
                if e.type == "export":
                    target = e.child_by_field_name("type") or e.child_by_field_name("variable") or e
                    children = e.child_by_field_name("children")
                    names = None
                    if children is not None:
                        inner = src.text(children).strip("()").strip()
                        names = ["*"] if inner == ".." else [n.strip() for n in inner.split(",") if n.strip()]
                    listed.append((src.text(target), names, e))
                elif e.type == "module_export":
                    listed.append(("module " + src.text(e).split(None, 1)[-1], [], e))
    imports_node = next((c for c in root.named_children if c.type == "imports"), None)
    for imp in imports_node.named_children if imports_node is not None else []:
        if imp.type != "import":
            continue
        module = src.field_text(imp, "module")
        names_node = imp.child_by_field_name("names")
        names = [src.text(n) for n in names_node.named_children] if names_node is not None else [
            src.field_text(imp, "alias") or module]
        imports.append(make_import(module, imp, names=names))
    decls = next((c for c in root.named_children if c.type == "declarations"), None)
    for d in decls.named_children if decls is not None else []:
        t = d.type
        name_node = d.child_by_field_name("name")
        name = src.text(name_node).strip("()") if name_node is not None else ""
        if not name:
            continue
        if t == "signature":
            defined[name] = export(name, "function", d, " ".join(src.text(d).split()), _haddock(src, d))
        elif t in ("function", "bind"):
            if name in defined:
                defined[name].end_line = max(defined[name].end_line, d.end_point[0] + 1)
            else:
                defined[name] = export(name, "function", d, name, _haddock(src, d))
        elif t in ("data_type", "newtype"):
            head = src.signature(d, next((c for c in d.named_children if c.type in (
                "data_constructors", "newtype_constructor", "gadt_constructors")), None), "=")
            defined[name] = export(name, "type", d, head, _haddock(src, d), _hs_constructors(src, d))
        elif t == "type_synomym" or t == "type_synonym" or t == "type_family":
            defined[name] = export(name, "type", d, " ".join(src.text(d).split()), _haddock(src, d))
        elif t == "class":
            body = d.child_by_field_name("declarations")
            members = [export(src.field_text(s, "name"), "method", s, " ".join(src.text(s).split()))
                       for s in (body.named_children if body is not None else []) if s.type == "signature"]
            defined[name] = export(name, "typeclass", d, src.signature(d, body, ""), _haddock(src, d), members)
    if listed is None:
        return list(defined.values()), imports
    out = []
    for name, names, node in listed:
        if name.startswith("module "):
            out.append(export(name[7:], "module", node, name))
            continue
        found = defined.get(name.strip("()"))
        if found is None:
            continue
        if names is not None and names != ["*"]:
            found.members = [m for m in found.members if m.name in names]
        elif names is None and found.kind == "type":
            found.members = []  # `T` alone exports the type abstractly
        out.append(found)
    return out, imports


# --- OCaml -------------------------------------------------------------------------------------------------------


def _odoc(src: Source, node: Node) -> str | None:
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


def _ocaml_items(src: Source, container: Node, imports: list[Import]) -> list[Export]:
    out: list[Export] = []
    for node in container.named_children:
        t = node.type
        doc = _odoc(src, node)
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
            members = _ocaml_items(src, body, imports) if body is not None and body.type in (
                "structure", "signature") else []
            out.append(export(name, "module", node, src.signature(node, body, "="), doc, members))
        elif t == "module_type_definition":
            name = next((src.text(c) for c in node.named_children if c.type == "module_type_name"), "")
            body = node.child_by_field_name("body")
            members = _ocaml_items(src, body, imports) if body is not None and body.type == "signature" else []
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


def extract_ocaml(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    imports: list[Import] = []
    return _ocaml_items(src, root, imports), imports


extract_ocaml_interface = extract_ocaml
