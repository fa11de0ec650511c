"""One event no read model can apply never stops the rest (finding 3 of the trust review): it becomes a
dead letter that `code3 doctor` and `audit verify` report, and every later event is still applied."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from domain.bounties.issue import Issue
from mcp_tools.lifecycle import audit
from projections.bounties import board
from projections.bounties.board import BountyBoard
from projections.runner import dead_letters, follow
from tests.unit.handler_world import AMOUNT, REPO, MemoryWorld
from tests.unit.test_handlers import _published


@pytest.fixture
def w(tmp_path: Path) -> Iterator[MemoryWorld]:
    world = MemoryWorld(tmp_path)
    yield world
    world.close()


def test_an_event_the_board_cannot_apply_is_a_dead_letter_and_the_board_goes_on(w: MemoryWorld) -> None:
    # written before inputs were bounded: a deadline no SQL integer holds (the log cannot be edited)
    w.store.save(Issue(issue_hash="f" * 64, repo=REPO, feature_id="009-old", spec_path="specs/009-old/spec.md",
                       spec_digest="0" * 64, amount=AMOUNT, asset="USDT", network="local", labels=["code3"],
                       assignees=[], effort=1, deadline=10**30))
    published = _published(w)
    follow(w.store, w.views, BountyBoard())
    letters = dead_letters(w.views)
    assert [(d["projection"], d["event"]) for d in letters] == [("bounty_board", "Issue.PublishRequested")]
    assert [row["bounty_id"] for row in board.open_bounties(w.views)] == [published["bounty"]["bounty_id"]]
    problems = audit.verify(w["alice"]).problems
    assert any("could not apply" in p for p in problems)
