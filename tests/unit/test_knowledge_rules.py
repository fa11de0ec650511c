"""The knowledge aggregates' rules a handler's step applies (the publish saga's pattern): each records its event only
when the rule allows, refuses what it must, and says whether it recorded anything."""

from __future__ import annotations

import pytest

from domain.knowledge.file_meta import FileMeta, FilePath, MetaRefused, Tag, default_color
from domain.knowledge.generated_spec import GeneratedSpec

PID = "6f1c0a52-0000-4000-8000-000000000001"
GENERATION = {"source_target": "src/api", "skeleton_hash": "a" * 64, "model": "offline", "input_tokens": 10,
              "output_tokens": 20, "who": "alice", "version": 1, "confidence": "medium"}


def _kinds(aggregate: GeneratedSpec | FilePath | Tag) -> list[str]:
    return [type(e).__name__ for e in aggregate.collect_events()]


def test_every_generation_after_the_first_is_recorded_even_when_nothing_changed() -> None:
    spec = GeneratedSpec(spec_path="specs/src/api.spec.md", **GENERATION)
    assert spec.record_generation(**GENERATION) and spec.record_generation(**GENERATION)
    assert spec.generations == 3 and _kinds(spec) == ["Generated", "Regenerated", "Regenerated"]


def test_an_adopted_spec_joins_by_nobody_and_every_accepted_drift_is_recorded() -> None:
    spec = GeneratedSpec.adopt("specs/src/api.spec.md", source_target="src/api", skeleton_hash="a" * 64,
                               model="unknown", version=1, confidence="medium")
    [created] = spec.collect_events()
    assert (created.who, created.input_tokens, created.output_tokens) == ("(adopted)", 0, 0)
    assert spec.record_acceptance(who="alice", from_hash="a" * 64, to_hash="b" * 64, high=1, medium=0, low=2)
    assert spec.record_acceptance(who="bob", from_hash="b" * 64, to_hash="b" * 64, high=0, medium=0, low=0), \
        "one that moves no hash too (a baseline re-derived by a newer parser)"
    assert spec.skeleton_hash == "b" * 64 and spec.drifts_accepted == 2


def _path(file_id: str | None = None) -> FilePath:
    lookup = FilePath(project_id=PID, path="lib/a.py", file_id=file_id or str(FileMeta.create_id(PID, "src/a.py")))
    lookup.collect_events()
    return lookup


def test_a_renamed_file_takes_a_free_path_once_and_never_one_another_file_holds() -> None:
    renamed = str(FileMeta.create_id(PID, "src/b.py"))
    held = _path()
    with pytest.raises(MetaRefused, match=r"lib/a\.py is held by another file's metadata"):
        held.claim_for(renamed)
    assert not held.claim_for(held.file_id or ""), "its holder takes it: nothing to record"
    assert held.release_from(held.file_id or "")
    assert held.claim_for(renamed) and not held.claim_for(renamed)
    assert held.file_id == renamed and _kinds(held) == ["Released", "Reclaimed"]


def test_a_path_is_given_up_only_by_the_file_that_holds_it() -> None:
    lookup = _path()
    assert not lookup.release_from(str(FileMeta.create_id(PID, "other.py")))
    holder = lookup.file_id or ""
    assert lookup.release_from(holder) and not lookup.release_from(holder)
    assert lookup.file_id is None and lookup.generation == 1


def test_a_path_leads_to_its_holder_and_while_free_to_the_next_file_s_new_id() -> None:
    lookup = _path()
    assert str(lookup.file_id_here()) == lookup.file_id
    lookup.release()
    assert lookup.file_id_here() == lookup.next_file_id() == FileMeta.create_id(PID, "lib/a.py", 1)


def test_a_tag_described_without_a_colour_keeps_its_own_and_a_new_one_gets_its_default() -> None:
    tag = Tag.define(PID, "backend", "后端相关文件")
    assert tag.color == default_color("backend")
    assert Tag.define(PID, "backend", "x", "#123456").color == "#123456"
    assert not tag.describe("后端相关文件"), "nothing changes"
    assert tag.describe("后端") and tag.color == default_color("backend")
    assert tag.describe("后端", "#123456") and tag.color == "#123456"
    assert _kinds(tag) == ["Defined", "Described", "Described"]
