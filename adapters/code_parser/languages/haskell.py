"""Haskell: the module header's export list decides.

`T(..)` exports a type with all its constructors and fields, `T(A, b)` the named ones, `module M` a re-export;
without an export list every top-level declaration is exported. Exports: functions and values (signature text as
the signature), data types and newtypes ("type", constructors as "constructor" members, record fields as "field"),
type synonyms ("type"), classes ("typeclass", their methods as members). Docs: Haddock `-- |` comments. Imports:
`import [qualified] M [as A] [(names)]`, resolved to M/Path.hs (or .lhs) under src/, lib/, app/ or the project root.
"""

from __future__ import annotations

from adapters.code_parser.resolution import ProjectIndex, join
from adapters.code_parser.source import Node, Source, clean_comment, export, make_import
from domain.knowledge.skeleton import Export, Import


def _haddock(src: Source, node: Node) -> str | None:
    prev = node.prev_named_sibling
    if prev is None and node.parent is not None and node.parent.type == "declarations":
        before = node.parent.prev_named_sibling
        prev = before.named_children[-1] if before is not None and before.named_child_count else None
    if prev is not None and prev.type == "haddock":
        return clean_comment(src.text(prev)) or None
    return None


def _constructors(src: Source, node: Node) -> list[Export]:
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


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
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
            defined[name] = export(name, "type", d, head, _haddock(src, d), _constructors(src, d))
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


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    mod = imp.specifier.replace(".", "/")
    return ix.first_file([join(root, mod) + ext for root in ("src", "lib", "app", "") for ext in (".hs", ".lhs")])
