"""Open questions: a spec's `[NEEDS CLARIFICATION: …]` markers counted by specify, plan and publish, listed on the
issue, and refused when the project asks for finished specs (CODE3_REFUSE_OPEN_QUESTIONS)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domain.bounties.open_questions import UNWORDED, open_questions
from domain.errors import Code, Code3Error
from mcp_tools.lifecycle import publish, specs
from tests.unit.handler_world import AMOUNT, REPO, MemoryWorld

FINISHED = "# Feature Specification: CSV export\n\n**Input**: User description: \"export as CSV\"\n\nAll answered.\n"


@pytest.fixture
def w(tmp_path: Path) -> Iterator[MemoryWorld]:
    world = MemoryWorld(tmp_path)
    yield world
    world.close()


def _publish(w: MemoryWorld, feature: str) -> dict[str, Any]:
    return dict(publish.publish_issue_with_metadata(
        w["alice"], repo=REPO, feature_id=feature, spec_path=f"specs/{feature}/spec.md", amount=str(AMOUNT),
        asset="USDT", network=w.ledger.network))


def _hand_written(w: MemoryWorld, feature: str, text: str) -> None:
    directory = w.project / "specs" / feature
    directory.mkdir(parents=True)
    (directory / "spec.md").write_text(text, encoding="utf-8")


def test_markers_are_found_in_order_with_their_lines_and_a_repeat_counts_once() -> None:
    text = ("intro\n- [NEEDS CLARIFICATION: who uses it?]\n[NEEDS CLARIFICATION]\n"
            "again [NEEDS CLARIFICATION:   who   uses it?]\nEvery NEEDS CLARIFICATION marker is resolved\n"
            "[NEEDS CLARIFICATION: the limits] and [NEEDS CLARIFICATION: unclosed\n")
    found = open_questions(text)
    assert [(q.line, q.question) for q in found] == [(2, "who uses it?"), (3, UNWORDED), (6, "the limits")]
    assert open_questions("no markers here, not even NEEDS CLARIFICATION in prose") == []


def test_specify_plan_and_publish_count_the_open_questions_and_warn_of_a_template(w: MemoryWorld) -> None:
    alice = w["alice"]
    spec = specs.specify(alice, "Users can export their to-do list as CSV")
    feature, count = spec["feature_id"], spec["open_questions"]
    text = (w.project / spec["paths"]["spec"]).read_text(encoding="utf-8")
    assert count == len(open_questions(text)) > 0
    [said] = spec["warnings"]
    assert "still a template to fill" in said and f"{count} open question" in said
    planned = specs.plan(alice, feature)
    assert planned["open_questions"] == count and "template" in planned["warnings"][0]
    answer = _publish(w, feature)
    assert answer["open_questions"] == count and any("template" in x for x in answer["warnings"])
    [issue] = w.forge_state.issues.values()
    listed = issue.body.split("## Open questions", 1)[1].split("```code3-meta", 1)[0]
    assert all(f"- {q.question}" in listed for q in open_questions(text))


def test_a_finished_spec_has_no_open_question_and_no_warning(w: MemoryWorld) -> None:
    _hand_written(w, "001-csv", FINISHED)
    planned = specs.plan(w["alice"], "001-csv")
    assert planned["open_questions"] == 0 and "warnings" not in planned
    answer = _publish(w, "001-csv")
    assert answer["open_questions"] == 0 and "warnings" not in answer
    [issue] = w.forge_state.issues.values()
    assert "Open questions" not in issue.body


def test_the_refusal_setting_stops_plan_and_publish_and_changes_nothing(w: MemoryWorld) -> None:
    alice = w["alice"]
    alice.refuse_open_questions = True
    spec = specs.specify(alice, "Users can export their to-do list as CSV")  # specify still writes the template
    feature = spec["feature_id"]
    before = w.store.recorder.max_notification_id()
    for call in (lambda: specs.plan(alice, feature), lambda: _publish(w, feature)):
        with pytest.raises(Code3Error) as caught:
            call()
        refused = caught.value
        assert refused.code is Code.PRECONDITION and f"{spec['open_questions']} open question" in refused.message
        assert "line " in refused.message and "CODE3_REFUSE_OPEN_QUESTIONS" in refused.hint
    assert not (w.project / "specs" / feature / "plan.md").exists()
    assert w.forge_state.issues == {} and w.ledger.list_bounties() == []
    assert w.store.recorder.max_notification_id() == before
    _hand_written(w, "009-csv", FINISHED)
    assert specs.plan(alice, "009-csv")["open_questions"] == 0, "a finished spec goes through"
