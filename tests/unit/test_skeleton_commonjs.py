"""CommonJS idioms of real packages (issue 19, express 4/5): what Node's `Object.keys(require(file))` lists and
the files its loader resolves, read from the text. Checked against Node itself on the real packages in
tests/realcode/test_javascript.py; these are the idioms one by one."""

from __future__ import annotations

from pathlib import Path

from adapters.code_parser.treesitter import TreeSitterCodeParser


def _scan(tmp_path: Path, files: dict[str, str]) -> dict:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return {f.path: f for f in TreeSitterCodeParser(workers=1).scan(tmp_path).files}


def test_methods_on_an_object_later_assigned_to_module_exports_are_exports(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {"lib/application.js": (
        "var methods = require('./utils').methods;\n"
        "var app = exports = module.exports = {};\n"
        "/**\n * Initialize the server.\n */\n\n"
        "app.init = function init() {};\n"
        "/** Mount middleware. */\n"
        "app.use = function use(fn) {\n  return this;\n};\n"
        "app.get = app.header = function get(name) {};\n"
        "methods.forEach(function (method) { app[method] = function () {}; });\n"
        "defineGetter(app, 'protocol', function () { return 'http'; });\n"
        "function defineGetter(obj, name, getter) {\n"
        "  Object.defineProperty(obj, name, { configurable: true, enumerable: true, get: getter });\n}\n"),
        "lib/utils.js": "exports.methods = ['get'];\n"})
    app = sk["lib/application.js"]
    by_name = {e.name: e for e in app.exports}
    assert set(by_name) == {"init", "use", "get", "header", "protocol"}
    assert by_name["use"].kind == "function"
    assert by_name["use"].signature == "app.use = function use(fn)"
    assert (by_name["use"].doc, by_name["init"].doc, by_name["get"].doc) == (
        "Mount middleware.", "Initialize the server.", None)
    assert by_name["protocol"].kind == "property"
    assert by_name["protocol"].signature == "defineGetter(app, 'protocol', function ()"  # not the getter's body
    (imp,) = app.imports
    assert (imp.specifier, imp.names, imp.resolved) == ("./utils", ["methods"], "lib/utils.js")
    assert [e.name for e in sk["lib/utils.js"].exports] == ["methods"]


def test_exports_equals_module_exports_equals_a_function_and_its_static_properties(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {"lib/express.js": (
        "var proto = require('./application');\n"
        "exports = module.exports = createApplication;\n"
        "function createApplication(options) { return proto; }\n"
        "exports.application = proto;\n"
        "exports.json = bodyParser.json;\n"),
        "lib/application.js": "module.exports = {};\n"})
    express = sk["lib/express.js"]
    by_name = {e.name: e for e in express.exports}
    assert set(by_name) == {"export=", "application", "json"}
    assert by_name["export="].kind == "function"
    assert "createApplication(options)" in by_name["export="].signature
    assert [i.resolved for i in express.imports] == ["lib/application.js"]


def test_module_exports_require_is_a_whole_reexport_with_an_edge(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {"index.js": "'use strict';\n\nmodule.exports = require('./lib/express');\n",
                          "lib/express.js": "module.exports.x = 1;\n"})
    index = sk["index.js"]
    assert index.exports == []
    (imp,) = index.imports
    assert (imp.names, imp.resolved) == (["*"], "lib/express.js")
    sk = _scan(tmp_path, {"main.js": "var lib = require('./lib/express');\nmodule.exports = lib;\n"})
    assert sk["main.js"].exports == []
    assert [(i.names, i.resolved) for i in sk["main.js"].imports] == [(["*"], "lib/express.js")]


def test_prototype_assignments_are_members_of_the_exported_constructor(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {"route.js": (
        "module.exports = Route;\n"
        "function Route(path) { this.path = path; }\n"
        "Route.prototype.dispatch = function dispatch(req, res, done) {};\n"
        "Route.prototype._options = function _options() {};\n"
        "Route.prototype[method] = function () {};\n"
        "function helper() { var later = require('./layer'); }\n"),
        "layer.js": "class Layer { match(path) {} get name() { return ''; } #secret() {} }\nmodule.exports = Layer;\n"})
    (route,) = sk["route.js"].exports
    assert (route.name, route.kind) == ("export=", "function")
    assert [m.name for m in route.members] == ["dispatch", "_options"]
    assert [m.kind for m in route.members] == ["method", "method"]
    assert [i.resolved for i in sk["route.js"].imports] == ["layer.js"]  # a require in a function body too
    (layer,) = sk["layer.js"].exports
    assert (layer.name, layer.kind) == ("export=", "class")
    assert {m.name for m in layer.members} == {"match", "name"}


