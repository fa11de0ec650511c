"""JavaScript/TypeScript import resolution beyond relative paths (issue 19): tsconfig `paths`/`baseUrl` (JSONC,
through `extends`), package.json `imports` and the package's own `exports`, declaration files reading `./x.js` as
x.d.ts; anything resolving outside the project root stays an external import and is never read."""

from __future__ import annotations

from pathlib import Path

from adapters.code_parser.treesitter import TreeSitterCodeParser


def _resolved(tmp_path: Path, files: dict[str, str], importer: str) -> dict[str, str | None]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    merged = TreeSitterCodeParser(workers=1).scan(tmp_path)
    sk = merged.file(importer)
    assert sk is not None
    return {i.specifier: i.resolved for i in sk.imports}


def test_tsconfig_paths_and_base_url_through_extends(tmp_path: Path) -> None:
    found = _resolved(tmp_path, {
        "tsconfig.base.json": '{\n  // shared\n  "compilerOptions": {"baseUrl": ".", "paths": {\n'
                              '    "@app/*": ["src/app/*", "src/fallback/*"],\n    "@util": ["src/util/index.ts"],\n'
                              '    "@out/*": ["../elsewhere/*"],\n  },},\n}\n',
        "tsconfig.json": '{"extends": "./tsconfig.base", "include": ["src"]}',
        "src/app/core.ts": "export const core = 1;\n",
        "src/fallback/late.ts": "export const late = 1;\n",
        "src/util/index.ts": "export const util = 1;\n",
        "src/lib/plain.ts": "export const plain = 1;\n",
        "src/main.ts": ("import { core } from '@app/core';\nimport { late } from '@app/late';\n"
                        "import { util } from '@util';\nimport { plain } from 'src/lib/plain';\n"
                        "import { away } from '@out/away';\nimport express from 'express';\n"),
    }, "src/main.ts")
    assert found == {"@app/core": "src/app/core.ts", "@app/late": "src/fallback/late.ts",
                     "@util": "src/util/index.ts", "src/lib/plain": "src/lib/plain.ts",
                     "@out/away": None, "express": None}


def test_package_json_imports_and_own_exports(tmp_path: Path) -> None:
    found = _resolved(tmp_path, {
        "package.json": ('{"name": "@acme/kit", "type": "module",\n'
                         ' "exports": {".": {"types": "./types/index.d.ts", "import": "./lib/index.js"},\n'
                         '             "./feature/*": "./lib/features/*.js", "./outside": "../../etc/x.js"},\n'
                         ' "imports": {"#internal/*": {"node": "./lib/internal/*.js"}}}'),
        "lib/index.js": "export const kit = 1;\n",
        "lib/features/a.js": "export const a = 1;\n",
        "lib/internal/b.js": "export const b = 1;\n",
        "lib/main.js": ("import { kit } from '@acme/kit';\nimport { a } from '@acme/kit/feature/a';\n"
                        "import { b } from '#internal/b';\nimport x from '@acme/kit/outside';\n"
                        "import other from '@acme/other';\nimport fs from 'node:fs';\n"),
    }, "lib/main.js")
    assert found == {"@acme/kit": "lib/index.js", "@acme/kit/feature/a": "lib/features/a.js",
                     "#internal/b": "lib/internal/b.js", "@acme/kit/outside": None, "@acme/other": None,
                     "node:fs": None}


def test_declaration_files_read_the_declarations_of_a_js_specifier(tmp_path: Path) -> None:
    files = {"source/types.js": "export {};\n", "source/types.d.ts": "export type T = 1;\n",
             "source/create.d.ts": "import type { T } from './types.js';\nexport declare const c: T;\n",
             "source/create.js": "import './types.js';\nexport const c = 1;\n",
             "source/up.js": "import '../../outside.js';\n"}
    assert _resolved(tmp_path, files, "source/create.d.ts") == {"./types.js": "source/types.d.ts"}
    assert _resolved(tmp_path, files, "source/create.js") == {"./types.js": "source/types.js"}
    assert _resolved(tmp_path, files, "source/up.js") == {"../../outside.js": None}


def test_another_package_of_a_monorepo_by_its_name(tmp_path: Path) -> None:
    found = _resolved(tmp_path, {
        "package.json": '{"name": "root", "private": true, "workspaces": ["packages/*"]}',
        "packages/ui/package.json": '{"name": "@acme/ui", "exports": {".": "./src/index.ts", "./*": "./src/*.ts"}}',
        "packages/ui/src/index.ts": "export const ui = 1;\n",
        "packages/ui/src/button.ts": "export const button = 1;\n",
        "packages/core/package.json": '{"name": "core", "main": "lib/main.js"}',
        "packages/core/lib/main.js": "module.exports = {};\n",
        "packages/core/lib/extra.js": "module.exports = {};\n",
        "node_modules/dep/package.json": '{"name": "dep", "main": "index.js"}',
        "node_modules/dep/index.js": "module.exports = {};\n",
        "packages/app/package.json": '{"name": "app"}',
        "packages/app/src/app.ts": ("import { ui } from '@acme/ui';\nimport { button } from '@acme/ui/button';\n"
                                    "import core from 'core';\nimport extra from 'core/lib/extra';\n"
                                    "import dep from 'dep';\n"),
    }, "packages/app/src/app.ts")
    assert found == {"@acme/ui": "packages/ui/src/index.ts", "@acme/ui/button": "packages/ui/src/button.ts",
                     "core": "packages/core/lib/main.js", "core/lib/extra": "packages/core/lib/extra.js",
                     "dep": None}  # an installed package is external, never read
