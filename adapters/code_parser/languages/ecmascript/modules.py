"""ES modules: what the `import`/`export` syntax of a JavaScript, TypeScript or TSX file exports and imports
(the package's docstring, adapters/code_parser/languages/ecmascript/, says what counts)."""

from __future__ import annotations

from adapters.code_parser.languages.ecmascript.members import (
    FUNCTION_VALUES,
    class_members,
    enum_members,
    interface_members,
    jsdoc,
)
from adapters.code_parser.languages.ecmascript.require import require_spec
from adapters.code_parser.source import Node, Source, export, make_import, unquote
from domain.knowledge.skeleton import Export, Import

_KINDS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "function_signature": "function",
    "function_expression": "function",
    "function": "function",
    "generator_function": "function",
    "arrow_function": "function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "class": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "module": "namespace",
}
TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")


def _declarator_names(src: Source, pattern: Node) -> list[str]:
    if pattern.type == "identifier":
        return [src.text(pattern)]
    names = []
    for c in pattern.named_children:
        if c.type in ("shorthand_property_identifier_pattern", "identifier"):
            names.append(src.text(c))
        elif c.type in ("pair_pattern", "object_assignment_pattern", "assignment_pattern", "rest_pattern"):
            target = c.child_by_field_name("value") or c.child_by_field_name("left") or c.named_children[-1]
            names.extend(_declarator_names(src, target))
        elif c.type in ("object_pattern", "array_pattern"):
            names.extend(_declarator_names(src, c))
    return names


def declarations(src: Source, decl: Node, span: Node) -> list[Export]:
    """Exports a declaration node defines (a lexical declaration may define several)."""
    if decl.type == "ambient_declaration":
        inner = [c for c in decl.named_children if c.type != "comment"]
        return [e for c in inner for e in declarations(src, c, span)]
    if decl.type in ("lexical_declaration", "variable_declaration"):
        is_const = src.text(decl).lstrip().startswith("const")
        out = []
        for d in decl.named_children:
            if d.type != "variable_declarator":
                continue
            value = d.child_by_field_name("value")
            name_node = d.child_by_field_name("name")
            keyword = "const" if is_const else src.text(decl).split(None, 1)[0]
            if value is not None and value.type in FUNCTION_VALUES:
                body = value.child_by_field_name("body")
                sig = f"{keyword} {src.signature(d, body, '{=>')}"
                var_kind = "function"
            else:
                text = " ".join(src.text(value).split()) if value is not None else ""
                sig = f"{keyword} {src.signature(d, value, '=')}" + (f" = {text}" if text and len(text) <= 60 else "")
                var_kind = "const" if is_const else "variable"
            for name in _declarator_names(src, name_node) if name_node is not None else []:
                out.append(export(name, var_kind, d, sig, span_node=span))
        return out
    kind = _KINDS.get(decl.type)
    if kind is None:
        if decl.type == "import_alias" and decl.named_child_count:
            return [export(src.text(decl.named_children[0]), "other", decl, src.signature(decl, None, ";"),
                           span_node=span)]
        return []
    name = unquote(src.field_text(decl, "name")) or "default"
    body = decl.child_by_field_name("body")
    members: list[Export] = []
    if kind == "class":
        members = class_members(src, body)
    elif kind == "interface":
        members = interface_members(src, body)
    elif kind == "enum":
        members = enum_members(src, body)
    elif kind == "namespace" and body is not None:
        members = module_exports(src, body)[0]
    return [export(name, kind, decl, src.signature(decl, body, "{;"), members=members, span_node=span)]


def _string(src: Source, node: Node | None) -> str:
    return unquote(src.text(node)) if node is not None else ""


def _import_names(src: Source, stmt: Node) -> list[str]:
    names: list[str] = []
    for clause in stmt.named_children:
        if clause.type != "import_clause":
            continue
        for c in clause.named_children:
            if c.type == "identifier":
                names.append("default")
            elif c.type == "namespace_import":
                names.append("*")
            elif c.type == "named_imports":
                names.extend(src.field_text(s, "name") for s in c.named_children if s.type == "import_specifier")
    return names


def _is_relative(spec: str) -> bool:
    return spec.startswith("./") or spec.startswith("../") or spec in (".", "..")


def statements(program: Node) -> list[Node]:
    """Top-level statements; those tree-sitter wrapped in an ERROR node (it gives up on a whole file at times,
    e.g. a .d.ts without semicolons) are still statements."""
    out: list[Node] = []
    for stmt in program.named_children:
        if stmt.type == "ERROR" or (stmt.type == "export_statement" and stmt.has_error and any(
                c.type == "ERROR" for c in stmt.named_children) and stmt.child_by_field_name("value") is not None):
            out.extend(stmt.named_children if stmt.type == "ERROR" else [stmt])
        else:
            out.append(stmt)
    if program.type == "ERROR":
        return list(program.named_children)
    return out


