"""An issue whose bounty the chain refused, as the operator sees it: `code3 doctor` fails on it until a corrected
publish of the feature reuses the issue (on the project's real stores, the chain the stack parametrizes)."""

from __future__ import annotations

import pytest

from code3.doctor import diagnose, report
from domain.errors import Code, Code3Error
from mcp_tools.lifecycle import publish
from tests.conftest import AMOUNT, World


def test_doctor_reports_an_unfunded_issue_until_a_corrected_publish_reuses_it(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = world.specified()
    alice = world["alice"]
    with monkeypatch.context() as patch:  # the pre-check reads a balance the create then does not find
        patch.setattr(alice.chain, "balance", lambda address, asset: 10**15)
        with pytest.raises(Code3Error) as refused:
            publish.publish_issue_with_metadata(alice, **world.publish_args(spec, amount=20 * AMOUNT))
    assert refused.value.code is Code.CHAIN_TX_FAILED and "unfunded" in refused.value.message
    [opened] = world.forge.list_issues(world.publish_args(spec)["repo"])
    assert "unfunded" in opened.labels
    checks = {c.name: c for c in diagnose(world.settings("alice"))}
    unfunded = checks["unfunded issues"]
    assert not unfunded.ok and f"#{opened.number}" in unfunded.detail and "20 USDT" in unfunded.detail, \
        report(list(checks.values()))
    assert unfunded.hint is not None and "the same issue is reused" in unfunded.hint

    answer = publish.publish_issue_with_metadata(alice, **world.publish_args(spec, amount=3 * AMOUNT))
    assert answer["issue"]["number"] == opened.number
    assert [i.number for i in world.forge.list_issues(world.publish_args(spec)["repo"])] == [opened.number]
    healed = {c.name: c for c in diagnose(world.settings("alice"))}
    assert healed["unfunded issues"].ok and "backed by a bounty" in healed["unfunded issues"].detail
