"""spec_mcp.remote_plan / remote_tasks on both stacks (the embedded forge; githubkit against the GitHub
stand-in), through the Anthropic stand-in when a key is configured."""

from __future__ import annotations

import dataclasses

import pytest

from code3.wiring import build_services
from domain.errors import Code3Error
from mcp_tools.lifecycle.remote_artifacts import marker, read_artifacts, remote_plan, remote_tasks
from tests.conftest import REPO, STACKS, World
from tests.fakes.anthropic_server import FakeAnthropic


def _comments(w: World, number: int) -> list[str]:
    return [c.body for c in w.forge.list_comments(REPO, number)]


@STACKS
def test_remote_plan_and_tasks_post_once_and_edit_on_a_repeat(world: World) -> None:
    w = world
    published = w.published()
    url, number = published["issue"]["url"], published["issue"]["number"]
    fid = w["alice"].specs_dir.iterdir().__next__().name
    plan = remote_plan(w["bob"], url, fid)
    assert plan["posted"] and "plan.md" in plan["artifacts"]
    tasks = remote_tasks(w["bob"], url, fid)
    assert tasks["posted"] and tasks["artifacts"]["tasks.md"].count("- [ ] T0") >= 2
    assert remote_plan(w["bob"], url, fid) == plan
    bodies = _comments(w, number)
    assert sum(marker("plan", fid) in b for b in bodies) == 1 and sum(marker("tasks", fid) in b for b in bodies) == 1
    posted = next(b for b in bodies if marker("plan", fid) in b)
    assert read_artifacts(posted) == plan["artifacts"]


@pytest.mark.parametrize("stack", ["remote"], indirect=True)
def test_a_rate_limited_forge_answers_e_gh_rate_limit(world: World) -> None:
    w = world
    published = w.published()
    fid = w["alice"].specs_dir.iterdir().__next__().name
    w.stack.github.rate_limit_next(1, reset_in=3600)
    with pytest.raises(Code3Error) as caught:
        remote_plan(w["bob"], published["issue"]["url"], fid)
    assert caught.value.code.value == "E_GH_RATE_LIMIT"


def test_with_a_key_the_artifacts_come_from_the_model(world: World) -> None:
    w = world
    published = w.published()
    fid = w["alice"].specs_dir.iterdir().__next__().name
    fake = FakeAnthropic().start()
    try:
        settings = dataclasses.replace(w.settings("bob"), anthropic_api_key=fake.api_key, anthropic_base_url=fake.url,
                                       spec_writer="anthropic")  # the opt-in: a key alone calls no model
        bob = build_services(settings)
        try:
            answer = remote_plan(bob, published["issue"]["url"], fid)
        finally:
            bob.close()
        assert fake.calls == 1 and "(written by the model)" in answer["artifacts"]["plan.md"]
        assert "export their to-do list as CSV" in fake.requests[0]["messages"][0]["content"]
    finally:
        fake.stop()


def test_a_key_without_the_opt_in_plans_from_the_template_and_calls_no_model(world: World) -> None:
    w = world
    published = w.published()
    fid = w["alice"].specs_dir.iterdir().__next__().name
    fake = FakeAnthropic().start()
    try:
        settings = dataclasses.replace(w.settings("bob"), anthropic_api_key=fake.api_key, anthropic_base_url=fake.url)
        bob = build_services(settings)
        try:
            answer = remote_plan(bob, published["issue"]["url"], fid)
        finally:
            bob.close()
        assert fake.calls == 0, "an inherited ANTHROPIC_API_KEY is no opt-in"
        assert "(written by the model)" not in answer["artifacts"]["plan.md"] and answer["artifacts"]["plan.md"].strip()
    finally:
        fake.stop()
