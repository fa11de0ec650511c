"""The members of JavaScript and TypeScript classes, interfaces and enums that importers see: public methods,
accessors and fields of classes (not `private`/`protected`/`#private`; a constructor's public parameter properties),
the properties and methods of interfaces, enum members; their `/** … */` docs."""

from __future__ import annotations

from adapters.code_parser.source import Node, Source, doc_before, export, unquote
from domain.knowledge.skeleton import Export

FUNCTION_VALUES = ("arrow_function", "function_expression", "function", "generator_function")


def jsdoc(src: Source, node: Node) -> str | None:
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


def class_members(src: Source, body: Node | None) -> list[Export]:
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
            if value is not None and value.type in FUNCTION_VALUES:
                kind = "method"
            sig = src.signature(m, value, "=;")
        else:
            continue
        if name and (name, kind) not in {(n, kind) for n in seen}:
            seen.add(name)
            out.append(export(name, kind, m, sig, jsdoc(src, m)))
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


def interface_members(src: Source, body: Node | None) -> list[Export]:
    out = []
    for m in body.named_children if body is not None else []:
        if m.type in ("property_signature", "method_signature") and not _computed(m):
            kind = "method" if m.type == "method_signature" else "field"
            out.append(export(unquote(src.field_text(m, "name")), kind, m, src.signature(m, None, ";,"),
                              jsdoc(src, m)))
    return out


def enum_members(src: Source, body: Node | None) -> list[Export]:
    out = []
    for m in body.named_children if body is not None else []:
        if m.type in ("property_identifier", "identifier", "string"):
            out.append(export(unquote(src.text(m)), "enum_member", m, src.text(m)))
        elif m.type == "enum_assignment":
            name = unquote(src.field_text(m, "name"))
            out.append(export(name, "enum_member", m, src.signature(m)))
    return out
