"""A dependency spec is a file of the repository: a `ghp_…` or `AKIA…` it quotes is redacted before
`prepare`'s context carries it to a model, and counted in `context.redactions`; a CodeNexus comment or
description holding one is refused before it is stored, and a spec holding one is never published on an
issue (issue 18, class 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from code3.settings import Settings
from code3.wiring import build_services
from domain.errors import Code3Error
from domain.knowledge.spec_document import render_front
from mcp_tools.codenexus.extras import describe_tag
from mcp_tools.codenexus.tools import add_comment, create_relationship
from mcp_tools.lifecycle import publish, specs
from mcp_tools.reverse_spec.prepare import prepare
from tests.unit.handler_world import AMOUNT, REPO, MemoryWorld

GITHUB = "ghp_" + "Zq7XcV2bN4mK8pL1rT6yW3sD9fG5hJ0aQeRt"
AWS = "AKIAQWERTYUIOPASDFGH"


def test_a_dependency_specs_credentials_never_reach_the_context(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    files = {"src/a.py": "def f():\n    return 1\n", "lib/b.py": "from src.a import f\n\ndef g():\n    return f()\n",
             "specs/src.spec.md": render_front({"type": "module-spec", "version": 1, "sourceTarget": "src",
                                                "relatedFiles": ["src/a.py"]})
             + f"\n# Src\n\nCalls GitHub with `{GITHUB}` and S3 with {AWS}; f returns one.\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    s = build_services(Settings(project=root))
    try:
        answer = prepare(s, "lib")
    finally:
        s.close()
    context = answer["context"]
    assert "f returns one" in context["text"], "the dependency's spec is in the context"
    assert GITHUB not in json.dumps(answer) and AWS not in json.dumps(answer)
    assert context["redactions"].get("github-token") == 1 and context["redactions"].get("aws-access-key") == 1


def test_a_codenexus_text_holding_a_credential_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("A = 1\n")
    (root / "src" / "b.py").write_text("B = 2\n")
    s = build_services(Settings(project=root))
    try:
        before = int(s.store.recorder.max_notification_id() or 0)
        refusals = [lambda: add_comment(s, "src/a.py", f"deploy with {GITHUB}"),
                    lambda: create_relationship(s, "src/a.py", "src/b.py", "calls", f"through S3 as {AWS}"),
                    lambda: describe_tag(s, "deploy", "password = 'Zx9!kQ2#pL7$'")]
        for refused in refusals:
            with pytest.raises(MCPError) as caught:
                refused()
            assert caught.value.error.code == -32002 and "credential" in json.dumps(caught.value.error.data)
            assert GITHUB not in str(caught.value.error) and AWS not in json.dumps(caught.value.error.data)
        assert int(s.store.recorder.max_notification_id() or 0) == before, "nothing stored"
        assert add_comment(s, "src/a.py", "password: rotated every quarter; the token lives in the vault")["success"]
    finally:
        s.close()


def test_a_spec_holding_a_credential_is_not_published(tmp_path: Path) -> None:
    w = MemoryWorld(tmp_path)
    try:
        alice = w["alice"]
        spec = specs.specify(alice, "Users can export their to-do list as CSV")
        path = tmp_path / spec["paths"]["spec"]
        path.write_text(path.read_text() + f"\nThe CI uses GITHUB_TOKEN={GITHUB}.\n")
        with pytest.raises(Code3Error) as caught:
            publish.publish_issue_with_metadata(alice, repo=REPO, feature_id=spec["feature_id"],
                                                spec_path=spec["paths"]["spec"], amount=str(AMOUNT), asset="USDT",
                                                network=alice.chain.network)
        assert caught.value.code.value == "E_VALIDATION"
        assert "credential" in caught.value.message and GITHUB not in str(caught.value.as_dict())
        assert alice.forge.list_issues(REPO) == [] and alice.chain.list_bounties() == []
    finally:
        w.close()


def test_the_model_port_redacts_every_text_it_sends() -> None:
    from adapters.llm.anthropic_llm import AnthropicLLM
    from tests.fakes.anthropic_server import FakeAnthropic

    fake = FakeAnthropic().start()
    try:
        llm = AnthropicLLM(fake.api_key, base_url=fake.url)
        try:
            llm.complete(f"system with {AWS}", f"the spec says GITHUB_TOKEN = '{GITHUB}'; write the plan")
        finally:
            llm.close()
        sent = json.dumps(fake.requests)
        assert GITHUB not in sent and AWS not in sent and "write the plan" in sent and "REDACTED" in sent
    finally:
        fake.stop()
