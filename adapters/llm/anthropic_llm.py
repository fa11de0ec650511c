"""The LLM port on the Anthropic Messages API (the `anthropic` SDK, imported on first use).

The SDK's own retries are off: rate limits (429), overload (529), 5xx and dropped connections go
through the project's retry policy (adapters/retry.py, tenacity), waiting what `retry-after` says. When
the budget is spent, or at once for any other 4xx, the failure is reported in the reverse-spec seed's
words: "Claude API 返回 429: 速率限制", "Claude API 返回 503: 服务不可用", … The key never appears in a
message.
"""

from __future__ import annotations

import logging
from typing import Any

from adapters.llm.port import Completion, LLMFailed
from adapters.redact import redact
from adapters.retry import RetryBudgetSpent, RetryPolicy

log = logging.getLogger("code3.llm")

DEFAULT_MODEL = "claude-sonnet-4-6"
STATUS_TEXT = {
    400: "请求无效", 401: "认证失败（ANTHROPIC_API_KEY 无效）", 403: "无权访问", 404: "模型或接口不存在",
    413: "请求过大", 429: "速率限制", 500: "服务器内部错误", 502: "网关错误", 503: "服务不可用",
    504: "网关超时", 529: "服务过载",
}


def is_transient(exc: BaseException) -> bool:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, anthropic.APIConnectionError)


def wait_hint(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    if response is None:
        return None
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def anthropic_policy(attempts: int = 4, budget_s: float = 90.0, base_wait_s: float = 2.0) -> RetryPolicy:
    return RetryPolicy("anthropic", is_transient=is_transient, wait_hint=wait_hint, attempts=attempts,
                       budget_s=budget_s, base_wait_s=base_wait_s, max_wait_s=30.0)


def failure_text(exc: BaseException) -> tuple[str, int | None]:
    """The seed's text for a failed call, and the HTTP status when there was one."""
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        return f"Claude API 返回 {status}: {STATUS_TEXT.get(status, 'HTTP 错误')}", status
    if isinstance(exc, anthropic.APITimeoutError):
        return "Claude API 请求超时", None
    if isinstance(exc, anthropic.APIConnectionError):
        return "Claude API 连接失败", None
    return f"Claude API 调用失败: {type(exc).__name__}", None


class AnthropicLLM:
    def __init__(self, api_key: str, *, model: str = DEFAULT_MODEL, base_url: str | None = None,
                 policy: RetryPolicy | None = None, timeout_s: float = 600.0) -> None:
        self.model = model
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout_s
        self.policy = policy or anthropic_policy()
        self._client: Any = None

    def __repr__(self) -> str:
        return f"AnthropicLLM(model={self.model!r}, base_url={self._base_url!r})"

    def _messages(self) -> Any:
        if self._client is None:
            import anthropic

            self._client = anthropic.Anthropic(api_key=self._api_key, base_url=self._base_url, max_retries=0,
                                               timeout=self._timeout)
        return self._client.messages

    def complete(self, system: str, prompt: str, max_tokens: int = 8192) -> Completion:
        """One completion. Every text handed to the model has its credentials redacted here, at the one door
        to it (adapters/redact.py), whatever produced it: a spec, an issue body, a comment, source."""
        messages = self._messages()
        system, prompt = redact(system).text, redact(prompt).text

        def call() -> Any:
            return messages.create(model=self.model, max_tokens=max_tokens, system=system,
                                   messages=[{"role": "user", "content": prompt}])

        try:
            response = self.policy.call(call)
        except RetryBudgetSpent as spent:
            text, status = failure_text(spent.last)
            log.warning("anthropic: %s after %d attempt(s)", text, spent.attempts)
            raise LLMFailed(text, f"retried {spent.attempts} time(s); try again later", status) from None
        except Exception as exc:
            if type(exc).__module__.split(".")[0] != "anthropic":
                raise
            text, status = failure_text(exc)
            log.warning("anthropic: %s", text)
            raise LLMFailed(text, "check ANTHROPIC_API_KEY, CODE3_LLM_MODEL and ANTHROPIC_BASE_URL", status) from None
        text = "".join(getattr(block, "text", "") for block in response.content)
        usage = response.usage
        return Completion(text=text, model=getattr(response, "model", None) or self.model,
                          input_tokens=int(usage.input_tokens or 0), output_tokens=int(usage.output_tokens or 0))

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
