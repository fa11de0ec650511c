"""Java and Scala.

Java — exported: top-level `public` classes, interfaces, enums, records and annotation types. Members:
`public` fields, methods, constructors and nested types; every member of an interface that is not
`private`; enum constants. Imports: `import a.b.C;` (names [C]), `a.b.*` (names ["*"]), `import static`.
Docs: the `/** … */` comment above.

Scala — public is the default: exported are top-level classes, case classes, traits, objects, enums, and
(Scala 3) top-level defs, vals, vars, types and givens that are not `private`/`protected` (qualified
`private[x]` too). Members: the non-private defs, vals, vars, types and nested types of the body, `val`/`var`
class parameters (all parameters of a case class), enum cases. Imports: `import a.b.C`, selectors `{X, Y => Z}`.

Resolution (Kotlin's too, adapters/code_parser/languages/kotlin.py): a package path → its file under the importing
file's source root (one of its ancestors, or src/main/<language>, src/test/<language>, src/), `pkg.*` → the package
directory; a static import's member (`a.b.C.m`) → C's file; a Scala selector import names its first selector's file.
"""

from __future__ import annotations

import posixpath
import re

from adapters.code_parser.resolution import ProjectIndex, join
from adapters.code_parser.source import Node, Source, doc_before, export, make_import
from domain.knowledge.skeleton import Export, Import

_ANNOTATIONS = re.compile(r"^(?:@[\w.]+(?:\([^)]*\))?\s+)+")

_JAVA_TYPES = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "record",
    "annotation_type_declaration": "interface",
}


def _javadoc(src: Source, node: Node) -> str | None:
    return doc_before(src, node, ("block_comment", "line_comment", "comment"), accept=lambda t: t.startswith("/**"))


def _modifiers(src: Source, node: Node) -> list[str]:
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    return src.text(mods).split() if mods is not None else []


def _sig(src: Source, node: Node, body: Node | None, strip: str = "{;=") -> str:
    return _ANNOTATIONS.sub("", src.signature(node, body, strip))


def _java_member(src: Source, m: Node, interface: bool) -> list[Export]:
    mods = _modifiers(src, m)
    visible = "public" in mods or (interface and "private" not in mods)
    if not visible:
        return []
    t = m.type
    if t in _JAVA_TYPES:
        return [_java_type(src, m, _JAVA_TYPES[t])]
    if t in ("method_declaration", "constructor_declaration", "compact_constructor_declaration",
             "annotation_type_element_declaration"):
        kind = "method" if t in ("method_declaration", "annotation_type_element_declaration") else "constructor"
        return [export(src.field_text(m, "name"), kind, m, _sig(src, m, m.child_by_field_name("body")),
                       _javadoc(src, m))]
    if t in ("field_declaration", "constant_declaration"):
        out = []
        for d in m.children_by_field_name("declarator"):
            name = src.field_text(d, "name")
            type_text = src.field_text(m, "type")
            out.append(export(name, "const" if ("final" in mods and "static" in mods) or interface else "field", m,
                              f"{' '.join(w for w in mods if not w.startswith('@'))} {type_text} {name}".strip(),
                              _javadoc(src, m)))
        return out
    return []


def _java_type(src: Source, node: Node, kind: str) -> Export:
    body = node.child_by_field_name("body")
    members: list[Export] = []
    interface = kind == "interface"
    for m in body.named_children if body is not None else []:
        if m.type == "enum_constant":
            members.append(export(src.field_text(m, "name"), "enum_member", m, " ".join(src.text(m).split())))
        elif m.type == "enum_body_declarations":
            for inner in m.named_children:
                members += _java_member(src, inner, False)
        else:
            members += _java_member(src, m, interface)
    if kind == "record":
        params = node.child_by_field_name("parameters")
        for p in params.named_children if params is not None else []:
            if p.type == "formal_parameter":
                members.append(export(src.field_text(p, "name"), "field", p, " ".join(src.text(p).split())))
    return export(src.field_text(node, "name"), kind, node, _sig(src, node, body), _javadoc(src, node), members)


