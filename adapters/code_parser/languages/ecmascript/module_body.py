"""What Node runs when it loads a CommonJS file, as a reader takes it (commonjs.py reads the exports from it): an
immediately invoked wrapper's body is the module body, both branches of a top-level `if` count, `a = b = v` chains
and `(a = v).p = w` assign each target, names bound to `module`/`exports` behind environment guards stand for them,
and the call of a function written in the file runs its body.
"""

from __future__ import annotations

from adapters.code_parser.source import Node, Source

FUNCTIONS = ("arrow_function", "function_expression", "function", "generator_function")


def chain(node: Node | None) -> tuple[list[Node], Node | None]:
    """`a = b = c = value` → ([a, b, c], value)."""
    targets = []
    while node is not None and node.type == "assignment_expression":
        targets.append(node.child_by_field_name("left"))
        node = node.child_by_field_name("right")
    return targets, node


def assignments(src: Source, statements: list[Node],
                 renames: dict[str, str] | None = None) -> list[tuple[Node, list[str], Node | None]]:
    """(statement, assigned target texts, value) for each top-level assignment or declarator chain.

    `(freeModule.exports = _)._ = _` is two: `freeModule.exports = _` and `_._ = _`; a target starting with a
    guarded alias (`renames`: freeModule → module) is spelled with what it stands for."""
    renames = renames or {}

    def text(target: Node) -> str:
        t = src.text(target)
        head, dot, rest = t.partition(".")
        return renames[head] + dot + rest if head in renames else t

    out = []
    for stmt in statements:
        if stmt.type == "expression_statement" and stmt.named_child_count:
            pending = [stmt.named_children[0]]
            while pending:
                targets, value = chain(pending.pop())
                texts = []
                for t in targets:
                    inner = unparen(t.child_by_field_name("object")) if t.type == "member_expression" else None
                    if inner is not None and inner.type == "assignment_expression":  # (a = v).p = w
                        pending.append(inner)
                        v = chain(inner)[1]
                        texts.append(f"{src.text(v) if v is not None else ''}.{src.field_text(t, 'property')}")
                    else:
                        texts.append(text(t))
                if targets:
                    out.append((stmt, texts, value))
        elif stmt.type in ("lexical_declaration", "variable_declaration"):
            for d in stmt.named_children:
                name = d.child_by_field_name("name") if d.type == "variable_declarator" else None
                if name is not None and name.type == "identifier":
                    targets, value = chain(d.child_by_field_name("value"))
                    out.append((stmt, [src.text(name), *(text(t) for t in targets)], value))
    return out


def module_body(src: Source, statements: list[Node]) -> list[Node]:
    """The statements Node runs when it loads the file, as a reader takes them: an immediately invoked wrapper's
    body (`;(function() { … }.call(this));`, `(function () { … })()`, `!function () { … }()`) is the module body,
    and both branches of a top-level `if` count (`else if (freeModule) { (freeModule.exports = _)._ = _; }`: the
    guards test the environment, the assignment is what Node runs)."""
    out: list[Node] = []
    for stmt in statements:
        if stmt.type == "if_statement":
            branches = [stmt.child_by_field_name("consequence"), stmt.child_by_field_name("alternative")]
            for branch in branches:
                if branch is not None and branch.type == "else_clause":
                    branch = branch.named_children[0] if branch.named_child_count else None
                if branch is not None:
                    inner = list(branch.named_children) if branch.type == "statement_block" else [branch]
                    out += module_body(src, inner)
            continue
        expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_child_count else None
        if expr is not None and expr.type == "unary_expression" and expr.named_child_count:
            expr = expr.named_children[-1]
        fn = invoked(src, unparen(expr))
        body = fn.child_by_field_name("body") if fn is not None else None
        if body is not None and body.type == "statement_block":
            out += module_body(src, list(body.named_children))
        else:
            out.append(stmt)
    return out


def invoked(src: Source, call: Node | None, local: dict[str, Node] | None = None) -> Node | None:
    """The function a call runs when it is written in the file: `(function () {…})()`, `function () {…}.call(this)`,
    or a local function by name (`runInContext()` with `var runInContext = (function runInContext(context) {…})`)."""
    if call is None or call.type != "call_expression":
        return None
    fn = unparen(call.child_by_field_name("function"))
    if fn is not None and fn.type == "member_expression" and src.field_text(fn, "property") in ("call", "apply"):
        fn = unparen(fn.child_by_field_name("object"))
    if fn is not None and fn.type == "identifier" and local is not None:
        fn = unparen(local.get(src.text(fn)))
    if fn is not None and fn.type in (*FUNCTIONS, "function_declaration"):
        return fn
    return None


def last_return(src: Source, fn: Node) -> tuple[list[Node], Node, Node] | None:
    """(body statements, the last top-level `return x;`, x) of a function, else None."""
    body = fn.child_by_field_name("body")
    if body is None or body.type != "statement_block":
        return None
    for stmt in reversed(body.named_children):
        if stmt.type == "return_statement" and stmt.named_child_count:
            return list(body.named_children), stmt, stmt.named_children[0]
    return None


def guards(src: Source, local: dict[str, Node]) -> dict[str, str]:
    """Names bound to `module` or `exports` behind environment checks: `var freeModule = freeExports &&
    typeof module == 'object' && module && !module.nodeType && module` → {"freeModule": "module"}."""
    out: dict[str, str] = {}
    for _ in range(2):  # freeModule's chain names freeExports
        for name, value in local.items():
            node = unparen(value)
            while node is not None and node.type == "binary_expression" and src.field_text(node, "operator") == "&&":
                node = unparen(node.child_by_field_name("right"))
            if node is not None and node.type == "identifier" and name not in ("module", "exports"):
                target = src.text(node)
                target = out.get(target, target)
                if target in ("module", "exports") and node is not unparen(value):
                    out[name] = target
    return out


def top_level(src: Source, statements: list[Node]) -> dict[str, Node]:
    """Top-level name → the function, class or value it is declared as."""
    out: dict[str, Node] = {}
    for stmt in statements:
        if stmt.type in ("function_declaration", "generator_function_declaration", "class_declaration"):
            out.setdefault(src.field_text(stmt, "name"), stmt)
        elif stmt.type in ("lexical_declaration", "variable_declaration"):
            for d in stmt.named_children:
                name, value = d.child_by_field_name("name"), d.child_by_field_name("value")
                if name is not None and name.type == "identifier" and value is not None:
                    out.setdefault(src.text(name), chain(value)[1] or value)
    return out


def unparen(node: Node | None) -> Node | None:
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count:
        node = node.named_children[-1]
    return node


def class_iife(value: Node | None) -> Node | None:
    """The body of `(function (_super) { function X() {} X.prototype.m = …; return X; }(Base))`, the class
    pattern TypeScript and Babel emit for ES5, else None."""
    call = unparen(value)
    if call is None or call.type != "call_expression":
        return None
    fn = unparen(call.child_by_field_name("function"))
    return fn.child_by_field_name("body") if fn is not None and fn.type in FUNCTIONS else None
