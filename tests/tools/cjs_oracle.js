// What Node itself says of CommonJS files (issue 19): for each file given, the names it exports and the files its
// require() calls resolve to. Run: node cjs_oracle.js <typescript dir> <package root> files…  → JSON
//   {path: {exports: [names], members: {name: [names]}, homes: {name: path}, reexports: path | null,
//    edges: [paths], spelled: [names], spelledMembers: [owner.name], constructors: {name: function name}}}
// - exports: Object.keys(require(file)) (own enumerable keys, as a consumer sees them) as soon as the file has
//   loaded, plus "export=" when module.exports is itself callable (module.exports = function …);
// - members: for each export that is a constructor (a function whose prototype has own properties besides
//   `constructor`; "export=" for module.exports itself), those property names (Route.prototype.dispatch = …,
//   a class's methods and accessors);
// - reexports: the package file whose module.exports object this file hands on as its own
//   (`module.exports = require('./lib/express')`): such a file's names are that file's, as `export * from`;
// - edges: every require() a file makes while it loads, resolved by Node's loader (Module._resolveFilename,
//   called from a Module.prototype.require hook so a cached module still counts for each requiring file),
//   kept when the resolved file lies under the package root (others are external packages or builtins).
// - spelled: the property names the file's syntax defines, as the TypeScript compiler's parser reads it: targets
//   `x.name = …`, keys of object literals that are not call arguments (a defineProperty descriptor's `get:` is
//   not a name), class members, the string second argument of a call (`defineProperty(req, "ip", …)`). A name
//   Node lists that the file never spells so was made by a computed key (`app[method] = …` in a loop).
// - spelledMembers: where the file spells a member: "X.name" for `X.prototype.name = …`, `X.prototype = {name: …}`
//   and `defineProperty(X.prototype, "name", …)` (a member of the constructor named X: `constructors` gives each
//   exported constructor's own name), "*.name" for a class member; a plain `x.name = …`, another object literal's
//   key or call's string argument spell a static property or a value, no member. lodash's `lodash.chunk = chunk` spells chunk as a static,
//   `LazyWrapper.prototype.compact = …` a member of LazyWrapper; lodash's prototype gets both from
//   `mixin(lodash, lodash)` at run time (`object.prototype[methodName] = …`), names no reader can list.
// Paths are relative to the package root. Nothing here reaches the network: the packages are plain libraries.
"use strict";
const Module = require("module");
const path = require("path");

const ts = require(path.resolve(process.argv[2]));
const fs = require("fs");
// Node keys its module cache by real paths: a corpus reached through a symlink is read where it really is
const root = fs.realpathSync(path.resolve(process.argv[3]));
const files = process.argv.slice(4).map((f) => fs.realpathSync(path.resolve(root, f)));

