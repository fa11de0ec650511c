"""The LLM port: one prompt in, text and token usage out. Failures are Code3 errors in the seed's words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from domain.errors import Code, Code3Error

MISSING_KEY = "未检测到 ANTHROPIC_API_KEY"  # reverse-spec seed, §4 (认证缺失)


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    input_tokens: int
    output_tokens: int


class LLM(Protocol):
    """A text model. `model` names it in events and answers."""

    model: str

    def complete(self, system: str, prompt: str, max_tokens: int = 8192) -> Completion: ...


class LLMFailed(Code3Error):
    """The model could not answer; the message is the seed's text (e.g. "Claude API 返回 429: 速率限制")."""

    def __init__(self, message: str, hint: str, status: int | None = None) -> None:
        super().__init__(Code.INTERNAL, message, hint)
        self.status = status


class MissingKeyLLM:
    """Stands in when the LLM is required (CODE3_LLM=anthropic) but no key is set: every call fails clearly."""

    model = "anthropic (no key)"

    def __init__(self, hint: str = "export ANTHROPIC_API_KEY, or unset CODE3_LLM to use the offline writer") -> None:
        self.hint = hint  # how to do without the model where it was asked for (CODE3_LLM, CODE3_SPEC_WRITER)

    def complete(self, system: str, prompt: str, max_tokens: int = 8192) -> Completion:
        raise Code3Error(Code.PRECONDITION, MISSING_KEY, self.hint)
