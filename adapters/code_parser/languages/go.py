"""Go: what another package sees (identifiers starting with an upper-case letter).

Exported: top-level funcs, types (struct → "struct", interface → "interface", others and aliases → "type"),
consts and vars whose names are capitalised. Methods with an exported name on an exported receiver type are
members of that type when it is declared in the same file, and otherwise top-level exports named
"Type.Method" (kind "method"). Struct members: exported fields and exported embedded types; interface
members: exported methods and embedded interfaces. Docs are the `//` comments above. Imports: each import
spec (alias or package name in `names`).

Resolution: the module path of the nearest go.mod (the module root package too) and its local `replace` directives
→ one file of the package (named after it or its directory, else doc.go, else the first non-test file); a
`replace` out of the project root is an external import, never read.

The functions `go test` runs (TestXxx, BenchmarkXxx, ExampleXxx, FuzzXxx in a _test.go file) are not exports:
no other package can call them, so removing one is not API drift.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass

from adapters.code_parser.resolution import ProjectIndex, join
from adapters.code_parser.source import Node, Source, doc_before, export, make_import, unquote
from domain.knowledge.skeleton import Export, Import


def _exported(name: str) -> bool:
    return bool(name) and name[0].isupper()


_TEST_PREFIXES = ("Test", "Benchmark", "Example", "Fuzz")


def _test_function(name: str) -> bool:
    """`go test`'s rule: the prefix alone, or followed by anything but a lower-case letter (Testing is not)."""
    for prefix in _TEST_PREFIXES:
        if name.startswith(prefix):
            rest = name[len(prefix):]
            if not rest or not rest[0].islower():
                return True
    return False


def _type_name(src: Source, node: Node | None) -> str:
    """The base type name of a receiver/embedded type: *pkg.T[U] → T."""
    while node is not None and node.type in ("pointer_type", "generic_type", "parenthesized_type"):
        node = node.child_by_field_name("type") or (node.named_children[0] if node.named_child_count else None)
    if node is None:
        return ""
    if node.type == "qualified_type":
        return src.field_text(node, "name")
    text = src.text(node).lstrip("*")
    return text.split("[")[0].split(".")[-1].strip()


def _struct_members(src: Source, struct: Node) -> list[Export]:
    out = []
    fields = next((c for c in struct.named_children if c.type == "field_declaration_list"), None)
    for f in fields.named_children if fields is not None else []:
        if f.type != "field_declaration":
            continue
        names = [c for c in f.children_by_field_name("name")]
        type_node = f.child_by_field_name("type")
        sig = " ".join(src.text(f).split())
        if names:
            out += [export(src.text(n), "field", f, sig) for n in names if _exported(src.text(n))]
        else:  # embedded
            embedded = _type_name(src, type_node or (f.named_children[0] if f.named_child_count else None))
            if _exported(embedded):
                out.append(export(embedded, "field", f, sig))
    return out


def _interface_members(src: Source, iface: Node) -> list[Export]:
    out = []
    for m in iface.named_children:
        if m.type in ("method_elem", "method_spec"):
            name = src.field_text(m, "name")
            if _exported(name):
                out.append(export(name, "method", m, " ".join(src.text(m).split()), doc_before(src, m)))
        elif m.type in ("type_elem", "constraint_elem"):
            name = _type_name(src, m.named_children[0] if m.named_child_count else None)
            if _exported(name):
                out.append(export(name, "interface", m, " ".join(src.text(m).split())))
    return out


def _type_spec(src: Source, spec: Node, decl: Node) -> Export | None:
    name = src.field_text(spec, "name")
    if not _exported(name):
        return None
    type_node = spec.child_by_field_name("type")
    kind, members = "type", []
    if spec.type == "type_spec" and type_node is not None:
        if type_node.type == "struct_type":
            kind, members = "struct", _struct_members(src, type_node)
        elif type_node.type == "interface_type":
            kind, members = "interface", _interface_members(src, type_node)
    sig = "type " + (src.signature(spec, type_node) + " " + type_node.type.replace("_type", "")
                     if kind in ("struct", "interface") else " ".join(src.text(spec).split()))
    target = spec if decl.named_child_count > 1 else decl
    return export(name, kind, spec, sig.strip(), doc_before(src, target), members, span_node=target)


def _values(src: Source, decl: Node, kind: str) -> list[Export]:
    out = []
    specs = [c for c in decl.named_children if c.type in ("const_spec", "var_spec")]
    for lst in (c for c in decl.named_children if c.type == "var_spec_list"):
        specs += [c for c in lst.named_children if c.type == "var_spec"]
    for spec in specs:
        value = spec.child_by_field_name("value")
        keyword = "const" if kind == "const" else "var"
        text = " ".join(src.text(value).split()) if value is not None else ""
        sig = f"{keyword} {src.signature(spec, value, '=')}" + (f" = {text}" if text and len(text) <= 60 else "")
        for n in spec.children_by_field_name("name"):
            name = src.text(n)
            if _exported(name):
                target = spec if len(specs) > 1 else decl
                out.append(export(name, kind, spec, sig, doc_before(src, target), span_node=target))
    return out


def _imports(src: Source, decl: Node) -> list[Import]:
    out = []
    specs = [c for c in decl.named_children if c.type == "import_spec"]
    for lst in (c for c in decl.named_children if c.type == "import_spec_list"):
        specs += [c for c in lst.named_children if c.type == "import_spec"]
    for spec in specs:
        path = unquote(src.field_text(spec, "path"))
        alias = spec.child_by_field_name("name")
        name = src.text(alias) if alias is not None else path.rsplit("/", 1)[-1]
        out.append(make_import(path, spec, relative=path.startswith("."), names=[name]))
    return out


