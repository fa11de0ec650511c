"""Elixir: modules and their public functions, named with their arity ("run/2").

Exported: every `defmodule` (nested modules as their own exports, with the qualified name). Members: `def`
("function"), `defmacro` ("macro"), `defguard` and `defdelegate` (not `defp`/`defmacrop`/`defguardp`), one
per name/arity, and `defstruct` ("struct"). Docs: `@moduledoc` and the `@doc` before a definition.
Imports: `alias`, `import`, `require`, `use` (the module named), resolved by Mix's convention: Acme.Util →
lib/acme/util.ex (or .exs; from the project root too).
"""

from __future__ import annotations

import re

from adapters.code_parser.resolution import ProjectIndex, join
from adapters.code_parser.source import Node, Source, export, make_import, unquote
from domain.knowledge.skeleton import Export, Import

_PUBLIC = {"def": "function", "defmacro": "macro", "defguard": "function", "defdelegate": "function"}
_IMPORTS = ("alias", "import", "require", "use")


def _target(src: Source, call: Node) -> str:
    target = call.child_by_field_name("target") if call.type == "call" else None
    return src.text(target) if target is not None else ""


def _args(call: Node) -> list[Node]:
    args = next((c for c in call.named_children if c.type == "arguments"), None)
    return list(args.named_children) if args is not None else []


def _attribute(src: Source, node: Node) -> tuple[str, str | None] | None:
    """@name value → (name, string value or None)."""
    if node.type != "unary_operator" or not src.text(node).startswith("@"):
        return None
    operand = node.child_by_field_name("operand")
    if operand is None or operand.type != "call":
        return None
    args = _args(operand)
    value = args[0] if args else None
    text = None
    if value is not None and value.type == "string":
        raw = src.text(value)
        text = raw.strip('"').strip() if raw.startswith('"""') else unquote(raw)
    return _target(src, operand), text


def _head(src: Source, call: Node) -> tuple[str, str]:
    """(name/arity, header text) of a def call."""
    args = _args(call)
    head = args[0] if args else None
    if head is not None and head.type == "binary_operator":  # def f(x) when guard
        head = head.child_by_field_name("left")
    if head is None:
        return "", ""
    if head.type == "call":
        name = _target(src, head)
        params = next((c for c in head.named_children if c.type == "arguments"), None)
        arity = params.named_child_count if params is not None else 0
    else:
        name, arity = src.text(head), 0
    return f"{name}/{arity}", f"{_target(src, call)} {' '.join(src.text(head).split())}"


def _module(src: Source, call: Node, prefix: str, exports: list[Export], imports: list[Import]) -> None:
    args = _args(call)
    name = src.text(args[0]) if args else ""
    full = f"{prefix}.{name}" if prefix else name
    block = next((c for c in call.named_children if c.type == "do_block"), None)
    members: list[Export] = []
    seen: set[str] = set()
    doc: str | None = None
    moduledoc: str | None = None
    item = export(full, "module", call, f"defmodule {full}")
    exports.append(item)
    for node in block.named_children if block is not None else []:
        attr = _attribute(src, node)
        if attr is not None:
            if attr[0] == "moduledoc":
                moduledoc = attr[1]
            elif attr[0] == "doc":
                doc = attr[1]
            continue
        if node.type != "call":
            continue
        kind_word = _target(src, node)
        if kind_word == "defmodule":
            _module(src, node, full, exports, imports)
        elif kind_word in _PUBLIC:
            key, header = _head(src, node)
            if key and key not in seen:
                seen.add(key)
                members.append(export(key, _PUBLIC[kind_word], node, header, doc))
            doc = None
        elif kind_word == "defstruct":
            members.append(export("__struct__", "struct", node, " ".join(src.text(node).split())[:200]))
        elif kind_word in _IMPORTS:
            _import(src, node, imports)
        elif kind_word.startswith("def"):
            doc = None
    item.members.extend(members)
    item.doc = moduledoc


def _import(src: Source, node: Node, imports: list[Import]) -> None:
    args = _args(node)
    if args and args[0].type == "alias":
        spec = src.text(args[0])
        imports.append(make_import(spec, node, names=[spec.rsplit(".", 1)[-1]]))
    elif args and args[0].type == "dot":  # alias Acme.{A, B}
        text = src.text(args[0])
        base, _, rest = text.partition(".{")
        for name in rest.rstrip("}").split(","):
            if name.strip():
                imports.append(make_import(f"{base}.{name.strip()}", node, names=[name.strip()]))


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    for node in root.named_children:
        if node.type == "call" and _target(src, node) == "defmodule":
            _module(src, node, "", exports, imports)
        elif node.type == "call" and _target(src, node) in _IMPORTS:
            _import(src, node, imports)
    return exports, imports


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    """Acme.Util → lib/acme/util.ex (Mix's convention: Macro.underscore of each segment)."""
    rel = "/".join(_snake(p) for p in imp.specifier.split("."))
    return ix.first_file([join(root, rel) + ext for root in ("lib", "") for ext in (".ex", ".exs")])
