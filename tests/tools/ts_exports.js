// Prints, for each file given on the command line, what the TypeScript compiler's parser says the file
// exports: {path: {name: [public member names] | null}} as JSON. Run: node ts_exports.js <typescript dir> files…
"use strict";
const ts = require(process.argv[2]);
const fs = require("fs");

function hasModifier(node, kind) {
  const mods = ts.canHaveModifiers && ts.canHaveModifiers(node) ? ts.getModifiers(node) : node.modifiers;
  return !!mods && mods.some((m) => m.kind === kind);
}

function bindingNames(name, out) {
  if (ts.isIdentifier(name)) out.push(name.text);
  else for (const el of name.elements) if (!ts.isOmittedExpression(el)) bindingNames(el.name, out);
  return out;
}

function memberName(m) {
  if (!m.name) return m.kind === ts.SyntaxKind.Constructor ? "constructor" : null;
  if (ts.isPrivateIdentifier(m.name)) return null;
  if (ts.isComputedPropertyName(m.name)) return null;
  return m.name.text;
}

function members(node) {
  if (!(ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node))) return null;
  const names = new Set();
  for (const m of node.members) {
    if (ts.isIndexSignatureDeclaration(m) || ts.isClassStaticBlockDeclaration(m)) continue;
    if (ts.isCallSignatureDeclaration(m) || ts.isConstructSignatureDeclaration(m)) continue;
    if (hasModifier(m, ts.SyntaxKind.PrivateKeyword) || hasModifier(m, ts.SyntaxKind.ProtectedKeyword)) continue;
    const n = memberName(m);
    if (n !== null) names.add(n);
    if (ts.isConstructorDeclaration(m)) {  // parameter properties: constructor(public readonly kind: string)
      for (const p of m.parameters) {
        if (!ts.isParameterPropertyDeclaration(p, m) || !ts.isIdentifier(p.name)) continue;
        if (hasModifier(p, ts.SyntaxKind.PrivateKeyword) || hasModifier(p, ts.SyntaxKind.ProtectedKeyword)) continue;
        names.add(p.name.text);
      }
    }
  }
  return [...names].sort();
}

function exportsOf(file) {
  const text = fs.readFileSync(file, "utf8");
  const kind = file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const out = Object.create(null);
  const add = (name, mem) => { if (!(name in out)) out[name] = mem; };
  const local = Object.create(null);  // name → class/interface declared in this file (export { Local as Alias } keeps its members)
  for (const st of sf.statements) if (st.name && ts.isIdentifier(st.name) && !(st.name.text in local)) local[st.name.text] = st;
  for (const st of sf.statements) {
    if (ts.isExportDeclaration(st)) {
      if (st.exportClause && ts.isNamedExports(st.exportClause)) {
        for (const el of st.exportClause.elements) {
          const target = !st.moduleSpecifier && local[(el.propertyName || el.name).text];
          add(el.name.text, target ? members(target) : null);
        }
      }
      else if (st.exportClause && ts.isNamespaceExport(st.exportClause)) add(st.exportClause.name.text, null);
      continue;
    }
    if (ts.isExportAssignment(st)) {
      const target = !st.isExportEquals && ts.isIdentifier(st.expression) && local[st.expression.text];
      add(st.isExportEquals ? "export=" : "default", target ? members(target) : null);
      continue;
    }
    if (!hasModifier(st, ts.SyntaxKind.ExportKeyword)) continue;
    if (hasModifier(st, ts.SyntaxKind.DefaultKeyword)) { add("default", members(st)); continue; }
    if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) for (const n of bindingNames(d.name, [])) add(n, null);
    } else if (st.name && (ts.isIdentifier(st.name))) {
      add(st.name.text, members(st));
    }
  }
  return out;
}

const result = {};
for (const f of process.argv.slice(3)) result[f] = exportsOf(f);
process.stdout.write(JSON.stringify(result));
