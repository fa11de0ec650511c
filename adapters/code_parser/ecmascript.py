"""JavaScript, TypeScript and TSX: what `import … from "./file"` can bind.

Exported: `export` declarations (function, class, interface, type, enum, namespace, const/let/var — one
export per declarator; `declare` forms and overloads count once), `export default …` (name "default"),
`export { a as b }` (name b, kind of the local declaration), re-exports `export { x } from "./m"` and
`export * as ns from "./m"` (`export * from "./m"` adds no names of its own: it is recorded as an import
with names ["*"]), `export =` (name "export="), `export import A = …`, and, outside TypeScript
files, CommonJS (adapters/code_parser/commonjs.py: module.exports and its aliases, prototype members,
re-exports). Members: public methods, accessors and fields of classes (not `private`/`protected`/`#private`),
the properties and methods of interfaces, enum members, and the exports of
namespaces. Docs are the `/** … */` comment above. Imports: `import … from`, side-effect imports,
re-exports, `import x = require()`, and every `require("…")` and dynamic `import("…")` call.
"""

from __future__ import annotations

from adapters.code_parser import commonjs
from adapters.code_parser.base import Node, Source, doc_before, export, make_import, unquote
from domain.skeleton import Export, Import

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
_FUNCTION_VALUES = ("arrow_function", "function_expression", "function", "generator_function")
_TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")


def _jsdoc(src: Source, node: Node) -> str | None:
    return doc_before(src, node, ("comment",), accept=lambda t: t.startswith("/**"))


def _hidden(src: Source, member: Node) -> bool:
    name = member.child_by_field_name("name") or member.child_by_field_name("property")
    if name is not None and name.type == "private_property_identifier":
        return True
    return any(c.type == "accessibility_modifier" and src.text(c) in ("private", "protected")
               for c in member.children)


def _computed(member: Node) -> bool:
    name = member.child_by_field_name("name") or member.child_by_field_name("property")
    return name is not None and name.type == "computed_property_name"


def _class_members(src: Source, body: Node | None) -> list[Export]:
    out: list[Export] = []
    seen: set[str] = set()
    for m in body.named_children if body is not None else []:
        if m.type in ("method_definition", "abstract_method_signature", "method_signature"):
            if _hidden(src, m) or _computed(m):
                continue
            name = unquote(src.field_text(m, "name"))
            kinds = {c.type for c in m.children}
            kind = "constructor" if name == "constructor" else "property" if kinds & {"get", "set"} else "method"
            sig = src.signature(m, m.child_by_field_name("body"), "{;")
            if kind == "constructor":
                out.extend(p for p in _parameter_properties(src, m) if p.name not in seen)
                seen.update(p.name for p in out)
        elif m.type in ("public_field_definition", "field_definition", "property_signature"):
            if _hidden(src, m) or _computed(m):
                continue
            name_node = m.child_by_field_name("name") or m.child_by_field_name("property")
            name = unquote(src.text(name_node))
            kind = "field"
            value = m.child_by_field_name("value")
            if value is not None and value.type in _FUNCTION_VALUES:
                kind = "method"
            sig = src.signature(m, value, "=;")
        else:
            continue
        if name and (name, kind) not in {(n, kind) for n in seen}:
            seen.add(name)
            out.append(export(name, kind, m, sig, _jsdoc(src, m)))
    return out


def _parameter_properties(src: Source, ctor: Node) -> list[Export]:
    """`constructor(public readonly kind: K, private x)`: the public parameters declared as fields (kind)."""
    params = ctor.child_by_field_name("parameters")
    out = []
    for p in params.named_children if params is not None else []:
        if p.type not in ("required_parameter", "optional_parameter"):
            continue
        marks = {c.type for c in p.children}
        if not marks & {"accessibility_modifier", "readonly", "override_modifier"} or _hidden(src, p):
            continue
        pattern = p.child_by_field_name("pattern")
        if pattern is not None and pattern.type == "identifier":
            out.append(export(src.text(pattern), "field", p, src.signature(p, p.child_by_field_name("value"), "=")))
    return out