function spelled(file) {
  const sf = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const names = new Set();
  const members = new Set();
  const nameOf = (n) => n && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isPrivateIdentifier(n)) ? n.text : null;
  // `X.prototype` → "X" (the constructor whose members it holds; "*" when X is no plain name), else null
  const owner = (n) => {
    if (!ts.isPropertyAccessExpression(n) || n.name.text !== "prototype") return null;
    const ctor = n.expression;
    return ts.isIdentifier(ctor) ? ctor.text : ts.isPropertyAccessExpression(ctor) ? ctor.name.text : "*";
  };
  const visit = (node) => {
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
        ts.isPropertyAccessExpression(node.left)) {
      names.add(node.left.name.text);
      const proto = owner(node.left.expression);
      if (proto) members.add(`${proto}.${node.left.name.text}`);
    }
    if (ts.isObjectLiteralExpression(node) && !(node.parent && ts.isCallExpression(node.parent))) {
      const proto = ts.isBinaryExpression(node.parent) && node.parent.right === node ? owner(node.parent.left) : null;
      for (const p of node.properties) {
        const n = nameOf(p.name);
        if (n) names.add(n);
        if (n && proto) members.add(`${proto}.${n}`);  // X.prototype = {n: …}
      }
    }
    if (ts.isClassLike(node)) {
      for (const m of node.members) { const n = nameOf(m.name); if (n) { names.add(n); members.add(`*.${n}`); } }
    }
    if (ts.isCallExpression(node) && node.arguments.length >= 2 && ts.isStringLiteral(node.arguments[1])) {
      names.add(node.arguments[1].text);
      const proto = owner(node.arguments[0]);  // defineProperty(X.prototype, "n", …)
      if (proto) members.add(`${proto}.${node.arguments[1].text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { names: [...names].sort(), members: [...members].sort() };
}
const rel = (f) => path.relative(root, f).split(path.sep).join("/");
const inside = (f) => f.startsWith(root + path.sep) && !rel(f).split("/").includes("node_modules");

// What a module exports, read as soon as it has loaded: other modules may add to it later (lodash's fp/ files
// set `placeholder` on the functions they convert), which is their doing, not the file's.
const wanted = new Set(files);
const snapshots = new Map();  // file → {names, values: name → value}
function snapshot(f) {
  const m = require.cache[f];
  if (!m || snapshots.has(f) || !wanted.has(f)) return;
  const names = m.exports == null ? [] : Object.keys(Object(m.exports));  // lodash's _nodeUtil.js may export undefined
  if (typeof m.exports === "function") names.push("export=");
  const values = {};
  for (const n of names) {
    const d = n === "export=" ? { value: m.exports } : Object.getOwnPropertyDescriptor(Object(m.exports), n);
    values[n] = d && "value" in d ? d.value : undefined;  // a getter is never called
  }
  const members = {};
  for (const n of names) {
    const proto = typeof values[n] === "function" && values[n].prototype;
    const own = proto ? Object.getOwnPropertyNames(proto).filter((k) => k !== "constructor") : [];
    if (own.length) members[n] = own.sort();
  }
  snapshots.set(f, { names, values, members });
}

const edges = new Map();  // requiring file → Set of required files under the root
const originalRequire = Module.prototype.require;
Module.prototype.require = function (id) {
  let target = null;
  try {
    target = Module._resolveFilename(id, this, false);
    if (this.filename && path.isAbsolute(target) && inside(target) && inside(this.filename)) {
      if (!edges.has(this.filename)) edges.set(this.filename, new Set());
      edges.get(this.filename).add(target);
    }
  } catch (e) { /* the require itself throws the same error below */ }
  const value = originalRequire.apply(this, arguments);
  if (target) snapshot(target);
  return value;
};

const loaded = new Map();
for (const f of files) {
  try { loaded.set(f, require(f)); } catch (e) { loaded.set(f, e); }
  snapshot(f);
}
const owners = new Map();  // exported object → the file that built it (the first file whose exports it is)
for (const f of files) {
  const m = require.cache[f];
  if (m && !owners.has(m.exports)) owners.set(m.exports, f);
}
// a file hands another's exports on when its module.exports is the object that file's module built
for (const f of files) {
  const m = require.cache[f];
  if (!m) continue;
  for (const g of files) {
    const n = require.cache[g];
    if (g !== f && n && n.exports === m.exports && (edges.get(f) || new Set()).has(g)) owners.set(m.exports, g);
  }
}

const out = {};
for (const f of files) {
  const value = loaded.get(f);
  const m = require.cache[f];
  if (value instanceof Error || !m || !snapshots.has(f)) {
    out[rel(f)] = { error: String(value), exports: [], members: {}, reexports: null, edges: [], spelled: [],
                   spelledMembers: [], constructors: {} };
    continue;
  }
  const owner = owners.get(m.exports);
  const { names, values, members } = snapshots.get(f);
  const written = spelled(f);
  const homes = {};  // export name → the package file whose module.exports it is (where its members are spelled)
  for (const n of Object.keys(members)) {
    const home = owners.get(values[n]);
    if (home && home !== f) homes[n] = rel(home);
  }
  out[rel(f)] = {
    exports: [...names].sort(),
    members,
    homes,
    reexports: owner && owner !== f ? rel(owner) : null,
    edges: [...(edges.get(f) || [])].map(rel).sort(),
    spelled: written.names,
    spelledMembers: written.members,
    constructors: Object.fromEntries(Object.keys(members).map((n) => [n, values[n].name || ""])),
  };
}
process.stdout.write(JSON.stringify(out));
