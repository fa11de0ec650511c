"""spec_mcp's writer calls a model only when the user chose it (CODE3_SPEC_WRITER=anthropic), and a model's
answer that is not a spec is refused before anything is written.

An MCP client may hand the server its whole environment, ANTHROPIC_API_KEY included: that key alone must not
turn `spec_mcp.specify` into a billed Messages API call. Run through the composition root (settings → wiring →
services) against the loopback Messages API, as `code3 mcp` runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from code3.settings import Settings
from code3.wiring import build_services, ensure_identity
from domain.bounties.spec import Spec
from domain.errors import Code, Code3Error
from mcp_tools.lifecycle import specs
from tests.fakes.anthropic_server import FakeAnthropic

DESCRIPTION = "Users can export their to-do list as CSV"


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic().start()
    yield server
    server.stop()


def specify(project: Path, fake: FakeAnthropic, **env: str) -> dict[str, Any]:
    settings = Settings.from_env(env={"ANTHROPIC_API_KEY": fake.api_key, "ANTHROPIC_BASE_URL": fake.url, **env},
                                 project=project)
    ensure_identity(settings)
    s = build_services(settings)
    try:
        return dict(specs.specify(s, DESCRIPTION, feature_id="001-csv"))
    finally:
        s.close()


def test_an_inherited_key_without_the_opt_in_calls_no_model_and_writes_from_the_template(
        tmp_path: Path, fake: FakeAnthropic) -> None:
    answer = specify(tmp_path, fake)
    assert fake.calls == 0, "no request reached the Messages API"
    text = (tmp_path / answer["paths"]["spec"]).read_text()
    assert text.startswith("# Feature Specification: ") and "(written by the model)" not in text
    assert "## User Scenarios & Testing" in text and "export their to-do list as CSV" in text


def test_the_opt_in_writes_the_spec_through_the_model(tmp_path: Path, fake: FakeAnthropic) -> None:
    answer = specify(tmp_path, fake, CODE3_SPEC_WRITER="anthropic")
    assert fake.calls == 1 and fake.requests[0]["max_tokens"] == 8192
    assert "(written by the model)" in (tmp_path / answer["paths"]["spec"]).read_text()


def test_a_three_byte_model_answer_is_refused_and_nothing_is_written(tmp_path: Path, fake: FakeAnthropic) -> None:
    fake.responder = lambda request: "ok\n"
    with pytest.raises(Code3Error) as caught:
        specify(tmp_path, fake, CODE3_SPEC_WRITER="anthropic")
    assert caught.value.code is Code.VALIDATION and "3 bytes" in caught.value.message
    assert "CODE3_SPEC_WRITER=template" in caught.value.hint and fake.api_key not in str(caught.value)
    assert fake.calls == 1
    assert not (tmp_path / "specs" / "001-csv").exists(), "no spec.md to publish"
    settings = Settings.from_env(env={}, project=tmp_path)
    s = build_services(settings)
    try:
        assert s.store.get(Spec, Spec.create_id("001-csv")) is None, "no Specified event"
    finally:
        s.close()
