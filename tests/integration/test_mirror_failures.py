"""The forge mirror against the GitHub stand-in over real HTTP (issue 20): an outage or a rate limit stops the
mirror's round at that event and the same event is tried again next round — no dead letter, `code3 doctor`
says the mirror is behind while it lasts, and the comment appears once after recovery; a final answer (404,
422) makes the event a dead letter and the mirror goes on."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from code3 import wiring
from code3.doctor import diagnose, report
from mcp_tools.lifecycle.forge_mirror import ForgeMirror
from projections.operations import FAILING_ROUNDS, snapshot
from projections.runner import Runner, dead_letters
from tests.conftest import REPO, World

REMOTE = pytest.mark.parametrize("stack", ["remote"], indirect=True)
SQLITE = pytest.mark.parametrize("database_url", [None])  # the forge is the subject: one store is enough
MARKER = re.compile(r"<!-- code3:[^>]+-->")


def mirror_of(w: World) -> tuple[ForgeMirror, Any]:
    """The mirror with a forge that gives up at the first transient failure (no retry budget), as one whose
    budget ran out after minutes of an outage."""
    forge = wiring.forge(dataclasses.replace(w.settings("alice"), github_retry_budget=0.0), "alice")
    return ForgeMirror(w["alice"].store, forge), forge


def markers(forge: Any, number: int) -> list[str]:
    return [m.group(0) for c in forge.list_comments(REPO, number) if (m := MARKER.search(c.body))]


@REMOTE
@SQLITE
@pytest.mark.parametrize("failure", ["bad_gateway", "secondary_rate_limit"])
def test_a_forge_outage_is_retried_next_round_and_the_comment_appears_once(world: World, failure: str) -> None:
    w = world
    published = w.published()
    number = published["issue"]["number"]
    alice = w["alice"]
    mirror, forge = mirror_of(w)
    runner = Runner(alice.store, alice.views, owner="worker-1")
    github = w.stack.github
    if failure == "bad_gateway":
        github.fail_next(FAILING_ROUNDS, 502)
    else:
        github.rate_limit_next(FAILING_ROUNDS, retry_after=1, status=429)
    try:
        stopped_at = []
        for _ in range(FAILING_ROUNDS):
            runner.catch_up(mirror)
            stopped_at.append(runner.position(mirror.name))
        assert len(set(stopped_at)) == 1, "each round stops at the same event"
        assert dead_letters(alice.views) == []
        assert markers(forge, number) == []
        snap = snapshot(alice.store, alice.views)
        stuck = snap.stuck()["forge_mirror"]
        assert stuck["failures"] == FAILING_ROUNDS and stuck["behind"] > 0 and "E_GH_RATE_LIMIT" in stuck["error"]
        assert snap.metrics(None)["failing"] == {"forge_mirror": FAILING_ROUNDS}
        checks = {c.name: c for c in diagnose(w.settings("alice"))}
        lag = checks["projection lag"]
        assert not lag.ok and "forge_mirror by" in lag.detail and "transient failure" in lag.detail, report(
            list(checks.values()))

        runner.catch_up(mirror)  # the forge is back
        assert runner.position(mirror.name) == alice.store.recorder.max_notification_id()
        first = markers(forge, number)
        assert len(first) == len(set(first)) == 1, "the bounty's creation, commented once"
        runner.catch_up(mirror)
        assert markers(forge, number) == first
        assert dead_letters(alice.views) == [] and snapshot(alice.store, alice.views).failing == {}
        assert snapshot(alice.store, alice.views).metrics(None)["failing"] == {"forge_mirror": 0}
        assert {c.name: c for c in diagnose(w.settings("alice"))}["projection lag"].ok
    finally:
        runner.release(mirror.name)
        forge.close()


@REMOTE
@SQLITE
@pytest.mark.parametrize(("status", "code"), [(404, "E_NOT_FOUND"), (422, "E_VALIDATION")])
def test_a_final_forge_answer_is_a_dead_letter_and_the_mirror_goes_on(world: World, status: int, code: str) -> None:
    w = world
    w.published()
    alice = w["alice"]
    mirror, forge = mirror_of(w)
    runner = Runner(alice.store, alice.views, owner="worker-1")
    w.stack.github.fail_next(1, status)
    try:
        runner.catch_up(mirror)
        [dead] = dead_letters(alice.views)
        assert dead["projection"] == "forge_mirror" and dead["event"] == "Bounty.Created"
        assert dead["error"].startswith(code), dead
        assert runner.position(mirror.name) == alice.store.recorder.max_notification_id(), "passed over"
        assert snapshot(alice.store, alice.views).failing == {}
    finally:
        runner.release(mirror.name)
        forge.close()
