"""CodeNexus rules on the aggregates themselves (no store, no I/O)."""

from __future__ import annotations

import pytest

from domain.knowledge.file_meta import (
    FileMeta,
    FilePath,
    MetaRefused,
    Tag,
    default_color,
    parse_color,
    parse_comment,
    parse_description,
    parse_relationship_type,
    parse_tag,
    parse_tags,
)
from projections.knowledge.codenexus import grams
from projections.knowledge.codenexus_queries import _term_grams

PID = "6f1c0a52-0000-4000-8000-000000000001"


def refused(call) -> str:
    with pytest.raises(MetaRefused) as caught:
        call()
    return caught.value.message + " | " + caught.value.hint


def test_tags_are_lower_case_words_of_two_to_fifty_characters_matched_in_full() -> None:
    for good in ("ab", "backend", "api_v2", "x-y", "a" * 50, "09"):
        assert parse_tag(good) == good
    for bad in ("a", "a" * 51, "back end", "backend\n", "后端", "", None, 5, "café"):
        refused(lambda b=bad: parse_tag(b))
    assert "use 'backend'" in refused(lambda: parse_tag("Backend"))


def test_a_tag_list_is_one_to_fifty_distinct_tags_in_the_order_given() -> None:
    assert parse_tags(["core", "backend", "core"]) == ["core", "backend"]
    refused(lambda: parse_tags([]))
    refused(lambda: parse_tags("backend"))
    refused(lambda: parse_tags([f"t{i:02d}" for i in range(51)]))
    assert parse_tags([], at_least_one=False) == []


def test_comments_descriptions_types_and_colours_have_their_bounds() -> None:
    assert parse_comment("x" * 2000) == "x" * 2000
    assert "2001 characters" in refused(lambda: parse_comment("x" * 2001))
    refused(lambda: parse_comment("a\x00b"))
    assert parse_description(None) == "" and parse_description("d" * 500) == "d" * 500
    refused(lambda: parse_description("d" * 501))
    assert [parse_relationship_type(t) for t in ("imports", "calls", "configures", "depends_on")]
    assert "use one of imports" in refused(lambda: parse_relationship_type("uses"))
    assert parse_color("#FF6B6B") == "#ff6b6b"
    refused(lambda: parse_color("red"))
    assert default_color("backend") == default_color("backend") and default_color("x1").startswith("#")


def test_repeating_a_tag_or_a_comment_records_nothing() -> None:
    meta = FileMeta(project_id=PID, path="src/main.rs")
    assert meta.add_tags(["backend", "core"]) == ["backend", "core"]
    assert meta.add_tags(["core", "backend"]) == []
    assert meta.set_comment("主入口文件") and not meta.set_comment("主入口文件")
    assert [type(e).__name__ for e in meta.collect_events()] == ["Registered", "Tagged", "Commented"]
    assert meta.remove_tags(["core", "nope"]) == ["core"] and meta.remove_tags(["core"]) == []
    assert meta.tags == ["backend"]


def test_relationships_refuse_self_and_a_conflicting_duplicate_and_repeat_quietly() -> None:
    meta = FileMeta(project_id=PID, path="src/main.rs")
    other = str(FileMeta.create_id(PID, "src/lib.rs"))
    assert "itself" in refused(lambda: meta.relate(str(meta.id), "src/main.rs", "imports", ""))
    assert meta.relate(other, "src/lib.rs", "imports", "导入核心库函数")
    assert not meta.relate(other, "src/lib.rs", "imports", "导入核心库函数")
    assert "already has" in refused(lambda: meta.relate(other, "src/lib.rs", "imports", "another text"))
    assert meta.relate(other, "src/lib.rs", "calls", "")  # another type is another relationship
    assert meta.unrelate(other, "calls") and not meta.unrelate(other, "calls")


def test_a_derived_relationship_never_replaces_a_person_s_and_a_person_confirms_a_derived_one() -> None:
    meta = FileMeta(project_id=PID, path="a.py")
    b, c = str(FileMeta.create_id(PID, "b.py")), str(FileMeta.create_id(PID, "c.py"))
    assert meta.relate(b, "b.py", "imports", "mine")
    assert not meta.relate(b, "b.py", "imports", "derived from the code: b", origin="derived")
    assert meta.relations[f"{b} imports"]["origin"] == "manual"
    assert not meta.unrelate(b, "imports", only_derived=True)
    assert meta.relate(c, "c.py", "imports", "derived", origin="derived")
    assert not meta.relate(c, "c.py", "imports", "derived", origin="derived")
    assert meta.relate(c, "c.py", "imports", "a person says so")
    assert meta.relations[f"{c} imports"]["origin"] == "manual"


def test_a_released_path_gives_the_next_file_there_a_new_id() -> None:
    lookup = FilePath(project_id=PID, path="src/a.py", file_id=str(FileMeta.create_id(PID, "src/a.py")))
    first = lookup.file_id
    lookup.release()
    assert lookup.file_id is None and lookup.generation == 1
    assert str(lookup.next_file_id()) != first
    assert FileMeta.create_id(PID, "src/a.py") != FileMeta.create_id("another-project", "src/a.py")


def test_a_move_keeps_the_id_and_changes_the_path() -> None:
    meta = FileMeta(project_id=PID, path="src/a.py")
    before = meta.id
    assert meta.move("lib/a.py") and not meta.move("lib/a.py")
    assert meta.id == before and meta.path == "lib/a.py"


def test_a_tag_description_is_recorded_once_per_change() -> None:
    tag = Tag(project_id=PID, name="backend", description="后端相关文件", color="#ff6b6b")
    assert not tag.describe("后端相关文件", "#ff6b6b")
    assert tag.describe("后端", "#ff6b6b")


def test_comment_grams_hold_every_piece_of_up_to_three_characters_without_whitespace() -> None:
    assert {"启动", "启", "动", "启动逻"} <= grams("主入口文件，包含应用启动逻辑")
    assert grams("a bc") == {"a", "b", "c", "bc"}
    assert _term_grams("启动") == ["启动"] and _term_grams("x") == ["x"] and _term_grams("核心库") == ["核心库"]
    assert _term_grams("应用启动") == ["应用启", "用启动"]
    assert len(_term_grams("a long query with many pieces")) <= 6
