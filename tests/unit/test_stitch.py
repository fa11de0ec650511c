"""Stitch: never over budget, higher priorities kept first, `truncated` means a cut, secrets never leave."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.errors import Code3Error
from domain.knowledge.stitch import PRIORITY_RANK, StitchItem, cap_response, fence_for, order, shorten, stitch

PATHS = ["src/a.py", "src/b.ts", "lib/c.go", "README.md"]
TEXT = st.text(alphabet="abcdefghij klmnop\n`{}()=_.", max_size=400)


def item(i: int, **kw) -> StitchItem:
    base = dict(id=f"ann_{i}", file_path="src/a.py", start_line=i + 1, end_line=i + 1, comment=f"note {i}",
                priority="P1", sensitivity="public", snippet=f"x = {i}")
    return StitchItem(**{**base, **kw})


def code(call) -> str:
    with pytest.raises(Code3Error) as caught:
        call()
    return caught.value.code.value


@st.composite
def annotation_sets(draw):
    n = draw(st.integers(0, 40))
    items = []
    for i in range(n):
        sensitivity = draw(st.sampled_from(["public", "public", "internal", "secret"]))
        marker = {"secret": f"SECRETMARK{i}Q", "internal": f"INTERNALMARK{i}Q"}.get(sensitivity, f"CMT{i}Q")
        start = draw(st.integers(1, 400))
        snippet = draw(st.one_of(st.none(), TEXT))
        items.append(StitchItem(
            id=f"ann_{i}", file_path=draw(st.sampled_from(PATHS)), start_line=start,
            end_line=start + draw(st.integers(0, 30)), comment=draw(TEXT) + marker + draw(TEXT),
            priority=draw(st.sampled_from(["P0", "P1", "P2"])), sensitivity=sensitivity,
            snippet=None if snippet is None else snippet + marker + snippet,
            tags=(marker.lower(),) if sensitivity != "public" else ("perf",),
            status=draw(st.sampled_from(["exact", "moved", "fuzzy", "orphaned"])),
        ))
    return items


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=annotation_sets(), budget=st.one_of(st.integers(200, 3000), st.integers(200, 200_000)),
       template=st.sampled_from(["concise", "detailed"]), include_internal=st.booleans())
def test_stitch_keeps_its_promises_for_any_annotations_and_budget(items, budget, template, include_internal) -> None:
    result = stitch(items, template=template, max_chars=budget, include_internal=include_internal)
    out = result.as_dict()
    prompt = out["prompt"]
    # never over budget
    assert len(prompt) <= budget
    assert out["stats"]["chars"] == len(prompt) and out["tokenEstimate"] == math.ceil(len(prompt) / 4)
    # the kept annotations are a prefix of the order: nothing kept while one before it was dropped
    eligible = order(a for a in items if a.sensitivity != "internal" or include_internal)
    kept = eligible[: out["stats"]["annotations"]]
    assert out["dropped"] == [a.id for a in eligible[len(kept) :]]
    dropped_ranks = [PRIORITY_RANK[a.priority] for a in eligible[len(kept) :]]
    assert all(PRIORITY_RANK[a.priority] <= min(dropped_ranks, default=9) for a in kept)
    assert out["stats"]["files"] == len({a.file_path for a in kept})
    # truncated exactly when the budget cut something, and it cut only what did not fit
    assert out["stats"]["truncated"] == bool(out["dropped"])
    if out["dropped"]:
        one_more = stitch(eligible[: len(kept) + 1], template=template, max_chars=200_000, include_internal=True)
        assert len(one_more.prompt) > budget  # the next annotation itself did not fit (the notice never evicts)
    # kept public annotations appear in order
    positions = [prompt.index(f"CMT{a.id[4:]}Q") for a in kept if a.sensitivity == "public"]
    assert positions == sorted(positions)
    # secret text never, internal text only when shared
    assert "SECRETMARK" not in prompt and "secretmark" not in prompt
    if not include_internal:
        assert "INTERNALMARK" not in prompt and "internalmark" not in prompt


def test_order_is_priority_then_file_then_line() -> None:
    items = [item(1, priority="P2", file_path="a.py"), item(2, priority="P0", file_path="z.py", start_line=9),
             item(3, priority="P0", file_path="z.py", start_line=2), item(4, priority="P1", file_path="b.py")]
    assert [a.id for a in order(items)] == ["ann_3", "ann_2", "ann_4", "ann_1"]


def test_lowest_priority_annotations_are_dropped_first_and_reported() -> None:
    items = [item(i, priority=p, comment=f"{p} " + "x" * 300) for i, p in enumerate(["P2", "P0", "P1", "P2"])]
    result = stitch(items, max_chars=800)
    assert result.truncated and result.dropped == ["ann_0", "ann_3"]  # both P2s, in stitch order
    assert "P0 " in result.prompt and len(result.prompt) <= 800
    assert "left out to fit" in result.prompt


def test_a_tight_budget_keeps_the_p0_annotation_rather_than_make_room_for_the_dropped_notice() -> None:
    p0 = item(0, priority="P0", comment="c")
    p0 = item(0, priority="P0", comment="c" * (1 + 144 - len(stitch([p0], max_chars=200).prompt)))
    assert len(stitch([p0], max_chars=200).prompt) == 144  # the P0 alone: 144 characters
    others = [item(i, priority="P1", comment="x" * 100) for i in range(1, 4)]
    result = stitch([p0, *others], max_chars=200)
    assert result.annotations == 1 and result.dropped == ["ann_1", "ann_2", "ann_3"]
    assert p0.comment in result.prompt and len(result.prompt) <= 200 and result.truncated
    assert "[+3 dropped]" in result.prompt  # the notice in the room that is left, shortened


def test_a_budget_that_fits_everything_is_not_truncated() -> None:
    result = stitch([item(i) for i in range(5)], max_chars=4000)
    assert not result.truncated and result.dropped == [] and result.annotations == 5
    assert result.as_dict()["stats"] == {"annotations": 5, "chars": len(result.prompt), "files": 1,
                                         "truncated": False}


def test_concise_keeps_the_first_and_last_60_characters_of_a_long_snippet_without_truncating() -> None:
    snippet = "A" * 60 + "m" * 500 + "Z" * 60
    result = stitch([item(0, snippet=snippet)], template="concise")
    assert "A" * 60 + "<<<OMITTED ~500 CHARS>>>" + "Z" * 60 in result.prompt
    assert not result.truncated
    assert shorten("short", "concise") == "short"


def test_detailed_keeps_the_first_and_last_20_lines_with_an_omission_line() -> None:
    snippet = "\n".join(f"line {i}" for i in range(100))
    shortened = shorten(snippet, "detailed").split("\n")
    assert shortened[:20] == [f"line {i}" for i in range(20)]
    assert shortened[-20:] == [f"line {i}" for i in range(80, 100)]
    assert shortened[20] == "<<<OMITTED ~60 LINES>>>"
    assert not stitch([item(0, snippet=snippet)], template="detailed", max_chars=10_000).truncated


def test_a_snippet_with_backticks_gets_a_longer_fence() -> None:
    assert fence_for("plain") == "```"
    assert fence_for("```python\nx\n```") == "````"
    assert fence_for("a ````` b") == "``````"
    prompt = stitch([item(0, snippet="```\ninner\n```")]).prompt
    assert "````python\n```\ninner\n```\n````" in prompt


def test_a_secret_annotation_is_a_one_line_summary() -> None:
    prompt = stitch([item(0, sensitivity="secret", comment="the password is hunter2", snippet="pw = 'hunter2'",
                          tags=("creds",))]).prompt
    assert "hunter2" not in prompt and "creds" not in prompt
    assert "[secret annotation at src/a.py:1]" in prompt


def test_internal_annotations_appear_only_when_the_server_shares_them() -> None:
    items = [item(0, sensitivity="internal", comment="internal detail")]
    assert "internal detail" not in stitch(items).prompt
    assert "internal detail" in stitch(items, include_internal=True).prompt


def test_an_orphaned_annotation_says_its_code_was_not_found() -> None:
    assert "could not be found" in stitch([item(0, snippet=None, status="orphaned")]).prompt


def test_no_annotations_gives_a_short_prompt() -> None:
    result = stitch([])
    assert result.annotations == 0 and not result.truncated and "(no annotations)" in result.prompt


def test_max_chars_and_template_are_validated() -> None:
    for bad in (199, 200_001, True, "4000", 4000.0):
        assert code(lambda b=bad: stitch([], max_chars=b)) == "E_VALIDATION"
    assert code(lambda: stitch([], template="verbose")) == "E_VALIDATION"


def test_stitch_over_many_annotations_is_fast_enough() -> None:
    items = [item(i, priority=["P0", "P1", "P2"][i % 3], file_path=f"f{i % 50}.py") for i in range(10_000)]
    result = stitch(items, max_chars=200_000)
    assert len(result.prompt) <= 200_000 and result.truncated


def utf8_size(obj) -> int:
    return len(json.dumps(obj, ensure_ascii=False).encode("utf-8"))


def test_cap_response_leaves_small_answers_alone() -> None:
    obj = {"items": [{"id": 1}], "nextOffset": 1}
    assert cap_response(obj) is obj


def test_cap_response_cuts_the_item_list_to_256_kb_and_says_so() -> None:
    obj = {"items": [{"id": i, "comment": "é" * 1000} for i in range(300)], "nextOffset": 300}
    capped = cap_response(obj)
    assert utf8_size(capped) <= 262_144 and capped["truncated"] is True
    assert 0 < len(capped["items"]) < 300 and capped["omitted"] == 300 - len(capped["items"])
    assert utf8_size({**capped, "items": obj["items"][: len(capped["items"]) + 1]}) > 262_144


def test_a_cut_page_points_its_next_offset_at_the_first_item_left_out() -> None:
    items = [{"id": i, "comment": "x" * 2000} for i in range(200)]
    capped = cap_response({"items": items, "nextOffset": 300}, limit=100_000)
    assert capped["nextOffset"] == 100 + len(capped["items"])
    last_page = cap_response({"items": items}, limit=100_000, offset=100)
    assert last_page["nextOffset"] == 100 + len(last_page["items"])


def test_cap_response_cuts_a_prompt_and_its_stats_follow() -> None:
    prompt = "漢" * 200_000  # 200 000 characters, 600 000 bytes
    result = {"prompt": prompt, "stats": {"annotations": 1, "chars": 200_000, "files": 1, "truncated": False},
              "dropped": [], "tokenEstimate": 50_000}
    capped = cap_response(result)
    assert utf8_size(capped) <= 262_144
    assert capped["stats"]["truncated"] is True and capped["stats"]["chars"] == len(capped["prompt"])
    assert capped["tokenEstimate"] == math.ceil(len(capped["prompt"]) / 4)


def test_cap_response_refuses_what_cannot_be_cut() -> None:
    assert code(lambda: cap_response({"n": 1}, limit=5)) == "E_VALIDATION"
