import time

import pytest

from adapters.retry import RetryBudgetSpent, RetryPolicy


class Flaky(Exception):
    def __init__(self, wait: float | None = None) -> None:
        self.wait = wait


class Final(Exception):
    pass


def policy(**kw) -> RetryPolicy:
    return RetryPolicy("test", is_transient=lambda e: isinstance(e, Flaky),
                       wait_hint=lambda e: getattr(e, "wait", None), **kw)


def test_transient_failures_are_retried_waiting_what_the_service_asked() -> None:
    calls, slept = [], []

    def fn() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise Flaky(wait=2.5)
        return "ok"

    assert policy().call(fn, sleep=slept.append) == "ok"
    assert len(calls) == 3 and slept == [2.5, 2.5]


def test_a_final_failure_is_raised_at_once() -> None:
    calls = []

    def fn() -> None:
        calls.append(1)
        raise Final()

    with pytest.raises(Final):
        policy().call(fn, sleep=lambda s: None)
    assert len(calls) == 1


def test_a_wait_past_the_budget_stops_at_once_and_says_when_to_retry() -> None:
    calls, slept = [], []

    def fn() -> None:
        calls.append(1)
        raise Flaky(wait=3600)

    with pytest.raises(RetryBudgetSpent) as caught:
        policy(budget_s=60).call(fn, sleep=slept.append)
    assert len(calls) == 1 and slept == []
    assert caught.value.retry_at >= time.time() + 3590, "come back when the service said"


def test_attempts_are_bounded() -> None:
    calls = []

    def fn() -> None:
        calls.append(1)
        raise Flaky()

    with pytest.raises(RetryBudgetSpent):
        policy(attempts=4, base_wait_s=0.01).call(fn, sleep=lambda s: None)
    assert len(calls) == 4


def test_the_mirror_forge_has_its_own_shorter_budget() -> None:
    from adapters.github import GitHubForge

    forge = GitHubForge("ghp_" + "x" * 36, base_url="http://127.0.0.1:9")
    short = forge.with_budget(10.0)
    assert short.policy.budget_s == 10.0
    assert forge.policy.budget_s != 10.0  # the tools keep theirs
    assert short.base_url == forge.base_url
