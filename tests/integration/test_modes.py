"""Bounty modes chosen at publish: exclusive (the default: the first accepted worker holds the task for the
publish's hold time) and contest (several workers, the first merged PR wins), side by side."""

from __future__ import annotations

from typing import Any

import pytest

from domain.canonical import issue_hash
from domain.errors import Code, Code3Error
from mcp_tools.lifecycle import publish, work
from tests.conftest import REPO, World


def terms_of(w: World, spec: dict[str, Any], amount: int = 1_000_000, **terms: Any) -> dict[str, Any]:
    """The publish arguments with this test's terms only (the shared fixture's own choice of mode left out)."""
    args = {k: v for k, v in w.publish_args(spec, amount).items() if k not in ("mode", "hold_seconds")}
    return {**args, **terms}


def published(w: World, description: str, amount: int = 1_000_000, **terms: Any) -> dict[str, Any]:
    spec = w.specified(description)
    answer = publish.publish_issue_with_metadata(w["alice"], **terms_of(w, spec, amount, **terms))
    return {**answer, "task_id": f"{REPO}#{answer['issue']['number']}", "spec": spec}


def refused(call: Any, *args: Any, **kwargs: Any) -> Code3Error:
    with pytest.raises(Code3Error) as caught:
        call(*args, **kwargs)
    return caught.value


def test_exclusive_is_the_default_and_a_second_worker_is_told_to_choose_another_task(world: World) -> None:
    bounty = published(world, "Users can export their to-do list as CSV")
    first = work.accept_task(world["bob"], bounty["task_id"])
    assert first["labels"] == ["in-progress"]
    conflict = refused(work.accept_task, world["carol"], bounty["task_id"])
    assert conflict.code is Code.INVALID_STATE and "choose another task" in conflict.hint
    assert work.accept_task(world["bob"], bounty["task_id"]) == first  # the holder's repeat: same acceptance
    state = world.ledger.get_bounty(bounty["bounty"]["bounty_id"])
    assert state is not None and state.holder == world.address("bob") and state.entrants == 1


def test_an_exclusive_hold_ends_when_its_time_runs_out(world: World) -> None:
    bounty = published(world, "Users can tag to-dos", hold_seconds=60)
    work.accept_task(world["bob"], bounty["task_id"])
    assert refused(work.accept_task, world["carol"], bounty["task_id"]).code is Code.INVALID_STATE
    world.stack.advance(61)
    assert work.accept_task(world["carol"], bounty["task_id"])["labels"] == ["in-progress"]
    state = world.ledger.get_bounty(bounty["bounty"]["bounty_id"])
    assert state is not None and state.holder == world.address("carol")
    assert refused(work.accept_task, world["bob"], bounty["task_id"]).code is Code.INVALID_STATE


def test_withdrawing_gives_an_exclusive_task_back_to_the_others(world: World) -> None:
    bounty = published(world, "Users can share a list")
    work.accept_task(world["bob"], bounty["task_id"])
    withdrawn = work.withdraw_task(world["bob"], bounty["task_id"])
    assert withdrawn == {"success": True, "bounty_id": bounty["bounty"]["bounty_id"], "labels": ["open"]}
    assert work.withdraw_task(world["bob"], bounty["task_id"]) == withdrawn  # a repeat changes nothing
    assert work.accept_task(world["carol"], bounty["task_id"])["labels"] == ["in-progress"]


def test_a_contest_lets_several_workers_accept_side_by_side(world: World) -> None:
    exclusive = published(world, "Users can archive a list")
    contest = published(world, "Users can rename a list", mode="contest")
    for worker in ("bob", "carol"):
        assert work.accept_task(world[worker], contest["task_id"])["labels"] == ["in-progress"]
    state = world.ledger.get_bounty(contest["bounty"]["bounty_id"])
    assert state is not None and state.entrants == 2
    assert all(world.ledger.is_entrant(contest["bounty"]["bounty_id"], world.address(w)) for w in ("bob", "carol"))
    work.accept_task(world["bob"], exclusive["task_id"])
    assert refused(work.accept_task, world["carol"], exclusive["task_id"]).code is Code.INVALID_STATE
    left = work.withdraw_task(world["carol"], contest["task_id"])  # leaving a contest keeps it started for bob
    assert left["labels"] == ["in-progress"]


def test_accept_best_task_skips_tasks_other_workers_hold(world: World) -> None:
    big = published(world, "Users can import a list", amount=3_000_000)
    small = published(world, "Users can print a list", amount=1_000_000)
    work.accept_task(world["bob"], big["task_id"])
    picked = work.accept_best_task(world["carol"])
    assert picked["selected_task_id"] == small["task_id"]
    nothing = work.accept_best_task(world.services("bob"))  # bob holds big; small is carol's now
    assert nothing["selected_task_id"] is None and nothing["hint"]


def test_mode_and_hold_time_are_terms_of_the_publish_but_not_of_its_hash(world: World) -> None:
    spec = world.specified("Users can pin a to-do")
    args = terms_of(world, spec)
    first = publish.publish_issue_with_metadata(world["alice"], **args, hold_seconds=3600)
    assert publish.publish_issue_with_metadata(world["alice"], **args, hold_seconds=3600) == first
    for other in ({"hold_seconds": 7200}, {"mode": "contest"}, {}):
        conflict = refused(publish.publish_issue_with_metadata, world["alice"], **args, **other)
        assert conflict.code is Code.IDEMPOTENT_REJECTED and "original mode" in conflict.hint, other
    digest = issue_hash(repo=REPO, feature_id=spec["feature_id"], spec_digest=_spec_digest(world, spec),
                        amount=args["amount"], asset="USDT", network=args["network"])
    assert first["issue"]["issue_hash"] == digest  # the seed's key: mode and hold time are not in it


def test_a_contest_takes_no_hold_time_and_an_exclusive_hold_is_bounded(world: World) -> None:
    spec = world.specified("Users can star a to-do")
    args = terms_of(world, spec)
    assert refused(publish.publish_issue_with_metadata, world["alice"], **args, mode="contest",
                   hold_seconds=60).code is Code.VALIDATION
    assert refused(publish.publish_issue_with_metadata, world["alice"], **args,
                   hold_seconds=31 * 24 * 3600).code is Code.VALIDATION
    assert refused(publish.publish_issue_with_metadata, world["alice"], **args, mode="auction").code is Code.VALIDATION


def _spec_digest(world: World, spec: dict[str, Any]) -> str:
    from domain.canonical import sha256_hex

    return sha256_hex((world.project / spec["paths"]["spec"]).read_text(encoding="utf-8"))