def module_exports(src: Source, program: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    locals_: dict[str, Node] = {}
    clauses: list[tuple[Node, Node]] = []  # (export_specifier, statement) naming locals
    for stmt in statements(program):
        t = stmt.type
        if t == "import_statement":
            source = stmt.child_by_field_name("source")
            req = next((c for c in stmt.named_children if c.type == "import_require_clause"), None)
            if req is not None:
                source = req.child_by_field_name("source") or req.named_children[-1]
            spec = _string(src, source)
            names = _import_names(src, stmt)
            if req is not None:  # import x = require("m")
                names = [src.text(c) for c in req.named_children if c.type == "identifier"][:1]
            if spec:
                imports.append(make_import(spec, stmt, relative=_is_relative(spec), names=names))
        elif t == "export_statement":
            _export_statement(src, stmt, exports, imports, clauses)
            decl = stmt.child_by_field_name("declaration")
            if decl is not None and not any(c.type == "default" for c in stmt.children):
                for e in declarations(src, decl, stmt):
                    locals_.setdefault(e.name, decl)
        elif t in ("lexical_declaration", "variable_declaration"):
            for d in stmt.named_children:
                if d.type == "variable_declarator":
                    name_node = d.child_by_field_name("name")
                    if name_node is not None and name_node.type == "identifier" and not require_spec(
                            src, d.child_by_field_name("value")):
                        locals_[src.text(name_node)] = stmt
        elif t == "expression_statement":
            text = src.text(stmt)
            if text.startswith(("export default", "export =")):  # a form the grammar did not parse (ERROR inside)
                name = "default" if text.startswith("export default") else "export="
                kind = "function" if text[14:].lstrip().startswith("function") else "other"
                exports.append(export(name, kind, stmt, src.signature(stmt, None, ";").split("{")[0].strip()[:200]))
        elif t in _KINDS or t == "ambient_declaration":
            for e in declarations(src, stmt, stmt):
                locals_.setdefault(e.name, stmt)
    for spec_node, stmt in clauses:
        if spec_node.type == "identifier":  # export default <identifier>
            local, name = src.text(spec_node), "default"
        else:
            local = src.field_text(spec_node, "name")
            alias = spec_node.child_by_field_name("alias")
            name = unquote(src.text(alias)) if alias is not None else local
        decl = locals_.get(local)
        found = [e for e in declarations(src, decl, stmt) if e.name == local] if decl is not None else []
        if found and name == "default":
            exports = [e for e in exports if e.name != "default"]
        if found:
            exports.append(found[0].model_copy(update={"name": name}))
        else:
            exports.append(export(name, "other", spec_node, f"export {{ {src.text(spec_node)} }}"))
    return unique(exports), imports


def unique(exports: list[Export]) -> list[Export]:
    seen: set[str] = set()
    out = []
    for e in exports:  # overloads and declaration merging: one export per name
        if e.name not in seen:
            seen.add(e.name)
            out.append(e)
    return out


def _export_statement(src: Source, stmt: Node, exports: list[Export], imports: list[Import],
                      clauses: list[tuple[Node, Node]]) -> None:
    source = stmt.child_by_field_name("source")
    spec = _string(src, source)
    is_default = any(c.type == "default" for c in stmt.children) or src.text(stmt).startswith("export default")
    decl = stmt.child_by_field_name("declaration")
    doc = jsdoc(src, stmt)
    if is_default:
        value = decl or stmt.child_by_field_name("value")
        if value is not None and value.type == "identifier":
            clauses.append((value, stmt))  # resolved against the local declarations afterwards
        found = declarations(src, value, stmt) if value is not None else []
        if found and found[0].kind != "other":
            exports.append(found[0].model_copy(update={"name": "default", "doc": doc}))
        else:
            kind = "function" if value is not None and value.type in FUNCTION_VALUES else "variable"
            text = src.signature(value, None, ";") if value is not None else src.signature(stmt, None, ";")[15:]
            exports.append(export("default", kind, stmt, f"export default {text}"[:200], doc))
        return
    if decl is not None:
        for e in declarations(src, decl, stmt):
            exports.append(e.model_copy(update={"doc": doc}) if doc else e)
        return
    children = [c for c in stmt.named_children if c != source]
    if source is not None:
        names: list[str] = []
        for c in children:
            if c.type == "export_clause":
                for s in c.named_children:
                    if s.type != "export_specifier":
                        continue
                    local = src.field_text(s, "name")
                    alias = s.child_by_field_name("alias")
                    names.append(local)
                    exports.append(export(unquote(src.text(alias)) if alias else local, "other", s,
                                          f"export {{ {src.text(s)} }} from {src.text(source)}"))
            elif c.type == "namespace_export":
                names.append("*")
                ident = c.named_children[-1] if c.named_child_count else None
                exports.append(export(unquote(src.text(ident)), "namespace", c, src.signature(stmt, None, ";")))
        imports.append(make_import(spec, stmt, relative=_is_relative(spec), names=names or ["*"]))
        return
    for c in children:
        if c.type == "export_clause":
            clauses.extend((s, stmt) for s in c.named_children if s.type == "export_specifier")
    if src.text(stmt).lstrip().startswith("export ="):
        exports.append(export("export=", "other", stmt, src.signature(stmt, None, ";")))
