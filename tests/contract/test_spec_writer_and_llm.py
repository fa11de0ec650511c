"""The SpecWriter and LLM ports' contracts, on every implementation.

SpecWriter: the offline writer, and the LLM writer (`LLMSpecWriter` over `AnthropicLLM`, against the loopback
Messages API tests/fakes/anthropic_server.py, whose model fills the template it is given, as told). Both fill
spec-kit's templates, keep their sections, answer the same plan files whatever the model wrote, and give the same
files for the same input. LLM: `AnthropicLLM` (answering, and failing as the service fails) and `MissingKeyLLM`:
`complete` answers a Completion, or fails with a Code3Error that says what to do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import date
from typing import Any

import pytest

from adapters.llm.port import LLM, Completion, MissingKeyLLM
from adapters.offline_writer import PLAN_TEMPLATES, OfflineWriter
from adapters.ports import SpecWriter
from domain.errors import Code, Code3Error
from tests.contract.registry import covers
from tests.fakes.anthropic_server import FakeAnthropic

TODAY = date(2026, 1, 2)
DESCRIPTION = "Users can export their to-do list as CSV. Exports include archived items."
SPEC_SECTIONS = ("# Feature Specification: ", "## User Scenarios & Testing", "## Requirements", "## Success Criteria")
TASK_SECTIONS = ("# Tasks: ", "## Phase 3.1: Setup", "## Phase 3.2: Tests First", "## Phase 3.3: Core Implementation")
_TEMPLATE = re.compile(r"(?:Fill this spec template \(keep its headings\):|filling these templates:|"
                       r"Follow this template:)\n\n(.*)\Z", re.DOTALL)


def obedient(request: dict[str, Any]) -> str:
    """A model that fills the template it was given by keeping it as it is (the offline writer's own filling)."""
    prompt = request["messages"][-1]["content"]
    found = _TEMPLATE.search(prompt if isinstance(prompt, str) else "")
    return found.group(1) if found else "no template in the prompt"


def plan_with_one_file(request: dict[str, Any]) -> str:
    """A model that answers a plan with plan.md only, every section kept (the others must come from the offline
    writer)."""
    plan_md = re.search(r"^=== FILE: plan.md ===\n(.*?)(?=^=== FILE: |\Z)", obedient(request), re.DOTALL | re.MULTILINE)
    assert plan_md is not None
    return "=== FILE: plan.md ===\n" + re.sub(r"\A# [^\n]*", "# Implementation Plan: written by the model",
                                              plan_md.group(1))


def three_bytes(request: dict[str, Any]) -> str:
    return "ok\n"


Responder = Callable[[dict[str, Any]], str]


@pytest.fixture
def anthropic() -> Iterator[Callable[[Responder], tuple[FakeAnthropic, Any]]]:
    """An AnthropicLLM against a fresh loopback Messages API answering with `responder` (and that API)."""
    from adapters.llm.anthropic_llm import AnthropicLLM, anthropic_policy

    started: list[tuple[FakeAnthropic, Any]] = []

    def build(responder: Responder) -> tuple[FakeAnthropic, Any]:
        fake = FakeAnthropic(responder=responder).start()
        llm = AnthropicLLM(fake.api_key, base_url=fake.url, policy=anthropic_policy(attempts=2, base_wait_s=0.0),
                           timeout_s=30.0)
        started.append((fake, llm))
        return fake, llm

    yield build
    for fake, llm in started:
        llm.close()
        fake.stop()


WRITERS = ["offline", "llm"]


@pytest.fixture(params=WRITERS)
def writer(request: pytest.FixtureRequest, anthropic: Callable[..., Any]) -> Any:
    from adapters.llm.spec_writer import LLMSpecWriter

    offline = OfflineWriter(today=lambda: TODAY)
    return offline if request.param == "offline" else LLMSpecWriter(anthropic(obedient)[1], offline=offline)


@covers(SpecWriter, "spec")
def test_a_spec_fills_spec_kit_s_template_with_the_description(writer: Any) -> None:
    spec = writer.spec("001-csv-export", DESCRIPTION)
    assert isinstance(spec, str) and spec.endswith("\n")
    assert all(section in spec for section in SPEC_SECTIONS), spec[:400]
    assert "export their to-do list as CSV" in spec and "**FR-001**" in spec
    assert writer.spec("001-csv-export", DESCRIPTION) == spec, "the same input gives the same spec"


@covers(SpecWriter, "plan")
@pytest.mark.parametrize("constraints", [None, "Python 3.11, no new dependency"])
def test_a_plan_is_spec_kit_s_plan_files_each_filled(writer: Any, constraints: str | None) -> None:
    spec = OfflineWriter(today=lambda: TODAY).spec("001-csv-export", DESCRIPTION)
    plan = writer.plan("001-csv-export", spec, constraints)
    assert sorted(plan) == sorted(PLAN_TEMPLATES)
    assert all(isinstance(text, str) and text.strip() and text.endswith("\n") for text in plan.values())
    assert "FR-001" in plan["contracts/README.md"]
    if constraints:
        assert constraints in plan["plan.md"]


@covers(SpecWriter, "plan")
def test_a_plan_has_every_file_whatever_the_model_left_out(anthropic: Callable[..., Any]) -> None:
    from adapters.llm.spec_writer import LLMSpecWriter

    offline = OfflineWriter(today=lambda: TODAY)
    spec = offline.spec("001-csv-export", DESCRIPTION)
    plan = LLMSpecWriter(anthropic(plan_with_one_file)[1], offline=offline).plan("001-csv-export", spec, None)
    expected = offline.plan("001-csv-export", spec, None)
    assert sorted(plan) == sorted(expected) and plan["plan.md"].startswith("# Implementation Plan: written by")
    assert {n: t for n, t in plan.items() if n != "plan.md"} == {n: t for n, t in expected.items() if n != "plan.md"}


@covers(SpecWriter, "tasks")
def test_tasks_are_numbered_test_first_from_the_plan_s_contracts(writer: Any) -> None:
    offline = OfflineWriter(today=lambda: TODAY)
    spec = offline.spec("001-csv-export", DESCRIPTION)
    artifacts = {"spec.md": spec, **offline.plan("001-csv-export", spec, None)}
    tasks = writer.tasks("001-csv-export", artifacts)
    assert isinstance(tasks, str) and tasks.endswith("\n")
    assert all(section in tasks for section in TASK_SECTIONS), tasks[:400]
    numbers = re.findall(r"^- \[ \] T(\d{3}) ", tasks, re.MULTILINE)
    assert numbers and numbers == [f"{i:03d}" for i in range(1, len(numbers) + 1)]
    assert tasks.index("Contract test for FR-001") < tasks.index("Implement FR-001")


@covers(SpecWriter, "spec", "plan", "tasks")
def test_a_model_answer_without_the_template_s_sections_is_refused(anthropic: Callable[..., Any]) -> None:
    from adapters.llm.spec_writer import LLMSpecWriter

    offline = OfflineWriter(today=lambda: TODAY)
    spec = offline.spec("001-csv-export", DESCRIPTION)
    fake, model = anthropic(three_bytes)
    writer = LLMSpecWriter(model, offline=offline)
    artifacts = {"spec.md": spec, **offline.plan("001-csv-export", spec, None)}
    for call in (lambda: writer.spec("001-csv-export", DESCRIPTION), lambda: writer.plan("001-csv-export", spec, None),
                 lambda: writer.tasks("001-csv-export", artifacts)):
        with pytest.raises(Code3Error) as caught:
            call()
        assert caught.value.code is Code.VALIDATION and "3 bytes" in caught.value.message, caught.value.message
        assert "CODE3_SPEC_WRITER=template" in caught.value.hint
    assert fake.calls == 3


# --- LLM ---------------------------------------------------------------------------------------------------------

@pytest.fixture(params=["anthropic", "anthropic failing", "missing key"])
def llm(request: pytest.FixtureRequest, anthropic: Callable[..., Any]) -> tuple[str, Any]:
    if request.param == "missing key":
        return request.param, MissingKeyLLM()
    fake, found = anthropic(lambda request: f"answer to: {request['messages'][-1]['content']}")
    if request.param == "anthropic failing":
        fake.fail_next(529, times=5)  # overloaded, more times than the policy retries
    return request.param, found


@covers(LLM, "model", "complete")
def test_a_completion_answers_text_and_usage_or_fails_with_what_to_do(llm: tuple[str, Any]) -> None:
    state, model = llm
    assert isinstance(model.model, str) and model.model
    if state == "anthropic":
        answer = model.complete("system text", "the prompt", max_tokens=64)
        assert isinstance(answer, Completion) and answer.text == "answer to: the prompt"
        assert isinstance(answer.model, str) and answer.model
        assert answer.input_tokens > 0 and answer.output_tokens > 0
        return
    with pytest.raises(Code3Error) as caught:
        model.complete("system text", "the prompt", max_tokens=64)
    assert caught.value.hint and "Traceback" not in str(caught.value)
    assert caught.value.code is (Code.PRECONDITION if state == "missing key" else Code.INTERNAL)
