"""The skeleton model and its two hashes (content and API surface)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from domain.knowledge.skeleton import (
    Export,
    FileSkeleton,
    Import,
    MergedSkeleton,
    api_surface,
    merged_hash,
    skeleton_hash,
    surface_signature,
)


def _file(path: str = "a.py", sha: str = "0" * 64, **kw) -> FileSkeleton:
    exports = kw.pop("exports", [Export(name="f", kind="function", signature="def f(x: int) -> int", start_line=1,
                                        end_line=2)])
    return FileSkeleton(path=path, language="python", lines=2, sha256=sha, exports=exports, **kw)


def test_round_trip_json() -> None:
    cls = Export(name="C", kind="class", signature="class C", start_line=1, end_line=9, doc="A class.",
                 members=[Export(name="m", kind="method", signature="def m(self)", start_line=2, end_line=3)])
    sk = _file(exports=[cls], imports=[Import(specifier=".b", relative=True, resolved="b.py", names=["x"])])
    again = FileSkeleton.model_validate_json(sk.model_dump_json())
    assert again == sk
    assert again.exports[0].members[0].name == "m"


def test_unknown_fields_and_kinds_refused() -> None:
    with pytest.raises(ValidationError):
        Export(name="x", kind="gadget", start_line=1, end_line=1)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Import(specifier="x", bogus=1)  # type: ignore[call-arg]


def test_skeleton_hash_ignores_lines_docs_order_and_reformatting() -> None:
    a = Export(name="f", kind="function", signature="def f(x: int, y: int) -> int", start_line=1, end_line=2)
    b = Export(name="g", kind="class", signature="class g", start_line=3, end_line=4)
    base = _file(exports=[a, b])
    moved = _file(exports=[
        b.model_copy(update={"start_line": 30, "end_line": 40, "doc": "new doc"}),
        a.model_copy(update={"signature": "def f(\n    x: int,\n    y: int,\n) -> int", "start_line": 10}),
    ], imports=[Import(specifier="os")])
    assert skeleton_hash(base) == skeleton_hash(moved)
    changed = _file(exports=[a.model_copy(update={"signature": "def f(x: int) -> int"}), b])
    assert skeleton_hash(changed) != skeleton_hash(base)
    renamed_kind = _file(exports=[a, b.model_copy(update={"kind": "struct"})])
    assert skeleton_hash(renamed_kind) != skeleton_hash(base)


def test_member_change_changes_surface() -> None:
    m = Export(name="m", kind="method", signature="def m(self)", start_line=2, end_line=3)
    c = Export(name="C", kind="class", signature="class C", start_line=1, end_line=9, members=[m])
    c2 = c.model_copy(update={"members": [m, m.model_copy(update={"name": "n", "signature": "def n(self)"})]})
    assert skeleton_hash(_file(exports=[c])) != skeleton_hash(_file(exports=[c2]))


def test_surface_signature() -> None:
    assert surface_signature("fn  f( a : u8 , )  ->  u8") == "fn f(a:u8)->u8"


def test_merged_hash_is_order_independent_and_content_keyed() -> None:
    f1, f2 = _file("a.py", "1" * 64), _file("b.py", "2" * 64)
    m1 = MergedSkeleton.build(".", [f2, f1], {"binary": 1})
    m2 = MergedSkeleton.build(".", [f1, f2])
    assert m1.hash == m2.hash == merged_hash([f1, f2])
    assert [f.path for f in m1.files] == ["a.py", "b.py"]
    assert m1.file("b.py") == f2
    assert MergedSkeleton.build(".", [f1, _file("b.py", "3" * 64)]).hash != m1.hash
    assert skeleton_hash(m1) == skeleton_hash([f1, f2])
    assert [s["path"] for s in api_surface(m1)] == ["a.py", "b.py"]
