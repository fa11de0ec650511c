"""How GitHub failures are told apart: what is retried (and how long to wait), and what each final one means.

Rate limits, 5xx and dropped connections are transient and go through the GitHub retry policy, waiting
what `Retry-After` / `x-ratelimit-reset` say. Every 4xx is final and maps at once to a Code3 error code.
githubkit is imported only when a failure is being looked at, so importing code3 stays cheap.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from typing import Any

from adapters.github_git import GitTransient
from adapters.retry import RetryBudgetSpent, RetryPolicy
from adapters.scrub import scrub
from domain.errors import Code, Code3Error

TOKEN_HINT = "set GITHUB_TOKEN to a valid token (classic: repo scope; fine-grained: issues, pull requests and " \
             "contents read/write on the repository)"


class ForgeFailure(RuntimeError):
    """A GitHub or git failure that is neither transient nor a known answer, its text scrubbed of secrets."""


def github_policy(attempts: int = 5, budget_s: float = 120.0) -> RetryPolicy:
    """The GitHub retry policy: a few attempts, waiting at most `budget_s` in all before answering E_GH_RATE_LIMIT."""
    return RetryPolicy("github", is_transient=is_transient, wait_hint=wait_hint, attempts=attempts,
                       budget_s=budget_s, base_wait_s=1.0, max_wait_s=30.0)


def _response(exc: BaseException) -> Any:
    from githubkit.exception import RequestFailed

    return exc.response if isinstance(exc, RequestFailed) else None


def _is_rate_limit(exc: BaseException) -> bool:
    from githubkit.exception import RateLimitExceeded

    resp = _response(exc)
    return isinstance(exc, RateLimitExceeded) or (resp is not None and resp.status_code == 429)


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, GitTransient):
        return True
    if isinstance(exc, Code3Error) or type(exc).__module__.split(".")[0] != "githubkit":
        return False
    from githubkit.exception import RequestError, RequestFailed

    if isinstance(exc, RequestFailed):
        return _is_rate_limit(exc) or exc.response.status_code >= 500
    return isinstance(exc, RequestError)  # the transport failed: timeout, refused or reset connection


def maybe_committed(exc: BaseException) -> bool:
    """A failure after which a POST may have taken effect (5xx, timeout, lost answer): look before resending."""
    if type(exc).__module__.split(".")[0] != "githubkit":
        return False
    import httpx
    from githubkit.exception import RequestError, RequestFailed

    if isinstance(exc, RequestFailed):
        return exc.response.status_code >= 500
    return isinstance(exc, RequestError) and not isinstance(exc.exc, httpx.ConnectError | httpx.ConnectTimeout)


def reset_epoch(exc: BaseException) -> float | None:
    """When GitHub said the limit resets (unix seconds), from `Retry-After` or `x-ratelimit-reset`."""
    resp = _response(exc)
    if resp is None:
        return None
    headers = resp.headers
    retry_after = headers.get("retry-after")
    if retry_after is not None and retry_after.strip().isdigit():
        return time.time() + int(retry_after)
    reset = headers.get("x-ratelimit-reset")
    if reset is not None and reset.strip().isdigit() and (headers.get("x-ratelimit-remaining") == "0"
                                                          or _is_rate_limit(exc)):
        return float(int(reset))
    return None


def wait_hint(exc: BaseException) -> float | None:
    """Seconds GitHub asked us to wait: `Retry-After`, else until `x-ratelimit-reset`, else githubkit's guess."""
    resp = _response(exc)
    if resp is not None:
        retry_after = resp.headers.get("retry-after")
        if retry_after is not None and retry_after.strip().isdigit():
            return float(int(retry_after))
        reset = reset_epoch(exc)
        if reset is not None:
            return max(reset - time.time(), 0.0)
    retry_after_td = getattr(exc, "retry_after", None)
    return retry_after_td.total_seconds() if retry_after_td is not None else None


def _github_message(resp: Any) -> str:
    """What GitHub said, scrubbed: an error text may echo the request, the token included."""
    return scrub(_raw_message(resp))


def _raw_message(resp: Any) -> str:
    try:
        data = resp.raw_response.json()
    except Exception:
        return resp.raw_response.reason_phrase or ""
    if not isinstance(data, dict):
        return ""
    details = [e.get("message") or f"{e.get('field')} {e.get('code')}" for e in data.get("errors") or []
               if isinstance(e, dict)]
    return "; ".join(str(p) for p in [data.get("message"), *details] if p)


def final_error(exc: BaseException, what: str) -> Code3Error | None:
    """The Code3 error for a final GitHub answer, or None when `exc` is not a GitHub answer at all."""
    resp = _response(exc)
    if resp is None:
        return None
    status = resp.status_code
    said = _github_message(resp)
    if status == 404:
        return Code3Error(Code.NOT_FOUND, f"{what}: not found on GitHub",
                          "check owner/repo and the number; GitHub also answers 404 for a private repository the "
                          "token cannot see")
    if status == 401:
        return Code3Error(Code.UNAUTHORIZED, f"{what}: GitHub refused the token ({said or 'Bad credentials'})",
                          TOKEN_HINT)
    if status == 403:
        return Code3Error(Code.UNAUTHORIZED, f"{what}: forbidden by GitHub ({said or 'no permission'})", TOKEN_HINT)
    if status == 422 and "already exists" in said.lower():
        return Code3Error(Code.EXISTS, f"{what}: {said}", "use the existing one")
    if 400 <= status < 500:
        return Code3Error(Code.VALIDATION, f"{what}: GitHub answered {status} ({said})",
                          "fix the request as GitHub's message says")
    return None


def _where(exc: BaseException) -> str:
    """` at <url>` of a transport failure, so a wrong CODE3_GITHUB_API_URL shows in the message."""
    try:
        return scrub(f" at {exc.exc.request.url.copy_with(query=None)}")  # type: ignore[attr-defined]
    except Exception:
        return ""


def budget_spent_error(what: str, spent: RetryBudgetSpent) -> Code3Error:
    """E_GH_RATE_LIMIT saying when to come back: GitHub's reset time when it gave one, else our estimate."""
    last = spent.last
    at = reset_epoch(last) or spent.retry_at
    when = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    wait = max(math.ceil(at - time.time()), 0)
    resp = _response(last)
    if _is_rate_limit(last):
        kind = "secondary" if type(last).__name__.startswith("Secondary") else "primary"
        cause = f"GitHub rate limit exceeded ({kind}, HTTP {resp.status_code if resp is not None else '?'})"
    elif resp is not None:
        cause = f"GitHub kept answering HTTP {resp.status_code}"
    elif isinstance(last, GitTransient):
        cause = f"git over HTTP kept failing ({scrub(last)})"
    else:
        cause = f"GitHub did not answer{_where(last)} ({type(getattr(last, 'exc', last)).__name__})"
        when = f"{when} (in {wait} s), and check that the API URL (CODE3_GITHUB_API_URL) is right and reachable"
        return Code3Error(Code.GH_RATE_LIMIT, f"{what}: {cause} after {spent.attempts} attempt(s)",
                          f"try again after {when}")
    return Code3Error(Code.GH_RATE_LIMIT, f"{what}: {cause} after {spent.attempts} attempt(s)",
                      f"try again after {when} (in {wait} s); the retry budget is spent")
