"""CommonJS: what `require("./file")` hands back, read from the assignments Node runs when it loads the file.

Exports (the keys a consumer sees, as `Object.keys(require(file))` lists them):
- `module.exports = {a, b: …}` → a, b; `module.exports = fn | class | identifier of one` → "export=" (the
  callable itself), with the class's members, or the `Fn.prototype.x = …` assignments as members; any other
  value but a plain object (`Object.create(…)`, `new X`, a literal) → "export=" of kind "other";
- `module.exports.x =`, `exports.x =`, and `alias.x =` where the alias is bound to module.exports anywhere at
  top level (`var app = exports = module.exports = {}`, `var proto = module.exports = function …`,
  `module.exports = req` with `var req = Object.create(…)`) → x; chains `req.get = req.header = …` name each;
- `Object.defineProperty(alias, "x", {enumerable: true, …})`, or a local helper that calls it the same way
  (`defineGetter(req, "protocol", …)`) → x;
- `module.exports = require("./m")` hands m's exports on: no names of its own, an import of m with names ["*"]
  (as `export * from`);
- `module.exports = f(require("./m"))`, a call given one required module and nothing else, hands m on the same
  way, with no "export=": the line reads "module m, passed through f", and the names a consumer can count on are
  m's. Wrappers of this shape return their argument or a copy of its keys (`Object.freeze(m)`; lodash's
  fp/array.js `convert(require('../array'))` returns the very object array.js exports, as Node shows, after adding
  aliases); what f adds at run time is not in the text. With other arguments (`convert('chunk', require(…))`)
  the result is unknown: "export=" of kind "other", as for any call;
- the module body is what Node runs on load, as a reader takes it: an immediately invoked wrapper
  (`;(function() { … }.call(this));`, `!function () { … }()`) is read as the body, both branches of a top-level
  `if` count (UMD's `else if (freeModule) { (freeModule.exports = _)._ = _; }`: the tests choose the
  environment, the assignment is what Node does), a name bound to `module`/`exports` at the end of an `&&` guard
  chain (`var freeModule = freeExports && typeof module == 'object' && module`) stands for it, and
  `(a = v).p = w` is `a = v` and `v.p = w`;
- an exported value that is the call of a function written in the file (`var _ = runInContext();`, an IIFE
  `(function () { …; return api; }())`) exports what the function's last top-level `return x;` hands back, read in
  the function's body as module.exports would be (`lodash.chunk = chunk`, `lodash.prototype.at = …`); a name
  assigned the module's own value (`_._ = _`) has its members too;
- `a || b` (and `??`) may be either side: callable unless both are plain values (lodash's `nativeIsBuffer ||
  stubFalse`); an `a && b` guard chain stays a value.
Names made by computed keys (`app[method] = …` in a loop, lodash's `mixin(lodash, lodash)` copying every static
onto the prototype) cannot be read from the text and are not guessed.

Imports: every `require("…")` call with a string argument, wherever it is (`require('./utils').methods`, in a
function body), with the names it binds (the declarator's, the property read, or ["*"] for a re-export); and
dynamic `import("…")` calls likewise (a type's `import("./x").T` too).
"""

from __future__ import annotations

from collections.abc import Callable

from adapters.code_parser.base import Node, Source, clean_comment, export, make_import, unquote
from domain.skeleton import Export, Import

FUNCTIONS = ("arrow_function", "function_expression", "function", "generator_function")
_CLASSES = ("class", "class_declaration")
_ROOT = "module.exports"


def _chain(node: Node | None) -> tuple[list[Node], Node | None]:
    """`a = b = c = value` → ([a, b, c], value)."""
    targets = []
    while node is not None and node.type == "assignment_expression":
        targets.append(node.child_by_field_name("left"))
        node = node.child_by_field_name("right")
    return targets, node