def extract_java(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    for node in root.named_children:
        if node.type == "import_declaration":
            text = src.text(node).removeprefix("import").strip().rstrip(";").strip()
            static = text.startswith("static ")
            name = text.removeprefix("static ").replace(" ", "")
            imports.append(make_import(("static " if static else "") + name, node, names=[name.rsplit(".", 1)[-1]]))
        elif node.type in _JAVA_TYPES and "public" in _modifiers(src, node):
            exports.append(_java_type(src, node, _JAVA_TYPES[node.type]))
    return exports, imports


# --- Scala ----------------------------------------------------------------------------------------------------

_SCALA_KINDS = {
    "class_definition": "class",
    "trait_definition": "trait",
    "object_definition": "object",
    "enum_definition": "enum",
    "function_definition": "function",
    "function_declaration": "function",
    "val_definition": "const",
    "val_declaration": "const",
    "var_definition": "variable",
    "var_declaration": "variable",
    "type_definition": "type",
    "given_definition": "other",
}


def _scala_hidden(src: Source, node: Node) -> bool:
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    text = src.text(mods) if mods is not None else ""
    return "private" in text or "protected" in text


def _scala_names(src: Source, node: Node) -> list[str]:
    name = node.child_by_field_name("name")
    if name is not None:
        return [src.text(name)]
    pattern = node.child_by_field_name("pattern")
    if pattern is None:
        return []
    if pattern.type == "identifier":
        return [src.text(pattern)]
    return [src.text(c) for c in pattern.named_children if c.type == "identifier"]


def _scala_item(src: Source, node: Node, member: bool) -> list[Export]:
    kind = _SCALA_KINDS.get(node.type)
    if kind is None or _scala_hidden(src, node):
        return []
    if member and kind == "function":
        kind = "method"
    if member and kind in ("const", "variable"):
        kind = "field"
    body = node.child_by_field_name("body")
    members: list[Export] = []
    if kind in ("class", "trait", "object", "enum"):
        mods = next((c for c in node.named_children if c.type == "modifiers"), None)
        case = (mods is not None and "case" in src.text(mods).split()) or src.text(node).startswith("case ")
        params = node.child_by_field_name("class_parameters")
        for p in params.named_children if params is not None else []:
            if p.type == "class_parameter" and (case or src.text(p).lstrip().startswith(("val ", "var "))):
                members.append(export(src.field_text(p, "name"), "field", p, " ".join(src.text(p).split())))
        for m in body.named_children if body is not None else []:
            if m.type == "enum_case_definitions":
                members += [export(src.text(c.named_children[0]) if c.named_child_count else src.text(c),
                                   "enum_member", c, src.text(c)) for c in m.named_children]
            else:
                members += _scala_item(src, m, True)
        sig = _sig(src, node, body, "{:=")
    elif kind in ("function", "method", "const", "variable", "field"):
        value = node.child_by_field_name("body") or node.child_by_field_name("value")
        sig = _sig(src, node, value, "=")
    else:
        sig = _sig(src, node, None, "")
    doc = _javadoc(src, node)
    return [export(n, kind, node, sig, doc, members) for n in _scala_names(src, node)]


def extract_scala(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    nodes = list(root.named_children)
    while nodes:
        node = nodes.pop(0)
        if node.type == "package_clause" and node.child_by_field_name("body") is not None:
            nodes[0:0] = node.child_by_field_name("body").named_children
        elif node.type == "import_declaration":
            path = ".".join(src.text(p) for p in node.children_by_field_name("path") if p.is_named)
            selectors = next((c for c in node.named_children if c.type == "namespace_selectors"), None)
            wildcard = any(c.type in ("namespace_wildcard", "wildcard") for c in node.named_children)
            if selectors is not None:
                names = [src.field_text(c, "name") if c.type == "arrow_renamed_identifier" else src.text(c)
                         for c in selectors.named_children]
                imports.append(make_import(path, node, names=names))
            elif wildcard:
                imports.append(make_import(path, node, names=["*"]))
            else:
                head, _, leaf = path.rpartition(".")
                imports.append(make_import(path, node, names=[leaf or head]))
        else:
            exports += _scala_item(src, node, False)
    return exports, imports


# --- Resolution (Java, Kotlin, Scala) ---------------------------------------------------------------------------

_SOURCE_DIRS = {".java": "java", ".kt": "kotlin", ".scala": "scala"}


def resolve_package(imp: Import, path: str, ix: ProjectIndex, ext: str) -> str | None:
    """The file (`ext`: .java, .kt, .scala) or, for `pkg.*`, the directory an import of a JVM language names."""
    parts = imp.specifier.removeprefix("static ").split(".")
    wildcard = parts[-1] == "*"
    if wildcard:
        parts = parts[:-1]
    lang_dir = _SOURCE_DIRS[ext]
    roots = [*ix.ancestors(posixpath.dirname(path)), f"src/main/{lang_dir}", f"src/test/{lang_dir}", "src"]
    if imp.names and imp.names[0] not in ("*", parts[-1]) and not wildcard:
        parts = [*parts, imp.names[0]]  # Scala selectors: import a.b.{C, D} names a/b/C first
    for root in dict.fromkeys(roots):
        base = join(root, *parts)
        if wildcard:
            if ix.is_dir(base) and base:
                return base
            continue
        for k in range(len(parts), 0, -1):  # com.x.Y.method (static import) → com/x/Y.java
            found = ix.first_file([join(root, *parts[:k]) + ext])
            if found:
                return found
    return None


def resolve_java(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    return resolve_package(imp, path, ix, ".java")


def resolve_scala(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    return resolve_package(imp, path, ix, ".scala")
