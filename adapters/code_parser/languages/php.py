"""PHP: classes, interfaces, traits, enums, functions and constants of a file (in its namespaces).

Exported: top-level (or namespaced) classes, interfaces, traits, enums, functions and `const`s. Members:
public methods (no modifier means public), public properties and constants, enum cases. Docs: `/** */`
comments above. Imports: `use A\\B\\C;` (names [C] or the alias; group uses expanded), and
`require`/`include` (`_once`) of a literal path (relative, resolved beside the file). A `use` is resolved
PSR-4 style: the namespace path (A/B/C.php, else B/C.php: without its vendor prefix) under the importing file's
source root (one of its ancestors, or src/, lib/).
"""

from __future__ import annotations

import posixpath

from adapters.code_parser.resolution import ProjectIndex, join, resolve_relative
from adapters.code_parser.source import Node, Source, doc_before, export, make_import, unquote
from domain.knowledge.skeleton import Export, Import

_TYPES = {"class_declaration": "class", "interface_declaration": "interface", "trait_declaration": "trait",
          "enum_declaration": "enum"}
_REQUIRES = ("require_expression", "require_once_expression", "include_expression", "include_once_expression")


def _doc(src: Source, node: Node) -> str | None:
    return doc_before(src, node, ("comment",), accept=lambda t: t.startswith("/**"))


def _visible(src: Source, node: Node) -> bool:
    mods = [src.text(c) for c in node.named_children if c.type == "visibility_modifier"]
    return not mods or "public" in mods


def _members(src: Source, body: Node | None) -> list[Export]:
    out: list[Export] = []
    for m in body.named_children if body is not None else []:
        t = m.type
        if t == "enum_case":
            out.append(export(src.field_text(m, "name"), "enum_member", m, src.signature(m, None, ";")))
        elif not _visible(src, m):
            continue
        elif t == "method_declaration":
            name = src.field_text(m, "name")
            kind = "constructor" if name == "__construct" else "method"
            out.append(export(name, kind, m, src.signature(m, m.child_by_field_name("body"), "{;"), _doc(src, m)))
        elif t == "property_declaration":
            for el in m.named_children:
                if el.type == "property_element":
                    out.append(export(src.field_text(el, "name").lstrip("$"), "property", m,
                                      src.signature(m, None, ";").split("=")[0].strip(), _doc(src, m)))
        elif t == "const_declaration":
            for el in m.named_children:
                if el.type == "const_element":
                    name = next((src.text(c) for c in el.named_children if c.type == "name"), "")
                    out.append(export(name, "const", m, src.signature(m, None, ";"), _doc(src, m)))
    return out


def _statements(src: Source, container: Node, exports: list[Export], imports: list[Import]) -> None:
    for node in container.named_children:
        t = node.type
        if t in _TYPES:
            body = node.child_by_field_name("body")
            exports.append(export(src.field_text(node, "name"), _TYPES[t], node, src.signature(node, body, "{"),
                                  _doc(src, node), _members(src, body)))
        elif t == "function_definition":
            exports.append(export(src.field_text(node, "name"), "function", node,
                                  src.signature(node, node.child_by_field_name("body"), "{"), _doc(src, node)))
        elif t == "const_declaration":
            for el in node.named_children:
                if el.type == "const_element":
                    name = next((src.text(c) for c in el.named_children if c.type == "name"), "")
                    exports.append(export(name, "const", node, src.signature(node, None, ";"), _doc(src, node)))
        elif t == "namespace_definition":
            body = node.child_by_field_name("body")
            if body is not None:
                _statements(src, body, exports, imports)
        elif t == "namespace_use_declaration":
            group = node.child_by_field_name("body")
            prefix = next((src.text(c) for c in node.named_children if c.type == "namespace_name"), "")
            clauses = group.named_children if group is not None else node.named_children
            for clause in clauses:
                if clause.type != "namespace_use_clause":
                    continue
                alias = clause.child_by_field_name("alias")
                target = [c for c in clause.named_children if c != alias]
                spec = src.text(target[0]) if target else ""
                if prefix:
                    spec = f"{prefix}\\{spec}"
                name = src.text(alias) if alias is not None else spec.rsplit("\\", 1)[-1]
                imports.append(make_import(spec.lstrip("\\"), node, names=[name]))
        elif t == "expression_statement" and node.named_child_count:
            expr = node.named_children[0]
            if expr.type in _REQUIRES:
                arg = expr.named_children[0] if expr.named_child_count else None
                if arg is not None and arg.type == "binary_expression":  # __DIR__ . '/x.php'
                    right = arg.child_by_field_name("right")
                    left = arg.child_by_field_name("left")
                    if right is not None and right.type in ("string", "encapsed_string") and \
                            src.text(left) == "__DIR__":
                        spec = unquote(src.text(right)).lstrip("/")
                        imports.append(make_import(spec, node, relative=True, names=[spec.rsplit("/", 1)[-1]]))
                elif arg is not None and arg.type in ("string", "encapsed_string"):
                    spec = unquote(src.text(arg))
                    imports.append(make_import(spec, node, relative=True, names=[spec.rsplit("/", 1)[-1]]))


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    _statements(src, root, exports, imports)
    return exports, imports


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    if imp.relative:
        return resolve_relative(imp, path, ix)
    parts = [p for p in imp.specifier.split("\\") if p]
    if len(parts) < 2:
        return None
    # PSR-4 style: the namespace path under the importing file's source root (one of its ancestors, or src/,
    # lib/), possibly without the vendor prefix; at least a directory and the file must match
    roots = [*ix.ancestors(posixpath.dirname(path)), "src", "lib"]
    for k in range(len(parts) - 1):
        rel = "/".join(parts[k:]) + ".php"
        for root in dict.fromkeys(roots):
            found = ix.first_file([join(root, rel)])
            if found:
                return found
    return None