def _assignments(src: Source, statements: list[Node],
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
                targets, value = _chain(pending.pop())
                texts = []
                for t in targets:
                    inner = _unparen(t.child_by_field_name("object")) if t.type == "member_expression" else None
                    if inner is not None and inner.type == "assignment_expression":  # (a = v).p = w
                        pending.append(inner)
                        v = _chain(inner)[1]
                        texts.append(f"{src.text(v) if v is not None else ''}.{src.field_text(t, 'property')}")
                    else:
                        texts.append(text(t))
                if targets:
                    out.append((stmt, texts, value))
        elif stmt.type in ("lexical_declaration", "variable_declaration"):
            for d in stmt.named_children:
                name = d.child_by_field_name("name") if d.type == "variable_declarator" else None
                if name is not None and name.type == "identifier":
                    targets, value = _chain(d.child_by_field_name("value"))
                    out.append((stmt, [src.text(name), *(text(t) for t in targets)], value))
    return out


def _body(src: Source, statements: list[Node]) -> list[Node]:
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
                    out += _body(src, list(branch.named_children) if branch.type == "statement_block" else [branch])
            continue
        expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_child_count else None
        if expr is not None and expr.type == "unary_expression" and expr.named_child_count:
            expr = expr.named_children[-1]
        fn = _invoked(src, _unparen(expr))
        body = fn.child_by_field_name("body") if fn is not None else None
        if body is not None and body.type == "statement_block":
            out += _body(src, list(body.named_children))
        else:
            out.append(stmt)
    return out


def _invoked(src: Source, call: Node | None, local: dict[str, Node] | None = None) -> Node | None:
    """The function a call runs when it is written in the file: `(function () {…})()`, `function () {…}.call(this)`,
    or a local function by name (`runInContext()` with `var runInContext = (function runInContext(context) {…})`)."""
    if call is None or call.type != "call_expression":
        return None
    fn = _unparen(call.child_by_field_name("function"))
    if fn is not None and fn.type == "member_expression" and src.field_text(fn, "property") in ("call", "apply"):
        fn = _unparen(fn.child_by_field_name("object"))
    if fn is not None and fn.type == "identifier" and local is not None:
        fn = _unparen(local.get(src.text(fn)))
    if fn is not None and fn.type in (*FUNCTIONS, "function_declaration"):
        return fn
    return None


def _returned(src: Source, fn: Node) -> tuple[list[Node], Node, Node] | None:
    """(body statements, the last top-level `return x;`, x) of a function, else None."""
    body = fn.child_by_field_name("body")
    if body is None or body.type != "statement_block":
        return None
    for stmt in reversed(body.named_children):
        if stmt.type == "return_statement" and stmt.named_child_count:
            return list(body.named_children), stmt, stmt.named_children[0]
    return None


def _guards(src: Source, local: dict[str, Node]) -> dict[str, str]:
    """Names bound to `module` or `exports` behind environment checks: `var freeModule = freeExports &&
    typeof module == 'object' && module && !module.nodeType && module` → {"freeModule": "module"}."""
    out: dict[str, str] = {}
    for _ in range(2):  # freeModule's chain names freeExports
        for name, value in local.items():
            node = _unparen(value)
            while node is not None and node.type == "binary_expression" and src.field_text(node, "operator") == "&&":
                node = _unparen(node.child_by_field_name("right"))
            if node is not None and node.type == "identifier" and name not in ("module", "exports"):
                target = src.text(node)
                target = out.get(target, target)
                if target in ("module", "exports") and node is not _unparen(value):
                    out[name] = target
    return out


def _locals(src: Source, statements: list[Node]) -> dict[str, Node]:
    """Top-level name → the function, class or value it is declared as."""
    out: dict[str, Node] = {}
    for stmt in statements:
        if stmt.type in ("function_declaration", "generator_function_declaration", "class_declaration"):
            out.setdefault(src.field_text(stmt, "name"), stmt)
        elif stmt.type in ("lexical_declaration", "variable_declaration"):
            for d in stmt.named_children:
                name, value = d.child_by_field_name("name"), d.child_by_field_name("value")
                if name is not None and name.type == "identifier" and value is not None:
                    out.setdefault(src.text(name), _chain(value)[1] or value)
    return out


def _unparen(node: Node | None) -> Node | None:
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count:
        node = node.named_children[-1]
    return node


def _class_iife(value: Node | None) -> Node | None:
    """The body of `(function (_super) { function X() {} X.prototype.m = …; return X; }(Base))`, the class
    pattern TypeScript and Babel emit for ES5, else None."""
    call = _unparen(value)
    if call is None or call.type != "call_expression":
        return None
    fn = _unparen(call.child_by_field_name("function"))
    return fn.child_by_field_name("body") if fn is not None and fn.type in FUNCTIONS else None


def _prototype_members(src: Source, statements: list[Node], local: dict[str, Node]) -> dict[str, list[Export]]:
    """Constructor name → its members: `X.prototype.m = …` and `Object.defineProperty(X.prototype, "m", …)`, at
    top level and inside the ES5 class IIFE a name is bound to."""
    blocks = [statements] + [list(body.named_children) for value in local.values()
                             if (body := _class_iife(value)) is not None]
    out: dict[str, list[Export]] = {}
    for block in blocks:
        for stmt in block:
            expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_child_count else None
            if expr is None:
                continue
            if expr.type == "call_expression" and src.field_text(expr, "function") == "Object.defineProperty":
                args = expr.child_by_field_name("arguments")
                first = src.text(args.named_children[0]) if args is not None and args.named_child_count > 2 else ""
                if first.endswith(".prototype") and args is not None and args.named_children[1].type == "string":
                    name = unquote(src.text(args.named_children[1]))
                    out.setdefault(first[: -len(".prototype")], []).append(
                        export(name, "property", stmt, _define_signature(src, expr), _doc(src, stmt)))
                continue
            targets, value = _chain(expr)
            for t in targets:
                owner, _, prop = src.text(t).rpartition(".prototype.")
                if owner.isidentifier() and prop.isidentifier() and prop != "constructor":  # Node's own default
                    body = value.child_by_field_name("body") if value is not None and value.type in FUNCTIONS else None
                    sig = src.signature(stmt, body, "=") if body is not None else f"{src.text(t)} = …"
                    kind = "method" if _kind(value) == "function" else "field"
                    out.setdefault(owner, []).append(export(prop, kind, stmt, sig, _doc(src, stmt)))
    return out


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


def _doc(src: Source, stmt: Node) -> str | None:
    """The `/** … */` right above an assignment, a blank line between allowed (express: `*/`, blank, `app.use =`)."""
    prev = stmt.prev_sibling
    if prev is None or prev.type != "comment" or prev.end_point[0] < stmt.start_point[0] - 2:
        return None
    text = src.text(prev)
    return clean_comment(text) or None if text.startswith("/**") else None


def _kind(value: Node | None) -> str:
    if value is None:
        return "variable"
    if value.type in FUNCTIONS or value.type in ("function_declaration", "generator_function_declaration"):
        return "function"
    return "class" if value.type in _CLASSES else "variable"


def _enumerable_define(src: Source, stmt: Node, aliases: set[str], helpers: set[str]) -> tuple[str, Node] | None:
    call = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_child_count else None
    if call is None or call.type != "call_expression":
        return None
    fn, args = src.field_text(call, "function"), call.child_by_field_name("arguments")
    if args is None or args.named_child_count < 2 or src.text(args.named_children[0]) not in aliases:
        return None
    key = args.named_children[1]
    if key.type != "string":
        return None
    if fn in helpers or (fn == "Object.defineProperty" and "enumerable: true" in " ".join(src.text(args).split())):
        return unquote(src.text(key)), call
    return None


def _define_signature(src: Source, call: Node) -> str:
    """`defineGetter(req, 'host', function host()` — the call up to the getter's body, or to the descriptor."""
    args = call.child_by_field_name("arguments")
    third = args.named_children[2] if args is not None and args.named_child_count > 2 else None
    if third is None:
        return src.signature(call)
    if third.type in FUNCTIONS:
        return src.signature(call, third.child_by_field_name("body"), "{")
    return src.signature(call, third, "{,")


def _plain_object(src: Source, value: Node | None) -> bool:
    """Whether a value is an object Node would not call: a literal, `Object.create(…)`, `new X(…)`, `[…]`, a
    string, number, template or regex, an operator's result. A call's result or an unknown name may be a function
    (lodash's `var baseEach = createBaseEach(baseForOwn); module.exports = baseEach`): "export=" it stays."""
    if value is None:
        return False
    if value.type == "binary_expression" and src.field_text(value, "operator") in ("||", "??"):
        # either side: `nativeIsBuffer || stubFalse` (lodash's isBuffer) may be callable; an `a && b` guard chain
        # (`typeof global == 'object' && global && global.Object === Object && global`) stays a value
        return all(_plain_object(src, _unparen(value.child_by_field_name(side))) for side in ("left", "right"))
    if value.type in ("object", "new_expression", "array", "string", "number", "template_string", "regex",
                      "binary_expression", "unary_expression", "true", "false", "null", "undefined"):
        return True  # `a + b`, `typeof x`: values, not functions
    return value.type == "call_expression" and src.field_text(value, "function") == "Object.create"


def _wrapped_require(src: Source, value: Node | None, local: dict[str, Node]) -> str | None:
    """`convert(require('../array'))`: the specifier of the one required module a call is given, else None."""
    args = value.child_by_field_name("arguments") if value is not None and value.type == "call_expression" else None
    if args is None or args.named_child_count != 1 or require_spec(src, value) is not None:
        return None
    arg = args.named_children[0]
    return require_spec(src, local.get(src.text(arg), arg) if arg.type == "identifier" else arg)


def exports(src: Source, statements: list[Node], declare: Callable[[Node, Node], list[Export]],
            returned: tuple[Node, Node] | None = None, depth: int = 0) -> tuple[list[Export], str | None]:
    """The CommonJS exports of a file, and the specifier it re-exports whole (`module.exports = require(…)`).

    `declare(decl, span)` is the ES declaration reader (a class's members come from it). `returned` (the return
    statement and its value) reads a function's body instead, for what its call returns: `module.exports = _` with
    `var _ = runInContext()` exports what runInContext's `return lodash;` hands back, `lodash.chunk = chunk` …"""
    statements = _body(src, statements)
    local = _locals(src, statements)
    assigns = _assignments(src, statements, _guards(src, local))
    aliases = {"exports", _ROOT}
    root: tuple[Node, Node | None] | None = returned
    if returned is not None and returned[1].type == "identifier":
        aliases.add(src.text(returned[1]))
    for stmt, targets, value in assigns:
        if _ROOT in targets and returned is None:
            root = (stmt, value)
            aliases.update(t for t in targets if t.isidentifier())
            if value is not None and value.type == "identifier":
                aliases.add(src.text(value))
    out: list[Export] = []
    reexport = None
    callable_root: Node | None = None  # the function or class module.exports is
    if root is not None:
        stmt, value = root
        target = local.get(src.text(value), value) if value is not None and value.type == "identifier" else value
        target = _unparen(target)
        reexport = require_spec(src, target)  # module.exports = require("./m"), or a name bound to that
        fn = _invoked(src, target, local) if depth < 3 else None
        result = _returned(src, fn) if fn is not None else None
        if result is not None:  # the call of a function written here: what it returns, read in its body
            body, ret, ret_value = result
            out += exports(src, body, declare, (ret, ret_value), depth + 1)[0]
        elif target is not None and target.type == "object":  # module.exports = {…}, or a name bound to one
            for p in target.named_children:
                key = (p.child_by_field_name("key") or p.child_by_field_name("name")) if p.type in (
                    "pair", "method_definition") else p
                if p.type in ("pair", "shorthand_property_identifier", "method_definition") and key is not None:
                    kind = "function" if p.type == "method_definition" or _kind(
                        p.child_by_field_name("value")) == "function" else "variable"
                    out.append(export(unquote(src.text(key)), kind, p, " ".join(src.text(p).split())[:120]))
        elif target is not None and _kind(target) != "variable":
            callable_root = target
            members = declare(target, stmt)[0].members if target.type in _CLASSES else []
            sig = src.signature(target, target.child_by_field_name("body"), "{")
            doc = (_doc(src, target) if target is not value else None) or _doc(src, stmt)  # the declaration's first
            out.append(export("export=", _kind(target), stmt, f"module.exports = {sig}"[:200], doc, members=members))
        elif reexport is None and (wrapped := _wrapped_require(src, target, local)) is not None:
            reexport = wrapped  # module.exports = convert(require('../array')): that module, handed on
        elif reexport is None and value is not None and not _plain_object(src, target):
            out.append(export("export=", "other", stmt, f"module.exports = {src.signature(value)}"[:200]))
    prototype_members = _prototype_members(src, statements, local)
    helpers = {name for name, node in local.items() if _kind(node) == "function"
               and "defineProperty(" in src.text(node) and "enumerable: true" in " ".join(src.text(node).split())}
    members: list[Export] = []  # of module.exports itself, when it is a constructor
    if callable_root is not None:
        for a in sorted(aliases):
            members += prototype_members.get(a, [])
    position = {e.name: i for i, e in enumerate(out)}
    selves: set[str] = set()  # names whose value is module.exports itself: `(module.exports = _)._ = _`
    for stmt, targets, value in assigns:
        for t in targets:
            obj, _, prop = t.rpartition(".")
            if not prop.isidentifier() or prop == "prototype" or obj not in aliases:  # Fn.prototype: not enumerable
                continue
            body = value.child_by_field_name("body") if value is not None and value.type in FUNCTIONS else None
            sig = src.signature(stmt, body, "=") if body is not None else f"{t} = …"
            bound = src.text(value) if value is not None and value.type == "identifier" else ""
            if bound in aliases:
                selves.add(prop)
            own = prototype_members.get(bound, [])  # exports.AsyncSubject = AsyncSubject (an ES5 class)
            kind = "class" if own else _kind(local.get(bound, value))
            e = export(prop, kind, stmt, sig, _doc(src, stmt), members=_unique_members(own))
            # the last assignment is what Node sees (tsc first writes `exports.X = void 0;`)
            at = position.get(prop)
            if at is None:
                position[prop] = len(out)
                out.append(e)
            elif value is not None and not (value.type == "unary_expression" and src.text(value) == "void 0"):
                out[at] = e
    for stmt in statements:
        found = _enumerable_define(src, stmt, aliases, helpers)
        if found:
            out.append(export(found[0], "property", stmt, _define_signature(src, found[1]), _doc(src, stmt)))
    if members:
        for i, e in enumerate(out):
            if e.name == "export=":
                out[i] = e.model_copy(update={"members": _unique_members([*e.members, *members])})
    own = next((e.members for e in out if e.name == "export="), [])
    if own and selves:
        out = [e.model_copy(update={"members": own}) if e.name in selves and not e.members else e for e in out]
    return out, reexport


def _unique_members(members: list[Export]) -> list[Export]:
    seen: set[str] = set()
    return [m for m in members if not (m.name in seen or seen.add(m.name))]


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
            parent.child_by_field_name("left")) in (_ROOT, "exports"):
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
