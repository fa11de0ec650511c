"""Re-anchoring: exact, moved, fuzzy or orphaned, never silently wrong; and the benchmark's short run."""

from __future__ import annotations

import time

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from benchmarks.reanchor import run_cases
from domain.errors import Code3Error
from domain.knowledge.anchor import Anchor, reanchor, split_lines

FILE = "\n".join([
    "import os",
    "",
    "def load_config(path):",
    "    with open(path) as fh:",
    "        data = fh.read()",
    "    return parse(data)",
    "",
    "def parse(text):",
    "    items = text.split(',')",
    "    return [i.strip() for i in items]",
    "",
    "def main():",
    "    print(load_config('x'))",
]) + "\n"


def lines(text: str) -> list[str]:
    return split_lines(text)


def test_capture_keeps_the_quote_three_lines_of_context_and_the_digest() -> None:
    a = Anchor.capture(FILE, 4, 5)
    assert a.selected_text == "    with open(path) as fh:\n        data = fh.read()"
    assert a.context_before == "import os\n\ndef load_config(path):"
    assert a.context_after == "    return parse(data)\n\ndef parse(text):"
    assert a.occurrences == 1 and len(a.file_digest) == 64


def test_capture_refuses_ranges_outside_the_file() -> None:
    for start, end in ((0, 1), (3, 2), (13, 14)):
        with pytest.raises(Code3Error) as caught:
            Anchor.capture(FILE, start, end)
        assert caught.value.code.value == "E_VALIDATION"


def test_an_unchanged_file_is_exact_at_the_same_lines() -> None:
    r = reanchor(Anchor.capture(FILE, 8, 10), FILE)
    assert (r.status, r.start_line, r.end_line, r.confidence) == ("exact", 8, 10, 1.0)


def test_an_edit_below_keeps_the_anchor_exact() -> None:
    r = reanchor(Anchor.capture(FILE, 8, 10), FILE + "# trailing\n")
    assert (r.status, r.start_line, r.end_line) == ("exact", 8, 10)


def test_lines_inserted_above_move_the_anchor_down() -> None:
    edited = "#!/usr/bin/env python\n# header\n" + FILE
    r = reanchor(Anchor.capture(FILE, 8, 10), edited)
    assert (r.status, r.start_line, r.end_line, r.confidence) == ("moved", 10, 12, 1.0)


def test_a_block_moved_elsewhere_is_found_there() -> None:
    src = lines(FILE)
    block = src[7:10]  # parse()
    edited = "\n".join(src[:7] + src[10:] + ["", *block]) + "\n"
    r = reanchor(Anchor.capture(FILE, 8, 10), edited)
    assert r.status == "moved" and lines(edited)[r.start_line - 1 : r.end_line] == block


def test_a_slightly_edited_block_is_a_fuzzy_match_with_a_confidence() -> None:
    edited = FILE.replace("items = text.split(',')", "items = text.split(';')")
    r = reanchor(Anchor.capture(FILE, 8, 10), edited)
    assert (r.status, r.start_line, r.end_line) == ("fuzzy", 8, 10)
    assert 0.8 <= r.confidence < 1.0


def test_a_reindented_block_is_found_with_whitespace_ignored() -> None:
    edited = FILE.replace("    items = text.split(',')", "        items = text.split(',')")
    r = reanchor(Anchor.capture(FILE, 9, 9), edited)
    assert (r.status, r.start_line, r.end_line) == ("fuzzy", 9, 9)


def test_a_deleted_block_is_orphaned() -> None:
    src = lines(FILE)
    edited = "\n".join(src[:7] + src[10:]) + "\n"
    r = reanchor(Anchor.capture(FILE, 8, 10), edited)
    assert r.status == "orphaned" and r.start_line is None and r.reason


def test_a_missing_file_orphans_the_anchor() -> None:
    assert reanchor(Anchor.capture(FILE, 1, 1), None).status == "orphaned"


def test_a_duplicated_block_with_no_context_to_tell_them_apart_is_orphaned() -> None:
    text = "a = 1\n" + "x = compute(a, b)\n" * 3 + "b = 2\n"
    anchor = Anchor.capture(text, 3, 3)  # the middle copy: same neighbours above and below as the others nearly
    edited = "z = 0\n" + "x = compute(a, b)\n" * 5
    assert reanchor(anchor, edited).status == "orphaned"


def test_a_duplicate_elsewhere_is_told_apart_by_the_context() -> None:
    src = lines(FILE)
    block = src[7:10]
    edited = "\n".join([*src, "", "# copy", *block, "# end"]) + "\n"
    r = reanchor(Anchor.capture(FILE, 8, 10), edited)
    assert (r.status, r.start_line, r.end_line) == ("exact", 8, 10)


def test_a_short_common_line_found_elsewhere_without_its_context_is_orphaned() -> None:
    text = "\n".join(["def f():", "    x = 1", "    return None", "", "def g():", "    return None", ""]) + "\n"
    anchor = Anchor.capture(text, 3, 3)
    edited = "\n".join(["def f():", "    x = 1", "", "def g():", "    y = 2", "    return None", ""]) + "\n"
    assert reanchor(anchor, edited).status == "orphaned"


