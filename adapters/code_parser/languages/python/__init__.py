"""Python: what `import module` exposes, as griffe (the API extractor behind mkdocstrings) reads it.

Exported: top-level `def`/`async def`/`class`, `type` aliases and assignments, including those nested in
top-level `if`/`try`/`with` blocks, whose names do not start with `_`, and redundant aliases
(`from .core import Argument as Argument`, `import x as x`: PEP 484's explicit re-export, kind "other"). Not
exported: what an `if __name__ == "__main__":` block binds (script only), and a name the module imports and
defines only in a block (`try: import x` / `except ImportError: x = None`: the import with its fallback). When the
module assigns `__all__` as literal lists/tuples of strings (`=`, `+=`, `+`), exactly the names listed there that
the module defines or imports (imported ones become kind "other" with the import as signature). An `__all__`
computed at run time (a comprehension, a name) is ignored. A name's first definition stands, except `@overload`
stubs, which the implementation replaces (a stub file keeps the first overload), and except a def or class in a
block, which replaces an earlier definition (platform variants and fallbacks: the last, as griffe reads them).
Members of a class: its methods whose names do not start with `_` plus dunder methods (`__init__` as
"constructor", `@property` as "property"), public class attributes ("field") and public nested classes. A
signature ends at the colon (a comment after it belongs to the body); a string annotation shows unquoted
(`-> "Context"` as `-> Context`). Docs are docstrings. Imports: `import a.b`,
`from .x import y` (relative when dotted), wherever they are (function-local imports are edges too);
`from . import a, b` is one import per name (each usually a submodule). Not read: `from x import *`'s names.

Resolution (resolve.py): relative and absolute imports within the project, packages' `__init__.py`, submodules named
in `from p import m`, namespace packages (no `__init__.py`) holding the importing file.
"""

from __future__ import annotations

from adapters.code_parser.languages.python.definitions import add, definitions, is_overload, public
from adapters.code_parser.languages.python.resolve import resolve_import
from adapters.code_parser.source import Node, Source, line, make_import
from domain.knowledge.skeleton import Export, Import

__all__ = ["extract", "resolve_import"]

_BLOCKS = ("if_statement", "try_statement", "with_statement")


def _nested_statements(node: Node) -> list[Node]:
    """Statements of top-level if/try/with blocks (definitions made there are module attributes too)."""
    out: list[Node] = []
    for child in node.named_children:
        if child.type == "block":
            out.extend(child.named_children)
        elif child.type in ("else_clause", "elif_clause", "except_clause", "finally_clause", "except_group_clause"):
            out.extend(_nested_statements(child))
    return out


def _literal_names(src: Source, node: Node | None) -> list[str] | None:
    """Strings of a literal list/tuple, or of `+` concatenations of them; None when not static."""
    if node is None:
        return None
    if node.type in ("list", "tuple", "expression_list"):
        names = []
        for item in node.named_children:
            if item.type == "comment":
                continue
            if item.type != "string" or any(c.type == "interpolation" for c in item.named_children):
                return None
            names.append("".join(src.text(c) for c in item.named_children if c.type == "string_content"))
        return names
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return _literal_names(src, node.named_children[0])
    if node.type == "binary_operator" and src.text(node.child_by_field_name("operator")) == "+":
        left = _literal_names(src, node.child_by_field_name("left"))
        right = _literal_names(src, node.child_by_field_name("right"))
        return None if left is None or right is None else left + right
    return None


_DYNAMIC: list[str] = ["<dynamic>"]  # marks an __all__ that cannot be read statically


def _all_names(src: Source, stmt: Node) -> list[str] | None:
    """The names an `__all__ = …` / `__all__ += …` statement lists; _DYNAMIC when they are computed."""
    if stmt.type != "expression_statement" or stmt.named_child_count != 1:
        return None
    node = stmt.named_children[0]
    if node.type not in ("assignment", "augmented_assignment"):
        return None
    left = node.child_by_field_name("left")
    if left is None or src.text(left) != "__all__":
        return None
    names = _literal_names(src, node.child_by_field_name("right"))
    return _DYNAMIC if names is None else names


def _imports(src: Source, stmt: Node) -> list[Import]:
    if stmt.type == "import_statement":
        out = []
        for item in stmt.named_children:
            target = item.child_by_field_name("name") if item.type == "aliased_import" else item
            alias = item.child_by_field_name("alias") if item.type == "aliased_import" else None
            spec = src.text(target)
            out.append(make_import(spec, stmt, names=[src.text(alias) if alias else spec.split(".")[0]]))
        return out
    if stmt.type == "import_from_statement":
        module = stmt.child_by_field_name("module_name")
        spec = src.text(module)
        names: list[str] = []
        for item in stmt.named_children:
            if item == module:
                continue
            if item.type == "wildcard_import":
                names.append("*")
            elif item.type == "aliased_import":
                names.append(src.field_text(item, "name"))
            elif item.type == "dotted_name":
                names.append(src.text(item))
        return [make_import(spec, stmt, relative=spec.startswith("."), names=names)]
    return []