def test_commonjs_in_cjs_files_and_object_literal_exports(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {"util.cjs": "const { a } = require('./a.cjs');\nmodule.exports = { a, b() {}, c: 1 };\n",
                          "a.cjs": "exports.a = function a() {};\n"})
    util = sk["util.cjs"]
    assert {e.name: e.kind for e in util.exports} == {"a": "variable", "b": "function", "c": "variable"}
    assert [(i.names, i.resolved) for i in util.imports] == [(["a"], "a.cjs")]
    assert [(e.name, e.kind) for e in sk["a.cjs"].exports] == [("a", "function")]


def test_typescript_files_do_not_read_commonjs_assignments_as_exports(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {"m.ts": "import x = require('./n');\nexports.y = 1;\nexport const z = 2;\n",
                          "n.ts": "export = 1;\n"})
    assert [e.name for e in sk["m.ts"].exports] == ["z"]
    assert [(i.names, i.resolved) for i in sk["m.ts"].imports] == [(["x"], "n.ts")]


def test_a_name_bound_to_a_call_or_an_object_literal_then_exported(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {
        "_baseEach.js": "var baseEach = createBaseEach(baseForOwn);\nmodule.exports = baseEach;\n",
        "templateSettings.js": "var templateSettings = {\n  'escape': reEscape,\n  variable: ''\n};\n"
                               "module.exports = templateSettings;\n",
        "request.js": "var req = Object.create(http.IncomingMessage.prototype);\nmodule.exports = req;\n"
                      "req.get = function header(name) {};\n",
        "_reEscape.js": "var reEscape = /<%-([\\s\\S]+?)%>/g;\nmodule.exports = reEscape;\n"})
    assert [(e.name, e.kind) for e in sk["_baseEach.js"].exports] == [("export=", "other")]  # may be callable
    assert [e.name for e in sk["templateSettings.js"].exports] == ["escape", "variable"]
    assert [e.name for e in sk["request.js"].exports] == ["get"]  # an object, not callable
    assert sk["_reEscape.js"].exports == []


def test_dynamic_imports_in_code_and_in_types_are_imports(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {
        "options.d.ts": "export declare class Options { http2: false | import('./http2.js').Agent; }\n",
        "http2.d.ts": "export declare class Agent {}\n", "http2.js": "export class Agent {}\n",
        "main.mjs": "const { Agent } = await import('./http2.js');\nconst later = () => import('./lazy.mjs');\n",
        "lazy.mjs": "export default 1;\n"})
    assert [(i.names, i.resolved) for i in sk["options.d.ts"].imports] == [(["Agent"], "http2.d.ts")]
    assert [(i.names, i.resolved) for i in sk["main.mjs"].imports] == [(["Agent"], "http2.js"), ([], "lazy.mjs")]


def test_es5_classes_as_typescript_compiles_them_to_commonjs(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {"BehaviorSubject.js": (
        '"use strict";\n'
        'Object.defineProperty(exports, "__esModule", { value: true });\n'
        "exports.BehaviorSubject = void 0;\n"
        'var Subject_1 = require("./Subject");\n'
        "var BehaviorSubject = /** @class */ (function (_super) {\n"
        "    __extends(BehaviorSubject, _super);\n"
        "    function BehaviorSubject(_value) { return _super.call(this) || this; }\n"
        '    Object.defineProperty(BehaviorSubject.prototype, "value", {\n'
        "        get: function () { return this.getValue(); }, enumerable: false, configurable: true\n    });\n"
        "    BehaviorSubject.prototype.getValue = function () { return this._value; };\n"
        "    return BehaviorSubject;\n}(Subject_1.Subject));\n"
        "exports.BehaviorSubject = BehaviorSubject;\n"
        'Object.defineProperty(exports, "Subject", { enumerable: true,\n'
        "    get: function () { return Subject_1.Subject; } });\n"),
        "Subject.js": "exports.Subject = void 0;\n"})
    by_name = {e.name: e for e in sk["BehaviorSubject.js"].exports}
    assert set(by_name) == {"BehaviorSubject", "Subject"}  # __esModule is not enumerable
    subject = by_name["BehaviorSubject"]
    assert subject.kind == "class" and subject.signature == "exports.BehaviorSubject = …"
    assert {m.name: m.kind for m in subject.members} == {"value": "property", "getValue": "method"}


