// The public members of each exported class, as the TypeScript type checker sees them (issue 19): the properties
// of the class's instance type and of its constructor (static side) declared in the class itself (inherited ones
// are the base class's), parameter properties included, private/protected/#private, computed symbol keys and
// constructors left out. Run: node ts_class_members.js <typescript dir> <root> files…  (in <root>)
//   → JSON {path: {class name: [member names]}}, paths as given.
"use strict";
const ts = require(process.argv[2]);
const path = require("path");

const files = process.argv.slice(4);
process.chdir(path.resolve(process.argv[3]));
const program = ts.createProgram(files, { target: ts.ScriptTarget.ES2022, noEmit: true, skipLibCheck: true,
  allowJs: false, noResolve: false });
const checker = program.getTypeChecker();
const result = {};
for (const file of files) {
  const sf = program.getSourceFile(file);
  const classes = {};
  for (const st of sf ? sf.statements : []) {
    if (!ts.isClassDeclaration(st) || !st.name) continue;
    if (!(ts.getCombinedModifierFlags(st) & ts.ModifierFlags.Export)) continue;
    const symbol = checker.getSymbolAtLocation(st.name);
    if (!symbol) continue;
    const names = new Set();
    for (const type of [checker.getDeclaredTypeOfSymbol(symbol), checker.getTypeOfSymbolAtLocation(symbol, st)]) {
      for (const p of type.getProperties()) {
        const d = p.declarations && p.declarations[0];
        if (!d || (d.parent !== st && !(ts.isParameter(d) && d.parent.parent === st))) continue;
        if (ts.getCombinedModifierFlags(d) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
        if (p.name.startsWith("__@") || p.name.startsWith("#") || p.name === "prototype") continue;
        names.add(p.name);
      }
    }
    classes[st.name.text] = [...names].sort();
  }
  result[file] = classes;
}
process.stdout.write(JSON.stringify(result));