def extract(src: Source, root: Node) -> tuple[list[Export], list[Import]]:
    exports: list[Export] = []
    imports: list[Import] = []
    methods: list[tuple[str, Export]] = []
    test_file = src.path.endswith("_test.go")
    for node in root.named_children:
        t = node.type
        if t == "import_declaration":
            imports += _imports(src, node)
        elif t == "function_declaration":
            name = src.field_text(node, "name")
            if _exported(name) and not (test_file and _test_function(name)):
                exports.append(export(name, "function", node, src.header(node), doc_before(src, node)))
        elif t == "method_declaration":
            name = src.field_text(node, "name")
            receiver = node.child_by_field_name("receiver")
            params = [c for c in receiver.named_children if c.type == "parameter_declaration"] if receiver else []
            recv_type = _type_name(src, params[0].child_by_field_name("type")) if params else ""
            if _exported(name) and _exported(recv_type):
                methods.append((recv_type, export(name, "method", node, src.header(node), doc_before(src, node))))
        elif t == "type_declaration":
            for spec in node.named_children:
                if spec.type in ("type_spec", "type_alias"):
                    item = _type_spec(src, spec, node)
                    if item is not None:
                        exports.append(item)
        elif t in ("const_declaration", "var_declaration"):
            exports += _values(src, node, "const" if t == "const_declaration" else "variable")
    by_name = {e.name: e for e in exports if e.kind in ("struct", "interface", "type")}
    for recv, method in methods:
        owner = by_name.get(recv)
        if owner is not None:
            owner.members.append(method)
        else:
            exports.append(method.model_copy(update={"name": f"{recv}.{method.name}"}))
    return exports, imports


# --- Resolution -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoModule:
    """A go.mod: its module path, its directory, and its `replace`s by a local directory (old module path →
    the directory, project-relative and normalised: it starts with ../ when it leads out of the project)."""

    path: str
    dir: str
    replaces: tuple[tuple[str, str], ...] = ()


def parse_go_mod(text: str, mod_dir: str) -> GoModule | None:
    """The module line and the local-path `replace` directives (single and in blocks) of a go.mod."""
    module = None
    replaces: list[tuple[str, str]] = []
    block = ""
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if block:
            if line == ")":
                block = ""
                continue
            line = f"{block} {line}"
        elif line.endswith("(") and line[:-1].strip() in ("replace", "require", "exclude", "retract"):
            block = line[:-1].strip()
            continue
        words = line.split()
        if words[0] == "module" and len(words) > 1:
            module = words[1].strip('"`')
        elif words[0] == "replace" and "=>" in words:
            arrow = words.index("=>")
            old = words[1].strip('"`') if arrow > 1 else ""
            new = words[arrow + 1].strip('"`') if len(words) > arrow + 1 else ""
            if old and (new.startswith(("./", "../")) or new in (".", "..") or new.startswith("/")):
                target = new if new.startswith("/") else posixpath.normpath(posixpath.join(mod_dir or ".", new))
                replaces.append((old, target))
    return GoModule(module, mod_dir, tuple(replaces)) if module else None


def go_module(ix: ProjectIndex, rel_dir: str) -> GoModule | None:
    """The module of the nearest go.mod at or above a directory."""
    memo: dict[str, GoModule | None] = ix.store("go.mod")
    for d in ix.ancestors(rel_dir):
        if d in memo:
            return memo[d]
        mod = posixpath.join(d, "go.mod") if d else "go.mod"
        if ix.is_file(mod):
            try:
                with open(os.path.join(ix.root, mod), encoding="utf-8", errors="replace") as fh:
                    found = parse_go_mod(fh.read(1_000_000), d)
            except OSError:
                found = None
            memo[d] = found
            return found
    return None


def package_file(ix: ProjectIndex, rel_dir: str, name: str = "") -> str | None:
    """The file that stands for a Go package: <name>.go (the import path's last element), <dir name>.go,
    doc.go, else its first non-test .go file."""
    memo: dict[tuple[str, str], str | None] = ix.store("go.package")
    if (rel_dir, name) in memo:
        return memo[rel_dir, name]
    names: list[str] = []
    if ix.is_dir(rel_dir):
        try:
            with os.scandir(os.path.join(ix.root, rel_dir or ".")) as it:
                names = sorted(e.name for e in it if e.name.endswith(".go") and not e.name.endswith("_test.go")
                               and e.is_file(follow_symlinks=False))
        except OSError:
            names = []
    base = posixpath.basename(rel_dir)
    chosen = next((n for n in (f"{name}.go", f"{base}.go", "doc.go") if n in names), names[0] if names else None)
    found = memo[rel_dir, name] = join(rel_dir, chosen) if chosen else None
    return found


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    found = go_module(ix, posixpath.dirname(path))
    if found is None:
        return None
    spec = imp.specifier
    bases = [(found.path, found.dir), *found.replaces]
    matches = [(old, d) for old, d in bases if spec == old or spec.startswith(old + "/")]
    if not matches:
        return None
    old, base = max(matches, key=lambda m: len(m[0]))
    target = posixpath.normpath(posixpath.join(base or ".", spec[len(old) + 1:])) if spec != old else base
    if target.startswith(("/", "../")) or target == "..":
        return None  # a replace leading out of the project: an external import, never read
    return package_file(ix, "" if target == "." else target, spec.rsplit("/", 1)[-1])
