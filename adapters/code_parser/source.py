"""What the per-language extractors share: a file's bytes and node → text (Source), signatures, doc comments,
export and import builders, parse errors."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, cast

from domain.knowledge.skeleton import Export, ExportKind, Import

Node = Any  # tree_sitter.Node (not imported here: tree_sitter loads lazily)
Extractor = Callable[["Source", Node], tuple[list[Export], list[Import]]]

_WS = re.compile(r"\s+")
MAX_SIGNATURE = 400
DOC_COMMENTS = 200


class Source:
    """The bytes of a file and the node → text helpers the extractors use."""

    __slots__ = ("data", "path")

    def __init__(self, data: bytes, path: str = "") -> None:
        self.data = data
        self.path = path

    def text(self, node: Node | None) -> str:
        if node is None:
            return ""
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def span(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "replace")

    def signature(self, node: Node, body: Node | None = None, strip: str = "{:=") -> str:
        """The declaration's header: its text up to the body (or all of it), whitespace-normalised."""
        end = body.start_byte if body is not None else node.end_byte
        text = _WS.sub(" ", self.span(node.start_byte, end)).strip()
        while text and text[-1] in strip:
            text = text[:-1].rstrip()
        if len(text) > MAX_SIGNATURE:
            text = text[: MAX_SIGNATURE - 1] + "…"
        return text

    def header(self, node: Node, *body_fields: str, strip: str = "{:=") -> str:
        """Signature up to the first present body field (defaults: body)."""
        body = None
        for field in body_fields or ("body",):
            body = node.child_by_field_name(field)
            if body is not None:
                break
        return self.signature(node, body, strip)

    def field_text(self, node: Node, field: str) -> str:
        return self.text(node.child_by_field_name(field))


def line(node: Node) -> int:
    return node.start_point[0] + 1


def end_line(node: Node) -> int:
    row, col = node.end_point
    # A node ending at column 0 ends on the previous line (its trailing newline).
    return max(row if col == 0 and row > node.start_point[0] else row + 1, node.start_point[0] + 1)


def export(name: str, kind: str, node: Node, signature: str = "", doc: str | None = None,
           members: list[Export] | None = None, span_node: Node | None = None) -> Export:
    """`kind` comes from the languages' tables of plain strings; Export (pydantic) refuses one that is not an
    ExportKind when it is built, hence the cast."""
    span = span_node or node
    return Export(name=name, kind=cast(ExportKind, kind), signature=signature, doc=doc or None,
                  start_line=line(span), end_line=end_line(span), members=members or [])


def make_import(specifier: str, node: Node, *, relative: bool = False, names: Iterable[str] = ()) -> Import:
    return Import(specifier=specifier, relative=relative, names=list(names), line=line(node))


_COMMENT_MARKERS = re.compile(r"^\s*(?:/\*\*?|\*/|\*(?!\))|///?!?|//|#+'?|--+\s*\|?|;+|\(\*\*?|\*\))\s?")


def clean_comment(text: str) -> str:
    """Comment markers (//, ///, /** */, #, --, -- |, (** *)) stripped, lines joined."""
    text = text.strip()
    for suffix in ("*/", "*)", "-}"):
        if text.endswith(suffix):
            text = text[: -len(suffix)]
    if text.startswith("{-"):
        text = text[2:].lstrip("|")
    out = []
    for raw in text.splitlines():
        cleaned = _COMMENT_MARKERS.sub("", raw, count=1).rstrip()
        out.append(cleaned)
    return "\n".join(out).strip()


def doc_before(src: Source, node: Node, comment_types: tuple[str, ...] = ("comment",),
               accept: Callable[[str], bool] | None = None) -> str | None:
    """The comment block right above a declaration (contiguous comments, no blank line between): its last
    DOC_COMMENTS comments at most (each step back costs tree-sitter a walk over the siblings before it, so a
    file of 50 000 comment lines above one class took minutes)."""
    parts: list[str] = []
    current = node
    prev = node.prev_sibling
    while prev is not None and prev.type in comment_types and len(parts) < DOC_COMMENTS:
        if prev.end_point[0] < current.start_point[0] - 1:
            break
        before = prev.prev_sibling
        if before is not None and before.end_point[0] == prev.start_point[0]:
            break  # a trailing comment of the line above, not a doc comment
        text = src.text(prev)
        if accept is not None and not accept(text):
            break
        parts.append(text)
        current = prev
        prev = prev.prev_sibling
    if not parts:
        return None
    return clean_comment("\n".join(reversed(parts))) or None


def parse_errors(root: Node, limit: int = 20) -> list[str]:
    """tree-sitter ERROR and MISSING nodes with their line numbers (the first `limit`)."""
    if not root.has_error:
        return []
    errors: list[str] = []
    stack = [root]
    while stack and len(errors) < limit:
        node = stack.pop()
        if node.is_missing:
            errors.append(f"line {line(node)}: missing {node.type}")
            continue
        if node.is_error:
            errors.append(f"line {line(node)}: syntax error")
            continue
        stack.extend(c for c in reversed(node.children) if c.has_error or c.is_missing)
    return sorted(errors, key=lambda e: int(e.split(":", 1)[0][5:]))


def unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] in "\"'`<" and text[-1] in "\"'`>":
        return text[1:-1]
    return text


def named_children(node: Node, *types: str) -> list[Node]:
    return [c for c in node.named_children if not types or c.type in types]


def first_child(node: Node, *types: str) -> Node | None:
    for c in node.named_children:
        if c.type in types:
            return c
    return None
