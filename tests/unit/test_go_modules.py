"""Go module idioms (issue 19): the module-root package, go.mod `replace` directives, and the functions `go test`
runs, which are not exports."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters.code_parser.languages.go import GoModule, parse_go_mod
from adapters.code_parser.treesitter import TreeSitterCodeParser
from domain.knowledge import module_graph
from domain.knowledge.drift import compare
from domain.knowledge.skeleton import MergedSkeleton


@pytest.fixture(scope="module")
def parser() -> TreeSitterCodeParser:
    return TreeSitterCodeParser(workers=1)


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def resolved(merged: MergedSkeleton, path: str) -> dict[str, str | None]:
    found = merged.file(path)
    assert found is not None, [f.path for f in merged.files]
    return {i.specifier: i.resolved for i in found.imports}


def test_the_module_root_package_resolves_and_orders_the_modules(parser: TreeSitterCodeParser,
                                                                  tmp_path: Path) -> None:
    """cobra's shape: the root directory is the package `github.com/spf13/cobra`, doc/ imports it."""
    write(tmp_path, "go.mod", "module github.com/spf13/cobra // the CLI library\n\ngo 1.15\n")
    write(tmp_path, "args.go", "package cobra\n\nfunc NoArgs() {}\n")
    write(tmp_path, "cobra.go", "package cobra\n\nfunc Gt() {}\n")
    write(tmp_path, "cobra_test.go", "package cobra\n")
    write(tmp_path, "doc/md_docs.go",
          'package doc\n\nimport (\n\t"fmt"\n\n\t"github.com/spf13/cobra"\n)\n\nfunc GenMarkdown() {}\n')
    merged = parser.scan(tmp_path)
    assert resolved(merged, "doc/md_docs.go") == {"fmt": None, "github.com/spf13/cobra": "cobra.go"}
    graph = module_graph.build(merged)
    assert graph.deps["doc"] == {"."}
    assert graph.order.index(".") < graph.order.index("doc")


def test_a_package_without_a_file_of_its_name_resolves_to_doc_go_then_its_first_file(
        parser: TreeSitterCodeParser, tmp_path: Path) -> None:
    write(tmp_path, "go.mod", "module example.com/m\n")
    write(tmp_path, "a/z.go", "package a\n")
    write(tmp_path, "a/doc.go", "package a\n")
    write(tmp_path, "b/b_test.go", "package b\n")
    write(tmp_path, "b/y.go", "package b\n")
    write(tmp_path, "b/x.go", "package b\n")
    write(tmp_path, "c/README", "no Go here\n")
    write(tmp_path, "main.go", 'package main\n\nimport (\n\t"example.com/m/a"\n\t"example.com/m/b"\n'
                               '\t"example.com/m/c"\n\t"example.com/mother"\n)\n')
    assert resolved(parser.scan(tmp_path), "main.go") == {
        "example.com/m/a": "a/doc.go", "example.com/m/b": "b/x.go", "example.com/m/c": None,
        "example.com/mother": None}  # a module path sharing a prefix is another module


def test_replace_directives_inside_the_root_resolve_and_outside_it_are_external_never_read(
        parser: TreeSitterCodeParser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "project"
    write(root, "go.mod", "module example.com/app\n\nrequire example.com/lib v1.0.0\n\n"
                          "replace example.com/lib => ./third/lib\n"
                          "replace (\n\texample.com/out v1.2.0 => ../outside // a sibling checkout\n"
                          "\texample.com/mod => example.com/fork v1.0.0\n)\n")
    write(root, "third/lib/lib.go", "package lib\n")
    write(root, "third/lib/sub/sub.go", "package sub\n")
    write(root, "main.go", 'package main\n\nimport (\n\t"example.com/lib"\n\t"example.com/lib/sub"\n'
                           '\t"example.com/out/pkg"\n\t"example.com/mod"\n)\n')
    write(tmp_path, "outside/pkg/pkg.go", "package pkg\n")  # what the replace names, outside the root
    touched: list[str] = []
    real_scandir, real_isdir = os.scandir, os.path.isdir

    def scandir(path: str = ".") -> object:
        touched.append(os.fspath(path))
        return real_scandir(path)

    def isdir(path: str) -> bool:
        touched.append(os.fspath(path))
        return real_isdir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os.path, "isdir", isdir)
    found = resolved(parser.scan(root), "main.go")
    monkeypatch.undo()
    assert found == {"example.com/lib": "third/lib/lib.go", "example.com/lib/sub": "third/lib/sub/sub.go",
                     "example.com/out/pkg": None, "example.com/mod": None}
    inside = str(root)
    assert any(p.startswith(inside) for p in touched)  # the spy sees the scan
    assert [p for p in touched if not os.path.abspath(p).startswith(inside)] == []


def test_parse_go_mod_reads_the_module_and_local_replaces_only() -> None:
    text = ('module "example.com/app"\n\nreplace (\n\ta v1 => ./a // local\n\tb => b2 v1.0.0\n)\n'
            "replace c => /abs/c\nreplace d => ../d\n")
    assert parse_go_mod(text, "svc") == GoModule("example.com/app", "svc",
                                                 (("a", "svc/a"), ("c", "/abs/c"), ("d", "d")))
    assert parse_go_mod("go 1.19\n", "") is None


def test_go_test_functions_are_not_exports(parser: TreeSitterCodeParser, tmp_path: Path) -> None:
    body = ("package p\n\nfunc TestRun(t *testing.T) {}\nfunc Test(t *testing.T) {}\nfunc TestMain(m *testing.M) {}\n"
            "func Benchmark_x(b *testing.B) {}\nfunc ExampleCommand() {}\nfunc Example() {}\nfunc FuzzArgs() {}\n"
            "func Testing() {}\nfunc Helper() {}\n")
    write(tmp_path, "p_test.go", body)
    write(tmp_path, "p.go", body.replace("package p\n", "package p\n\n// not a test file: all exported\n"))
    merged = parser.scan(tmp_path)
    test_file, plain = merged.file("p_test.go"), merged.file("p.go")
    assert test_file is not None and plain is not None
    assert [e.name for e in test_file.exports] == ["Testing", "Helper"]  # Testing: a lower-case letter follows
    assert len(plain.exports) == 9
    # removing a test function is no drift; removing a helper a test file exports still is
    edited = tmp_path / "p_test.go"
    edited.write_text(body.replace("func TestRun(t *testing.T) {}\n", ""))
    assert compare(merged, parser.scan(tmp_path)).items == []
    edited.write_text(body.replace("func Helper() {}\n", ""))
    assert [(i.severity, i.name) for i in compare(merged, parser.scan(tmp_path)).items] == [("high", "Helper")]


def test_a_mention_of_autogenerated_code_after_the_package_clause_is_no_generated_marker(
        parser: TreeSitterCodeParser, tmp_path: Path) -> None:
    """cobra's doc/util.go: a function's comment speaks of "the autogenerated help command"; Go's marker
    (`// Code generated … DO NOT EDIT.`) comes before the package clause."""
    write(tmp_path, "util.go", "// Copyright 2015 The Authors.\n\npackage doc\n\n"
                               "// hasSeeAlso skips the autogenerated help command.\nfunc HasSeeAlso() bool {\n"
                               "\treturn false\n}\n")
    write(tmp_path, "gen.go", "// Code generated by stringer. DO NOT EDIT.\n\npackage doc\n\nfunc Gen() {}\n")
    merged = parser.scan(tmp_path)
    assert [f.path for f in merged.files] == ["util.go"]
    assert merged.skipped == {"generated": 1}
