"""Retry policies for the real services, in one place (tenacity).

Only transient failures are retried: rate limits (waiting what the service says), 5xx, timeouts,
sequence-number races. Anything else (a 4xx, a Move abort) is final and raised at once. When a wait
would overrun the budget, we stop at once and say when to come back instead of sleeping for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception

T = TypeVar("T")


class RetryBudgetSpent(Exception):
    """Still failing when the budget ran out; `retry_at` (unix seconds) is when trying again may work."""

    def __init__(self, last: BaseException, retry_at: float, attempts: int) -> None:
        super().__init__(f"gave up after {attempts} attempt(s): {last}")
        self.last = last
        self.retry_at = retry_at
        self.attempts = attempts


@dataclass(frozen=True)
class RetryPolicy:
    """`is_transient` says whether to retry; `wait_hint` how long the service asked us to wait (or None)."""

    name: str
    is_transient: Callable[[BaseException], bool]
    wait_hint: Callable[[BaseException], float | None]
    attempts: int = 5
    budget_s: float = 60.0
    base_wait_s: float = 0.5
    max_wait_s: float = 30.0

    def call(self, fn: Callable[[], T], sleep: Callable[[float], None] = time.sleep,
             clock: Callable[[], float] = time.monotonic) -> T:
        started = clock()

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            hinted = self.wait_hint(exc) if exc is not None else None
            backoff = min(self.base_wait_s * 2 ** (state.attempt_number - 1), self.max_wait_s)
            return max(hinted if hinted is not None else backoff, 0.0)

        def stop(state: RetryCallState) -> bool:
            if state.attempt_number >= self.attempts:
                return True
            return clock() - started + wait(state) > self.budget_s

        retrying = Retrying(retry=retry_if_exception(self.is_transient), wait=wait, stop=stop, sleep=sleep,
                            reraise=True)
        attempts = 0
        try:
            for attempt in retrying:
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    return fn()
        except BaseException as exc:
            if not self.is_transient(exc):
                raise
            hinted = self.wait_hint(exc)
            retry_at = time.time() + (hinted if hinted is not None else self.base_wait_s * 2 ** attempts)
            raise RetryBudgetSpent(exc, retry_at, attempts) from exc
        raise AssertionError("unreachable")
