"""CommonJS `require()` and dynamic `import()` calls of JavaScript and TypeScript files.

Every `require("…")` call with a string argument, wherever it is (`require('./utils').methods`, in a
function body), with the names it binds (the declarator's, the property read, or ["*"] for a re-export); and
dynamic `import("…")` calls likewise (a type's `import("./x").T` too).
"""

from __future__ import annotations

from adapters.code_parser.source import Node, Source, make_import, unquote
from domain.knowledge.skeleton import Import


def require_spec(src: Source, node: Node | None) -> str | None:
    """The string a `require("…")` (or dynamic `import("…")`) call names, else None."""
    if node is None or node.type != "call_expression":
        return None
    fn, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
    if fn is None or args is None:
        return None
    if fn.type != "import" and not (fn.type == "identifier" and src.text(fn) == "require"):
        return None
    if args.named_child_count != 1 or args.named_children[0].type != "string":
        return None
    return unquote(src.text(args.named_children[0]))


def imports(src: Source, root: Node) -> list[Import]:
    """Every `require("…")` and dynamic `import("…")` call of the file (in a type too: `import("./x").T`), in
    source order, with the names it binds."""
    found: list[tuple[int, Import]] = []
    for word, size in ((b"require(", 7), (b"import(", 6)):
        at = src.data.find(word)
        while at != -1:
            callee = root.descendant_for_byte_range(at, at + size)
            if callee is not None and callee.type == "import" and callee.parent is not None and (
                    callee.parent.type == "import"):  # the keyword inside the named `import` node
                callee = callee.parent
            call = callee.parent if callee is not None and callee.type in ("identifier", "import") else None
            spec = require_spec(src, call)
            if spec and call is not None:
                found.append((call.start_byte, make_import(spec, call, relative=spec.startswith(("./", "../")) or
                                                           spec in (".", ".."), names=_bound(src, call))))
            at = src.data.find(word, at + size + 1)
    return [imp for _, imp in sorted(found, key=lambda f: f[0])]


def _bound(src: Source, call: Node) -> list[str]:
    parent = call.parent
    if parent is not None and parent.type == "await_expression":
        parent = parent.parent
    if parent is not None and parent.type == "variable_declarator":
        name = parent.child_by_field_name("name")
        return _names(src, name) if name is not None else []
    if parent is not None and parent.type == "member_expression":
        return [src.field_text(parent, "property")]
    if parent is not None and parent.type == "assignment_expression" and src.text(
            parent.child_by_field_name("left")) in ("module.exports", "exports"):
        return ["*"]
    return []


def _names(src: Source, pattern: Node) -> list[str]:
    if pattern.type == "identifier":
        return [src.text(pattern)]
    out = []
    for c in pattern.named_children:
        if c.type in ("shorthand_property_identifier_pattern", "identifier"):
            out.append(src.text(c))
        elif c.type == "pair_pattern":
            value = c.child_by_field_name("value")
            out.extend(_names(src, value) if value is not None else [])
    return out
