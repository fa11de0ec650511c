"""Kotlin: public is the default visibility.

Exported: top-level classes (data/sealed/enum/annotation classes, interfaces), objects, functions, properties
and type aliases not marked `private` or `internal`. Members: declarations of the class body that are not
`private`/`protected`/`internal`, `val`/`var` constructor parameters, enum entries, and the members of the
companion object. Imports: `import a.b.C` (names [C], or the alias), `a.b.*`, resolved as Java's are (package →
.kt file under a source root; adapters/code_parser/languages/jvm.py). Docs: KDoc `/** … */` above.
"""

from __future__ import annotations

from adapters.code_parser.languages.jvm import resolve_package
from adapters.code_parser.resolution import ProjectIndex
from adapters.code_parser.source import Node, Source, doc_before, export, make_import
from domain.knowledge.skeleton import Export, Import

_HIDDEN = {"private", "internal", "protected"}


def _mods(src: Source, node: Node) -> list[str]:
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    return [w for w in src.text(mods).split() if not w.startswith("@")] if mods is not None else []


def _doc(src: Source, node: Node) -> str | None:
    return doc_before(src, node, ("block_comment", "line_comment", "comment"), accept=lambda t: t.startswith("/**"))


def _body(node: Node) -> Node | None:
    return next((c for c in node.named_children if c.type in ("class_body", "enum_class_body")), None)


def _header(src: Source, node: Node, stop: Node | None) -> str:
    text = src.signature(node, stop, "{=")
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    if mods is not None:  # drop annotations from the header
        words = [w for w in src.text(mods).split() if not w.startswith("@")]
        text = " ".join([*words, src.signature(node, stop, "{=")[len(" ".join(src.text(mods).split())):].strip()])
    return text.strip()


def _property_names(src: Source, node: Node) -> list[str]:
    out = []
    for c in node.named_children:
        if c.type == "variable_declaration":
            ident = next((i for i in c.named_children if i.type in ("identifier", "simple_identifier")), None)
            out.append(src.text(ident) if ident is not None else src.text(c).split(":")[0].strip())
        elif c.type == "multi_variable_declaration":
            out += [src.text(v).split(":")[0].strip() for v in c.named_children if v.type == "variable_declaration"]
    return out


def _item(src: Source, node: Node, member: bool) -> list[Export]:
    t = node.type
    if set(_mods(src, node)) & _HIDDEN:
        return []
    if t in ("class_declaration", "object_declaration", "companion_object"):
        keywords = {c.type for c in node.children}
        kind = "object" if t != "class_declaration" else "interface" if "interface" in keywords else \
            "enum" if "enum" in _mods(src, node) else "class"
        body = _body(node)
        members: list[Export] = []
        ctor = next((c for c in node.named_children if c.type == "primary_constructor"), None)
        params = next((c for c in ctor.named_children if c.type == "class_parameters"), None) if ctor else None
        for p in params.named_children if params is not None else []:
            text = " ".join(src.text(p).split())
            if p.type == "class_parameter" and not set(_mods(src, p)) & _HIDDEN and ("val " in text or "var " in text):
                ident = next((i for i in p.named_children if i.type in ("identifier", "simple_identifier")), None)
                members.append(export(src.text(ident), "field", p, text))
        for m in body.named_children if body is not None else []:
            if m.type == "enum_entry":
                ident = next((i for i in m.named_children if i.type in ("identifier", "simple_identifier")), None)
                members.append(export(src.text(ident), "enum_member", m, src.text(ident)))
            elif m.type == "companion_object":
                for inner in _item(src, m, True):
                    members += inner.members
            else:
                members += _item(src, m, True)
        if t == "companion_object":
            return [export("Companion", "object", node, "companion object", None, members)]
        name = src.field_text(node, "name")
        return [export(name, kind, node, _header(src, node, body), _doc(src, node), members)]
    if t == "function_declaration":
        body = next((c for c in node.named_children if c.type == "function_body"), None)
        return [export(src.field_text(node, "name"), "method" if member else "function", node,
                       _header(src, node, body), _doc(src, node))]
    if t == "property_declaration":
        value = next((c for c in node.named_children if c.is_named and c.type not in (
            "modifiers", "variable_declaration", "multi_variable_declaration", "type_parameters",
            "type_constraints", "getter", "setter", "property_delegate")), None)
        sig = _header(src, node, value)
        kind = "field" if member else ("const" if src.text(node).lstrip().startswith(("val", "const")) or
                                       "val" in _mods(src, node) else "variable")
        if not member and " var " in f" {sig} ":
            kind = "variable"
        return [export(n, kind, node, sig, _doc(src, node)) for n in _property_names(src, node)]
    if t == "type_alias":
        return [export(src.field_text(node, "type"), "type", node, _header(src, node, None), _doc(src, node))]
    return []


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    for node in root.named_children:
        if node.type in ("import", "import_header"):
            path = next((c for c in node.named_children if c.type in ("qualified_identifier", "identifier")), None)
            spec = src.text(path)
            alias = [c for c in node.named_children if c.type == "identifier" and c != path]
            star = src.text(node).rstrip().endswith("*")
            names = ["*"] if star else [src.text(alias[0]) if alias else spec.rsplit(".", 1)[-1]]
            imports.append(make_import(spec + (".*" if star else ""), node, names=names))
        elif node.type == "import_list":
            _sub_exports, sub_imports = extract(src, node)
            imports += sub_imports
        else:
            exports += _item(src, node, False)
    return exports, imports


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    return resolve_package(imp, path, ix, ".kt")
