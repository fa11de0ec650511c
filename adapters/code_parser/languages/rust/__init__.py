"""Rust: the items other modules can name (`pub`, not `pub(crate)`/`pub(super)`/`pub(in …)`).

Exported: `pub` fn, struct, union, enum, trait, type, const, static ("variable"), mod (inline modules carry their
pub items as members; `pub mod x;` is also an import "mod x"), `pub use` re-exports (kind "other"), and
`macro_rules!` marked `#[macro_export]`. Members: pub fields of structs/unions (a tuple struct's named 0, 1, …),
enum variants, the items of traits, pub fns of inherent `impl`s (as methods of their type), and each trait `impl`
(kind "impl", named after the trait, its fns as members). An impl whose type is declared in another file becomes a
top-level export of kind "impl" (an impl of a private type of the file is not API: left out; one for a trait object
`dyn Tr + 'a` belongs to Tr). Items a macro of the file declares (a `macro_rules!` of one rule invoked at the top
level, like serde's `declare_error_trait!`) are read from its transcriber with the `$(…)` repetitions and `$var`s
left out; an item whose name a `$var` gives is not guessed. Docs are `///` and `/** */` comments. Imports: `use`
trees flattened to one import per path (names: the leaves, `self` as the module it names, "*" for globs; `use a::b
as c` is the path a::b binding c, and a `pub use` of it exports c), `mod x;` declarations (`#[path = "p"] mod x`
keeps its path), `extern crate`.

Resolution (resolve.py): `mod x;` (and `#[path = "p"] mod x;`, beside the file), `crate::`/`self::`/`super::` paths,
2018 child-module paths and, in a 2015-edition crate (no `edition` in Cargo.toml), crate-root paths → the module's
file. Rust 2015's `try!(…)` is parsed as a macro of the same length (`parseable`).
"""

from __future__ import annotations

import re

from adapters.code_parser.grammars import parser
from adapters.code_parser.languages.rust.items import TYPE_ITEMS, items
from adapters.code_parser.languages.rust.resolve import resolve_import
from adapters.code_parser.source import Node, Source, end_line, line
from domain.knowledge.skeleton import Export, Import

__all__ = ["extract", "parseable", "resolve_import"]

# Rust 2015's `try!(…)` (a keyword since 2018, so tree-sitter reports a syntax error at each): parsed as the
# same-length macro name `tr_!`, offsets unchanged; the extractors still read the original bytes.
_RUST_2015_TRY = re.compile(rb"(?<![\w#])try!")


def parseable(data: bytes) -> bytes:
    """The bytes tree-sitter parses of a Rust file: `try!` rewritten, offsets unchanged."""
    return _RUST_2015_TRY.sub(b"tr_!", data) if b"try!" in data else data


def _without_repetitions(text: str) -> str:
    """A macro transcriber with each `$( … ) sep? rep` group removed."""
    out, i = [], 0
    while i < len(text):
        if text.startswith("$(", i):
            depth, j = 0, i + 1
            while j < len(text):
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
                if depth == 0:
                    break
            k = text.find("*", j, j + 3), text.find("+", j, j + 3), text.find("?", j, j + 3)
            ends = [x for x in k if x >= 0]
            i = (min(ends) + 1) if ends else j
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _macro_items(src: Source, root: Node) -> list[Export]:
    """The pub items each top-level invocation of a one-rule `macro_rules!` of this file declares."""
    rules: dict[str, Node] = {}
    for node in root.named_children:
        if node.type == "macro_definition":
            found = [c for c in node.named_children if c.type == "macro_rule"]
            if len(found) == 1 and found[0].child_by_field_name("right") is not None:
                rules[src.field_text(node, "name")] = found[0].child_by_field_name("right")
    out: list[Export] = []
    for node in root.named_children:
        call = node.named_children[0] if node.type == "expression_statement" and node.named_child_count else node
        if call.type != "macro_invocation" or src.field_text(call, "macro") not in rules:
            continue
        body = src.text(rules[src.field_text(call, "macro")])[1:-1]
        text = re.sub(r"\$\w+", "__code3_macro_var", _without_repetitions(body)).encode()
        expanded = Source(text, src.path)
        for e in items(expanded, parser("rust").parse(text).root_node)[0]:
            if "__code3_macro_var" not in e.name:
                out.append(e.model_copy(update={"start_line": line(call), "end_line": end_line(call)}))
    return out


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports, imports, impls = items(src, root)
    declared = {e.name for e in exports}
    for item in _macro_items(src, root):
        if item.name not in declared:  # one per name: serde declares its Error trait once per cfg
            declared.add(item.name)
            exports.append(item)
    owners = {e.name: e for e in exports if e.kind in ("struct", "enum", "union", "trait", "type")}
    private = {src.field_text(n, "name") for n in root.named_children if n.type in TYPE_ITEMS} - owners.keys()
    orphans: dict[str, Export] = {}
    for type_name, member in impls:
        owner = owners.get(type_name)
        if owner is not None:
            owner.members.append(member)
        elif type_name in private:
            continue  # impl Display for a private struct of this file: nothing another module can name
        elif member.kind == "impl" or member.kind == "method":
            orphan = orphans.get(type_name)
            if orphan is None:
                orphan = orphans[type_name] = Export(name=type_name, kind="impl", signature=f"impl {type_name}",
                                                     start_line=member.start_line, end_line=member.end_line)
                exports.append(orphan)
            orphan.members.append(member)
            orphan.end_line = max(orphan.end_line, member.end_line)
    return exports, imports
