"""The cheap re-anchoring a read always does, and the allowance beyond it (issue 18, class 4)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.knowledge.anchor import Anchor, quick, reanchor, search_cost, stale
from domain.knowledge.annotation import Annotation
from mcp_tools.ai_loom import reading as reading_module
from mcp_tools.ai_loom.reading import UNREAD, ReadBudget

TEXT = "".join(f"line {i} = f({i})\n" for i in range(1, 101))


def _anchor() -> Anchor:
    return Anchor.capture(TEXT, 40, 42)


def test_quick_settles_an_unchanged_file_and_a_gone_one() -> None:
    assert quick(_anchor(), TEXT).status == "exact"  # type: ignore[union-attr]
    assert quick(_anchor(), None).status == "orphaned"  # type: ignore[union-attr]


def test_quick_settles_a_block_whose_lines_and_context_are_unchanged_in_place() -> None:
    edited = TEXT.replace("line 90 = f(90)", "line 90 = g(90)")
    found = quick(_anchor(), edited)
    assert found is not None and (found.status, found.start_line, found.end_line) == ("exact", 40, 42)
    searched = reanchor(_anchor(), edited)  # what the full search answers
    assert (searched.status, searched.start_line, searched.end_line) == ("exact", 40, 42)


def test_quick_leaves_to_the_search_a_shifted_block_a_copy_or_a_changed_context() -> None:
    quote = "\n".join(TEXT.split("\n")[39:42]) + "\n"
    assert quick(_anchor(), "new\n" + TEXT) is None  # moved: only a search finds where
    assert quick(_anchor(), TEXT + quote) is None  # a copy elsewhere: which one is ours is the search's call
    assert quick(_anchor(), TEXT.replace("line 38 = f(38)", "line 38 = h(38)")) is None


def test_a_read_defers_a_search_costlier_than_its_allowance_and_shows_the_last_lines() -> None:
    moved = "new\n" + TEXT
    budget = ReadBudget(chars=search_cost(_anchor(), moved) - 1)
    assert budget.find(_anchor(), moved) == stale(_anchor())
    assert (stale(_anchor()).start_line, stale(_anchor()).end_line) == (40, 42) and not stale(_anchor()).found
    roomy = ReadBudget(chars=search_cost(_anchor(), moved) * 2 - 1)
    assert roomy.find(_anchor(), moved).start_line == 41
    assert roomy.find(_anchor(), moved).status == "stale", "the allowance is per read, and spent"


def test_no_search_starts_once_a_read_has_spent_its_time(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    budget = ReadBudget(seconds=1.0, read_seconds=100.0, clock=lambda: now[0])

    def searched(anchor: Anchor, text: str | None) -> object:
        now[0] += 5.0  # this search took 5 s by the clock
        return reanchor(anchor, text)

    monkeypatch.setattr(reading_module, "reanchor", searched)
    moved = "new\n" + TEXT
    assert budget.find(_anchor(), moved).status == "moved"
    assert budget.find(_anchor(), moved).status == "stale"


def test_after_its_time_a_read_opens_no_file_and_settles_nothing_more() -> None:
    now = [0.0]
    budget = ReadBudget(read_seconds=0.6, clock=lambda: now[0])
    assert budget.find(_anchor(), TEXT).status == "exact"
    assert budget.find(_anchor(), UNREAD).status == "stale", "a file the read did not open"
    now[0] = 0.6
    assert budget.expired() and budget.find(_anchor(), TEXT) == stale(_anchor())


def test_the_cost_grows_linearly_with_the_file_and_the_quote() -> None:
    small = Anchor.capture(TEXT, 1, 1)
    big = Anchor.capture(TEXT, 1, 100)
    assert search_cost(small, TEXT * 2) - search_cost(small, TEXT) == len(TEXT)
    assert search_cost(big, TEXT) - search_cost(small, TEXT) == 20 * (len(big.selected_text) - len(small.selected_text))


def test_a_stale_result_is_never_recorded() -> None:
    annotation = Annotation.create(file_path="a.py", anchor=_anchor(), comment="c", at=datetime.now(UTC))
    version = annotation.version
    assert annotation.follow(stale(_anchor()), "new\n" + TEXT, at=datetime.now(UTC)) is False
    assert annotation.version == version and annotation.status != "orphaned"