def _split(imports: list[Import]) -> list[Import]:
    """`from . import a, b` as one import per name: each name is usually a submodule, a file of its own."""
    out: list[Import] = []
    for imp in imports:
        if imp.relative and not imp.specifier.strip(".") and len(imp.names) > 1:
            out.extend(imp.model_copy(update={"names": [name]}) for name in imp.names)
        else:
            out.append(imp)
    return out


def _reexports(src: Source, stmt: Node) -> list[tuple[str, str]]:
    """(name, signature) of each redundant alias (`from m import x as x`, `import x as x`): PEP 484's explicit
    re-export, which type checkers and griffe read as public API."""
    out = []
    module = stmt.child_by_field_name("module_name") if stmt.type == "import_from_statement" else None
    for item in stmt.named_children:
        if item.type != "aliased_import":
            continue
        name, alias = src.field_text(item, "name"), src.field_text(item, "alias")
        if name == alias and "." not in name:
            out.append((name, f"from {src.text(module)} import {name}" if module is not None else f"import {name}"))
    return out


_IMPORT_TYPES = ("import_statement", "import_from_statement")
# statements whose bodies may hold an import (functions' local imports are edges too)
_CONTAINERS = frozenset(("block", "function_definition", "class_definition", "decorated_definition", "if_statement",
                         "elif_clause", "else_clause", "try_statement", "except_clause", "except_group_clause",
                         "finally_clause", "with_statement", "for_statement", "while_statement", "match_statement",
                         "case_clause"))


def _nested_imports(src: Source, node: Node, out: list[Import]) -> None:
    """The imports anywhere in a statement's blocks; a span without the word `import` is not walked (a
    function's children cost tree-sitter more than a byte search of its text)."""
    if src.data.find(b"import", node.start_byte, node.end_byte) < 0:
        return
    for child in node.named_children:
        if child.type in _IMPORT_TYPES:
            out.extend(_split(_imports(src, child)))
        elif child.type in _CONTAINERS:
            _nested_imports(src, child, out)


def _main_guard(src: Source, stmt: Node) -> bool:
    """`if __name__ == "__main__":` — what it binds runs only as a script, never on import."""
    condition = stmt.child_by_field_name("condition")
    if condition is None or condition.type != "comparison_operator":
        return False
    text = "".join(src.text(condition).split()).replace("'", '"')
    return text in ('__name__=="__main__"', '"__main__"==__name__')


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    local: list[Import] = []
    seen: dict[str, int] = {}
    overloads: set[str] = set()
    declared_all: list[str] | None = None
    imported: dict[str, Import] = {}
    conditional: set[str] = set()  # names defined in if/try/with blocks
    pending: list[tuple[Node, bool]] = []
    for stmt in root.named_children:  # a top-level ERROR node (tree-sitter gave up on a span) still holds statements
        pending.extend((s, False) for s in (stmt.named_children if stmt.type == "ERROR" else [stmt]))
    while pending:
        stmt, nested = pending.pop(0)
        if stmt.type == "if_statement" and _main_guard(src, stmt):
            _nested_imports(src, stmt, local)
            continue
        if stmt.type in _BLOCKS:
            pending[0:0] = [(s, True) for s in _nested_statements(stmt)]
            continue
        if stmt.type in _IMPORT_TYPES:
            for imp in _split(_imports(src, stmt)):
                imports.append(imp)
                for name in imp.names:
                    imported.setdefault(name, imp)
            for name, signature in _reexports(src, stmt):
                add(exports, seen, overloads, Export(name=name, kind="other", signature=signature,
                                                     start_line=line(stmt), end_line=line(stmt)), False)
            continue
        names = _all_names(src, stmt)
        if names is not None:
            if names is _DYNAMIC or declared_all is _DYNAMIC:
                declared_all = _DYNAMIC
            elif stmt.named_children[0].type == "assignment":
                declared_all = names
            else:
                declared_all = (declared_all or []) + names
            continue
        if stmt.type in _CONTAINERS:
            _nested_imports(src, stmt, local)
        overload = is_overload(src, stmt)
        for item in definitions(src, stmt, member=False):
            add(exports, seen, overloads, item, overload, nested)
            if nested:
                conditional.add(item.name)
    imports += local
    if declared_all is None or declared_all is _DYNAMIC:  # no __all__, or one computed at run time
        # a name the module imports and defines only in a block is the import with a fallback or a platform
        # variant (`try: import x` / `except ImportError: x = None`): the import's name, not this module's API
        return [e for e in exports if public(e.name)
                and not (e.kind != "other" and e.name in imported and e.name in conditional)], imports
    by_name = {e.name: e for e in exports}
    chosen: list[Export] = []
    for name in dict.fromkeys(declared_all):
        if name in by_name:
            chosen.append(by_name[name])
        elif name in imported:
            imp = imported[name]
            chosen.append(Export(name=name, kind="other", signature=f"from {imp.specifier} import {name}",
                                 start_line=imp.line or 1, end_line=imp.line or 1))
    return chosen, imports