def test_blank_selections_are_found_only_by_their_context() -> None:
    anchor = Anchor.capture(FILE, 2, 2)  # the blank line after "import os"
    assert reanchor(anchor, FILE).status == "exact"
    r = reanchor(anchor, "# new\n" + FILE)
    assert (r.status, r.start_line) == ("moved", 3)
    assert reanchor(anchor, FILE.replace("import os\n\n", "import os\n")).status == "orphaned"


def test_large_files_stay_fast() -> None:
    body = [f"    value_{i} = compute_{i % 97}(x, {i})" for i in range(20_000)]
    text = "\n".join(body) + "\n"
    anchor = Anchor.capture(text, 10_000, 10_040)
    edited = "\n".join(body[:500] + body[600:10_010] + ["    changed = 1"] + body[10_011:]) + "\n"
    start = time.perf_counter()
    r = reanchor(anchor, edited)
    assert time.perf_counter() - start < 2.0
    assert (r.status, r.start_line, r.end_line) == ("fuzzy", 9_900, 9_940)


def test_a_thousand_line_block_in_a_fifty_thousand_line_file_is_found_in_seconds() -> None:
    body = [f"    v{i * 7919 % 100_003} = f({i})" for i in range(50_000)]
    anchor = Anchor.capture("\n".join(body) + "\n", 20_001, 21_000)
    edited = [*body[:100], "# new", *body[100:20_500], "    changed = 1", *body[20_501:]]
    start = time.perf_counter()
    r = reanchor(anchor, "\n".join(edited) + "\n")
    assert time.perf_counter() - start < 5.0
    assert (r.status, r.start_line, r.end_line) == ("fuzzy", 20_002, 21_001)
    assert reanchor(anchor, "\n".join(["x = 0"] * 20_000) + "\n").status == "orphaned"


def test_the_reanchor_benchmark_short_run_is_at_least_95_percent_correct_and_never_wrong() -> None:
    summary = run_cases(300, seed=11)
    assert summary.wrong == 0, [(c.kind, c.truth) for c in summary.wrong_cases]
    assert summary.anchored_share >= 0.95
    assert summary.correct / summary.cases >= 0.95


WORDS = ["x = 1", "return x", "pass", "", "y = f(x)", "if x:", "    z = g(y, x)", "}"]


@st.composite
def edits_outside_the_block(draw):
    """A file from a small vocabulary (many repeated lines), a block, and lines inserted or deleted away
    from the block and its context, so the block's true place is known."""
    lines = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=40))
    start = draw(st.integers(1, len(lines)))
    end = draw(st.integers(start, min(len(lines), start + 4)))
    anchor = Anchor.capture("\n".join(lines) + "\n", start, end)
    above, below = lines[: max(0, start - 1 - 3)], lines[end + 3 :]
    near = lines[max(0, start - 1 - 3) : end + 3]
    if draw(st.booleans()):
        at = draw(st.integers(0, len(above)))
        above = above[:at] + draw(st.lists(st.sampled_from(WORDS), max_size=10)) + above[at:]
    elif above:
        at = draw(st.integers(0, len(above) - 1))
        above = above[:at] + above[at + draw(st.integers(1, len(above) - at)) :]
    if draw(st.booleans()):
        at = draw(st.integers(0, len(below)))
        below = below[:at] + draw(st.lists(st.sampled_from(WORDS), max_size=10)) + below[at:]
    shift = len(above) - max(0, start - 1 - 3)
    return anchor, "\n".join(above + near + below) + "\n", (start + shift, end + shift)


@settings(deadline=None)
@given(case=edits_outside_the_block())
def test_edits_away_from_the_block_never_move_the_anchor_anywhere_wrong(case) -> None:
    anchor, text, truth = case
    r = reanchor(anchor, text)
    assert not r.found or (r.start_line, r.end_line) == truth, r


def _lookalike_copy(anchor: Anchor, new: list[str], truth: tuple[int, int]) -> bool:
    """Another copy of the block whose neighbours equal the stored context: no local method can tell them apart."""
    k = anchor.end_line - anchor.start_line + 1
    quote = anchor.selected_text.split("\n")
    for i in range(len(new) - k + 1):
        if new[i : i + k] == quote and (i + 1, i + k) != truth:
            before = "\n".join(new[max(0, i - 3) : i])[-200:]
            after = "\n".join(new[i + k : i + k + 3])[:200]
            if before.endswith(anchor.context_before) and after.startswith(anchor.context_after):
                return True
    return False


@st.composite
def moved_blocks(draw):
    vocabulary = [f"v{i} = f({i})" for i in range(12)] + ["", "pass", "return x", "}"]
    lines = draw(st.lists(st.sampled_from(vocabulary), min_size=3, max_size=40))
    start = draw(st.integers(1, len(lines)))
    end = draw(st.integers(start, min(len(lines), start + 4)))
    anchor = Anchor.capture("\n".join(lines) + "\n", start, end)
    block, rest = lines[start - 1 : end], lines[: start - 1] + lines[end:]
    at = draw(st.integers(0, len(rest)))
    new = rest[:at] + block + rest[at:]
    truth = (at + 1, at + len(block))
    assume(new != lines and not _lookalike_copy(anchor, new, truth))
    return anchor, "\n".join(new) + "\n", truth


@settings(deadline=None)
@given(case=moved_blocks())
def test_a_moved_block_is_found_where_it_went_or_orphaned_never_elsewhere(case) -> None:
    anchor, text, truth = case
    r = reanchor(anchor, text)
    assert not r.found or (r.start_line, r.end_line) == truth, r