def test_an_immediately_invoked_wrapper_is_the_module_body_and_environment_guards_count(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {"core.js": (
        ";(function() {\n"
        "  var freeExports = typeof exports == 'object' && exports && !exports.nodeType && exports;\n"
        "  var freeModule = freeExports && typeof module == 'object' && module && !module.nodeType && module;\n"
        "  function lodash(value) { return value; }\n"
        "  function chunk(array, size) { return []; }\n"
        "  lodash.chunk = chunk;\n"
        "  lodash.VERSION = '1.0';\n"
        "  lodash.prototype.value = function wrapperValue() {};\n"
        "  lodash.prototype.constructor = lodash;\n"
        "  if (typeof define == 'function' && define.amd) {\n"
        "    root._ = lodash;\n"
        "  } else if (freeModule) {\n"
        "    (freeModule.exports = lodash)._ = lodash;\n"
        "    freeExports._ = lodash;\n"
        "  }\n"
        "}.call(this));\n"),
        "bang.js": "!function () {\n  module.exports = { a: 1 };\n}();\n",
        "plain.js": "(function () {\n  exports.b = function b() {};\n})();\n"})
    by_name = {e.name: e for e in sk["core.js"].exports}
    assert set(by_name) == {"export=", "chunk", "VERSION", "_"}  # root._ is a global, not the module's
    assert (by_name["export="].kind, by_name["chunk"].kind) == ("function", "function")
    assert [m.name for m in by_name["export="].members] == ["value"]  # constructor is Node's own default
    assert [m.name for m in by_name["_"].members] == ["value"]  # `_` is module.exports itself
    assert [e.name for e in sk["bang.js"].exports] == ["a"]
    assert [(e.name, e.kind) for e in sk["plain.js"].exports] == [("b", "function")]


def test_the_result_of_calling_a_local_function_exports_what_it_returns(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {
        "lodash.js": (
            "var runInContext = (function runInContext(context) {\n"
            "  function lodash(value) {}\n"
            "  function helper() { return 1; }\n"
            "  lodash.chunk = function chunk(array) {};\n"
            "  lodash.runInContext = runInContext;\n"
            "  lodash.prototype.at = function wrapperAt() {};\n"
            "  return lodash;\n"
            "});\n"
            "var _ = runInContext();\n"
            "module.exports = _;\n"),
        "api.js": "function make() {\n  var out = {};\n  out.get = function get() {};\n  return out;\n}\n"
                  "module.exports = make();\n",
        "literal.js": "module.exports = (function () { return { a: 1, b: function () {} }; }());\n",
        "instance.js": "function build() { return new Map(); }\nmodule.exports = build();\n",
        "opaque.js": "var made = createThing(1);\nmodule.exports = made;\n"})
    by_name = {e.name: e for e in sk["lodash.js"].exports}
    assert set(by_name) == {"export=", "chunk", "runInContext"}
    assert by_name["export="].kind == "function"
    assert [m.name for m in by_name["export="].members] == ["at"]
    assert [e.name for e in sk["api.js"].exports] == ["get"]
    assert {e.name: e.kind for e in sk["literal.js"].exports} == {"a": "variable", "b": "function"}
    assert sk["instance.js"].exports == []  # an object Node would not call, with no keys
    assert [(e.name, e.kind) for e in sk["opaque.js"].exports] == [("export=", "other")]  # not written here


def test_a_call_over_one_required_module_hands_that_module_on(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {
        "fp/array.js": "var convert = require('./convert');\nmodule.exports = convert(require('../array'));\n",
        "fp/convert.js": "module.exports = function convert(lib) { return lib; };\n",
        "array.js": "module.exports = { chunk: require('./chunk') };\n", "chunk.js": "module.exports = 1;\n",
        "frozen.js": "var lib = require('./array');\nmodule.exports = Object.freeze(lib);\n",
        "two.js": "module.exports = convert('chunk', require('./chunk'));\n"})
    fp = sk["fp/array.js"]
    assert fp.exports == []  # neither names of its own nor a callable export=: the category module, handed on
    assert [(i.specifier, i.names, i.resolved) for i in fp.imports] == [
        ("./convert", ["convert"], "fp/convert.js"), ("../array", ["*"], "array.js")]
    assert sk["frozen.js"].exports == []
    assert [(i.names, i.resolved) for i in sk["frozen.js"].imports] == [(["*"], "array.js")]
    # two arguments: what the call makes of them is not the module itself
    assert [(e.name, e.kind) for e in sk["two.js"].exports] == [("export=", "other")]
    assert [i.names for i in sk["two.js"].imports] == [[]]


def test_either_side_of_an_or_may_be_the_callable_export(tmp_path: Path) -> None:
    sk = _scan(tmp_path, {
        "isBuffer.js": "var stubFalse = require('./stubFalse');\nvar nativeIsBuffer = Buffer ? Buffer.isBuffer : "
                       "undefined;\nvar isBuffer = nativeIsBuffer || stubFalse;\nmodule.exports = isBuffer;\n",
        "stubFalse.js": "function stubFalse() { return false; }\nmodule.exports = stubFalse;\n",
        "freeGlobal.js": "var freeGlobal = typeof global == 'object' && global && global.Object === Object && "
                         "global;\nmodule.exports = freeGlobal;\n"})
    assert [(e.name, e.kind) for e in sk["isBuffer.js"].exports] == [("export=", "other")]
    assert sk["freeGlobal.js"].exports == []  # a guard chain's value: the global object
