"""Rust idioms serde 1.0.152 uses (issue 19): renamed re-exports, impls of private types and of trait objects,
`#[path]` modules and the 2015 edition's crate-root `use` paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.code_parser.treesitter import TreeSitterCodeParser
from domain.knowledge.skeleton import MergedSkeleton


@pytest.fixture(scope="module")
def parser() -> TreeSitterCodeParser:
    return TreeSitterCodeParser(workers=1)


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def edges(merged: MergedSkeleton, path: str) -> list[tuple[str, str | None]]:
    found = merged.file(path)
    assert found is not None, [f.path for f in merged.files]
    return [(i.specifier, i.resolved) for i in found.imports]


def crate(root: Path, edition: str | None) -> None:
    write(root, "Cargo.toml", '[package]\nname = "c"\nversion = "1.0.0"\n'
                              + (f'edition = "{edition}"\n' if edition else ""))
    write(root, "src/lib.rs", '#[path = "private/mod.rs"]\npub mod __private;\npub mod de;\n'
                              "mod lib {\n    pub use std::fmt;\n}\n")
    write(root, "src/private/mod.rs", "pub fn helper() {}\n")
    write(root, "src/de/mod.rs", "use lib::*;\nmod value;\npub use std::error::Error as StdError;\n"
                                 "pub use self::value::Thing as _;\n"
                                 "pub trait Expected {}\nstruct OneOf;\n"
                                 "impl Display for OneOf {}\nimpl<'a> Display for Expected + 'a {}\n"
                                 "impl<'a> Expected for &'a str {}\n")
    write(root, "src/de/value.rs", "use de::Expected;\npub struct Thing;\n")


def test_a_renamed_re_export_exports_its_alias_and_imports_its_whole_path(parser: TreeSitterCodeParser,
                                                                          tmp_path: Path) -> None:
    crate(tmp_path, None)
    de = parser.scan(tmp_path).file("src/de/mod.rs")
    assert de is not None
    assert {e.name: e.kind for e in de.exports} == {"StdError": "other", "Expected": "trait", "str": "impl"}
    error = next(i for i in de.imports if i.specifier == "std::error::Error")
    assert error.names == ["StdError"]


def test_impls_of_a_private_type_are_left_out_and_a_trait_objects_belong_to_its_trait(
        parser: TreeSitterCodeParser, tmp_path: Path) -> None:
    crate(tmp_path, None)
    de = parser.scan(tmp_path).file("src/de/mod.rs")
    assert de is not None
    expected = next(e for e in de.exports if e.name == "Expected")
    assert [(m.name, m.kind) for m in expected.members] == [("Display", "impl")]
    assert "OneOf" not in {e.name for e in de.exports}


def test_path_attributes_and_2015_crate_root_paths_resolve(parser: TreeSitterCodeParser, tmp_path: Path) -> None:
    crate(tmp_path, None)  # no edition: 2015
    merged = parser.scan(tmp_path)
    assert edges(merged, "src/lib.rs") == [('#[path = "private/mod.rs"] mod __private', "src/private/mod.rs"),
                                           ("mod de", "src/de/mod.rs")]
    assert edges(merged, "src/de/mod.rs")[:2] == [("lib", "src/lib.rs"), ("mod value", "src/de/value.rs")]
    assert edges(merged, "src/de/value.rs") == [("de", "src/de/mod.rs")]


def test_2018_paths_do_not_start_at_the_crate_root(parser: TreeSitterCodeParser, tmp_path: Path) -> None:
    crate(tmp_path, "2018")
    merged = parser.scan(tmp_path)
    assert edges(merged, "src/de/value.rs") == [("de", None)]  # an external crate named de, in 2018
    assert edges(merged, "src/de/mod.rs")[0] == ("lib", None)


def test_items_a_macro_of_the_file_declares_are_exports(parser: TreeSitterCodeParser, tmp_path: Path) -> None:
    """serde's de/mod.rs declares `pub trait Error` through `declare_error_trait!`, once per cfg."""
    write(tmp_path, "src/lib.rs", """macro_rules! declare_error_trait {
    (Error: Sized $(+ $($supertrait:ident)::+)*) => {
        /// The error trait.
        pub trait Error: Sized $(+ $($supertrait)::+)* {
            fn custom<T>(msg: T) -> Self where T: Display;
            fn missing_field(field: &'static str) -> Self { Error::custom(field) }
        }
    }
}

macro_rules! named_by_caller {
    ($name:ident) => { pub struct $name; pub struct Fixed; }
}

macro_rules! two_rules {
    () => { pub struct FromFirst; };
    ($x:expr) => { pub struct FromSecond; };
}

#[cfg(feature = "std")]
declare_error_trait!(Error: Sized + StdError);

#[cfg(not(feature = "std"))]
declare_error_trait!(Error: Sized + Debug + Display);

named_by_caller!(Guessed);
two_rules!();
""")
    lib = parser.scan(tmp_path).file("src/lib.rs")
    assert lib is not None and lib.parse_errors == []
    assert [(e.name, e.kind, e.start_line) for e in lib.exports] == [("Error", "trait", 21), ("Fixed", "struct", 26)]
    error = lib.exports[0]
    assert [m.name for m in error.members] == ["custom", "missing_field"]
    assert error.signature == "pub trait Error: Sized" and error.doc == "The error trait."


def test_the_2015_try_macro_is_no_syntax_error(parser: TreeSitterCodeParser, tmp_path: Path) -> None:
    """serde 1.0.152 writes `try!(…)` (edition 2015): 8 of its 20 files had syntax errors."""
    write(tmp_path, "src/lib.rs", "pub fn f(x: Result<u8, ()>) -> Result<u8, ()> {\n    let v = try!(x);\n"
                                  "    Ok(v)\n}\n\npub fn r#try() {}\n")
    lib = parser.scan(tmp_path).file("src/lib.rs")
    assert lib is not None and lib.parse_errors == []
    assert [(e.name, e.signature) for e in lib.exports] == [
        ("f", "pub fn f(x: Result<u8, ()>) -> Result<u8, ()>"), ("r#try", "pub fn r#try()")]


def test_tuple_fields_a_bare_module_use_and_self_leaves(parser: TreeSitterCodeParser, tmp_path: Path) -> None:
    """serde's de/seed.rs `pub struct InPlaceSeed<'a, T: 'a>(pub &'a mut T);`, private/doc.rs `use ser;` and
    private/mod.rs `pub use lib::fmt::{self, Formatter};`."""
    write(tmp_path, "Cargo.toml", '[package]\nname = "c"\nversion = "1.0.0"\n')
    write(tmp_path, "src/lib.rs", "pub mod ser;\nmod doc;\n")
    write(tmp_path, "src/ser.rs", "pub struct Seed<'a, T: 'a>(pub &'a mut T, u8, #[doc(hidden)] pub u16);\n")
    write(tmp_path, "src/doc.rs", "use ser;\npub use std::fmt::{self, Formatter};\n")
    merged = parser.scan(tmp_path)
    ser, doc = merged.file("src/ser.rs"), merged.file("src/doc.rs")
    assert ser is not None and doc is not None
    assert [(m.name, m.signature) for m in ser.exports[0].members] == [("0", "pub &'a mut T"), ("2", "pub u16")]
    assert [(i.specifier, i.names, i.resolved) for i in doc.imports] == [
        ("ser", ["ser"], "src/ser.rs"), ("std::fmt", ["fmt", "Formatter"], None)]
    assert [e.name for e in doc.exports] == ["fmt", "Formatter"]
