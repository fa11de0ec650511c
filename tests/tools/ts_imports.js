// What the TypeScript compiler says each file imports (issue 19): every module specifier of the file
// (ts.preProcessFile: import/export … from, import(), require(), /// <reference path>) resolved by
// ts.resolveModuleName as the compiler would (NodeNext resolution, so `./x.js` naming x.ts and package.json
// `exports` count; a JavaScript file's import is the .js file it loads at run time, not the .d.ts the compiler
// reads its types from), kept when the file resolved lies under the package root and outside node_modules.
// Run: node ts_imports.js <typescript dir> <package root> files…  → JSON {path: [resolved paths]}, paths relative.
"use strict";
const ts = require(process.argv[2]);
const fs = require("fs");
const path = require("path");

const root = path.resolve(process.argv[3]);
const rel = (f) => path.relative(root, f).split(path.sep).join("/");
const options = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
  allowJs: true, resolveJsonModule: false };
const host = ts.sys;
const result = {};
for (const f of process.argv.slice(4)) {
  const file = path.resolve(root, f);
  const info = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true);
  const found = new Set();
  for (const ref of info.importedFiles) {
    const r = ts.resolveModuleName(ref.fileName, file, options, host).resolvedModule;
    if (!r) continue;
    let target = path.resolve(r.resolvedFileName);
    const runtime = target.replace(/\.d\.([mc]?)ts$/, ".$1js");
    if (/\.[mc]?jsx?$/.test(file) && runtime !== target && fs.existsSync(runtime)) target = runtime;
    const t = rel(target);
    if (!t.startsWith("..") && !t.split("/").includes("node_modules") && target !== file) found.add(t);
  }
  result[rel(file)] = [...found].sort();
}
process.stdout.write(JSON.stringify(result));
