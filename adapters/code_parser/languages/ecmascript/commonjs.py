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
"""

from __future__ import annotations

from collections.abc import Callable

from adapters.code_parser.languages.ecmascript.module_body import (
    FUNCTIONS,
    assignments,
    chain,
    class_iife,
    guards,
    invoked,
    last_return,
    module_body,
    top_level,
    unparen,
)
from adapters.code_parser.languages.ecmascript.require import require_spec
from adapters.code_parser.source import Node, Source, clean_comment, export, unquote
from domain.knowledge.skeleton import Export

_CLASSES = ("class", "class_declaration")
_ROOT = "module.exports"


def _prototype_members(src: Source, statements: list[Node], local: dict[str, Node]) -> dict[str, list[Export]]:
    """Constructor name → its members: `X.prototype.m = …` and `Object.defineProperty(X.prototype, "m", …)`, at
    top level and inside the ES5 class IIFE a name is bound to."""
    blocks = [statements] + [list(body.named_children) for value in local.values()
                             if (body := class_iife(value)) is not None]
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
            targets, value = chain(expr)
            for t in targets:
                owner, _, prop = src.text(t).rpartition(".prototype.")
                if owner.isidentifier() and prop.isidentifier() and prop != "constructor":  # Node's own default
                    body = value.child_by_field_name("body") if value is not None and value.type in FUNCTIONS else None
                    sig = src.signature(stmt, body, "=") if body is not None else f"{src.text(t)} = …"
                    kind = "method" if _kind(value) == "function" else "field"
                    out.setdefault(owner, []).append(export(prop, kind, stmt, sig, _doc(src, stmt)))
    return out


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
        return all(_plain_object(src, unparen(value.child_by_field_name(side))) for side in ("left", "right"))
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
    statements = module_body(src, statements)
    local = top_level(src, statements)
    assigns = assignments(src, statements, guards(src, local))
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
        target = unparen(target)
        reexport = require_spec(src, target)  # module.exports = require("./m"), or a name bound to that
        fn = invoked(src, target, local) if depth < 3 else None
        result = last_return(src, fn) if fn is not None else None
        if result is not None:  # the call of a function written here: what it returns, read in its body
            fn_statements, ret, ret_value = result
            out += exports(src, fn_statements, declare, (ret, ret_value), depth + 1)[0]
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
            class_members = declare(target, stmt)[0].members if target.type in _CLASSES else []
            sig = src.signature(target, target.child_by_field_name("body"), "{")
            doc = (_doc(src, target) if target is not value else None) or _doc(src, stmt)  # the declaration's first
            out.append(export("export=", _kind(target), stmt, f"module.exports = {sig}"[:200], doc,
                              members=class_members))
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
    """The first member of each name, in the order they came (a later one of the same name is dropped)."""
    first: dict[str, Export] = {}
    for m in members:
        first.setdefault(m.name, m)
    return list(first.values())
