"""JavaScript, TypeScript and TSX: what `import … from "./file"` can bind.

Exported: `export` declarations (function, class, interface, type, enum, namespace, const/let/var — one
export per declarator; `declare` forms and overloads count once), `export default …` (name "default"),
`export { a as b }` (name b, kind of the local declaration), re-exports `export { x } from "./m"` and
`export * as ns from "./m"` (`export * from "./m"` adds no names of its own: it is recorded as an import
with names ["*"]), `export =` (name "export="), `export import A = …`, and, outside TypeScript files, CommonJS
(commonjs.py: module.exports and its aliases, prototype members, re-exports). Members: public methods, accessors
and fields of classes (not `private`/`protected`/`#private`), the properties and methods of interfaces, enum
members, and the exports of namespaces. Docs are the `/** … */` comment above. Imports: `import … from`,
side-effect imports, re-exports, `import x = require()`, and every `require("…")` and dynamic `import("…")` call.

Modules: modules.py (ES module syntax) and members.py (class, interface and enum members), commonjs.py and
module_body.py (CommonJS exports), require.py (`require()` and `import()` calls), resolve.py (specifiers → project
files, as Node and tsc resolve them).
"""

from __future__ import annotations

from adapters.code_parser.languages.ecmascript import commonjs, require
from adapters.code_parser.languages.ecmascript.modules import (
    TS_SUFFIXES,
    declarations,
    module_exports,
    statements,
    unique,
)
from adapters.code_parser.languages.ecmascript.resolve import resolve_import
from adapters.code_parser.source import Node, Source
from domain.knowledge.skeleton import Export, Import

__all__ = ["extract", "resolve_import"]


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports, imports = module_exports(src, root)
    if b"require(" in src.data or b"import(" in src.data:
        imports = sorted([*imports, *require.imports(src, root)], key=lambda i: i.line or 0)
    if not src.path.endswith(TS_SUFFIXES):  # TypeScript does not read CommonJS assignments as exports
        cjs, whole = commonjs.exports(src, statements(root), lambda decl, span: declarations(src, decl, span))
        exports = unique([*exports, *cjs])
        if whole:  # `var m = require("./m"); module.exports = m` hands m on whole, as `export * from`
            imports = [i.model_copy(update={"names": ["*"]}) if i.specifier == whole else i for i in imports]
    return exports, imports