def _interface_members(src: Source, body: Node | None) -> list[Export]:
    out = []
    for m in body.named_children if body is not None else []:
        if m.type in ("property_signature", "method_signature") and not _computed(m):
            kind = "method" if m.type == "method_signature" else "field"
            out.append(export(unquote(src.field_text(m, "name")), kind, m, src.signature(m, None, ";,"),
                              _jsdoc(src, m)))
    return out


def _enum_members(src: Source, body: Node | None) -> list[Export]:
    out = []
    for m in body.named_children if body is not None else []:
        if m.type in ("property_identifier", "identifier", "string"):
            out.append(export(unquote(src.text(m)), "enum_member", m, src.text(m)))
        elif m.type == "enum_assignment":
            name = unquote(src.field_text(m, "name"))
            out.append(export(name, "enum_member", m, src.signature(m)))
    return out


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
            if value is not None and value.type in _FUNCTION_VALUES:
                body = value.child_by_field_name("body")
                sig = f"{keyword} {src.signature(d, body, '{=>')}"
                kind = "function"
            else:
                text = " ".join(src.text(value).split()) if value is not None else ""
                sig = f"{keyword} {src.signature(d, value, '=')}" + (f" = {text}" if text and len(text) <= 60 else "")
                kind = "const" if is_const else "variable"
            for name in _declarator_names(src, name_node) if name_node is not None else []:
                out.append(export(name, kind, d, sig, span_node=span))
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
        members = _class_members(src, body)
    elif kind == "interface":
        members = _interface_members(src, body)
    elif kind == "enum":
        members = _enum_members(src, body)
    elif kind == "namespace" and body is not None:
        members = _module_exports(src, body)[0]
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


def _statements(program: Node) -> list[Node]:
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


def _module_exports(src: Source, program: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    locals_: dict[str, Node] = {}
    clauses: list[tuple[Node, Node]] = []  # (export_specifier, statement) naming locals
    for stmt in _statements(program):
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
                    if name_node is not None and name_node.type == "identifier" and not commonjs.require_spec(
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
    return _unique(exports), imports


def _unique(exports: list[Export]) -> list[Export]:
    seen: set[str] = set()
    unique = []
    for e in exports:  # overloads and declaration merging: one export per name
        if e.name not in seen:
            seen.add(e.name)
            unique.append(e)
    return unique


def _export_statement(src: Source, stmt: Node, exports: list[Export], imports: list[Import],
                      clauses: list[tuple[Node, Node]]) -> None:
    source = stmt.child_by_field_name("source")
    spec = _string(src, source)
    is_default = any(c.type == "default" for c in stmt.children) or src.text(stmt).startswith("export default")
    decl = stmt.child_by_field_name("declaration")
    doc = _jsdoc(src, stmt)
    if is_default:
        value = decl or stmt.child_by_field_name("value")
        if value is not None and value.type == "identifier":
            clauses.append((value, stmt))  # resolved against the local declarations afterwards
        found = declarations(src, value, stmt) if value is not None else []
        if found and found[0].kind != "other":
            exports.append(found[0].model_copy(update={"name": "default", "doc": doc}))
        else:
            kind = "function" if value is not None and value.type in _FUNCTION_VALUES else "variable"
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


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports, imports = _module_exports(src, root)
    if b"require(" in src.data or b"import(" in src.data:
        imports = sorted([*imports, *commonjs.imports(src, root)], key=lambda i: i.line or 0)
    if not src.path.endswith(_TS_SUFFIXES):  # TypeScript does not read CommonJS assignments as exports
        cjs, whole = commonjs.exports(src, _statements(root), lambda decl, span: declarations(src, decl, span))
        exports = _unique([*exports, *cjs])
        if whole:  # `var m = require("./m"); module.exports = m` hands m on whole, as `export * from`
            imports = [i.model_copy(update={"names": ["*"]}) if i.specifier == whole else i for i in imports]
    return exports, imports
