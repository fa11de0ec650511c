"""Regressions of the trust review (issue 9): each finding refused by a mechanism, nothing written (those that
need a real git repository: tests/integration/test_trust.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domain.errors import Code, Code3Error
from mcp_tools.lifecycle import publish, settle, specs, work
from tests.unit.handler_world import AMOUNT, REPO, MemoryWorld


@pytest.fixture
def w(tmp_path: Path) -> Iterator[MemoryWorld]:
    world = MemoryWorld(tmp_path)
    yield world
    world.close()


def _refused(w: MemoryWorld, call: Any) -> Code:
    before = (w.store.recorder.max_notification_id(), w.ledger.latest_version(), len(w.forge_state.issues))
    with pytest.raises(Code3Error) as caught:
        call()
    assert caught.value.hint, "every refusal says what to do next"
    assert (w.store.recorder.max_notification_id(), w.ledger.latest_version(), len(w.forge_state.issues)) == before
    return caught.value.code


def _publish(w: MemoryWorld, **overrides: Any) -> Any:
    spec = specs.specify(w["alice"], "Users can export their to-do list as CSV", feature_id="001-csv",
                         allow_overwrite=True)
    args = {"repo": REPO, "feature_id": spec["feature_id"], "spec_path": spec["paths"]["spec"],
            "amount": str(AMOUNT), "asset": "USDT", "network": w.ledger.network, **overrides}
    return lambda: publish.publish_issue_with_metadata(w["alice"], **args)


def test_open_pr_refuses_a_branch_that_is_a_path(w: MemoryWorld) -> None:
    assert _refused(w, lambda: work.open_pr(w["bob"], REPO, "../../../../../../keys/alice.key", "t", "b")) \
        is Code.VALIDATION


@pytest.mark.parametrize("spec_path", [".code3/keys/bob.key", "specs/../.code3/keys/bob.key", "/etc/passwd",
                                       "specs/link.md", "specs/001-csv/spec.md\x00"])
def test_publish_never_reads_a_key_a_state_file_or_a_symlink_out_of_the_project(w: MemoryWorld,
                                                                                spec_path: str) -> None:
    (w.project / "specs").mkdir(exist_ok=True)
    os.symlink(w.keys.directory / "bob.key", w.project / "specs" / "link.md")  # the real key, in CODE3_HOME
    code = _refused(w, _publish(w, spec_path=spec_path))
    assert code in (Code.UNAUTHORIZED, Code.VALIDATION)


def test_a_binary_spec_is_refused_with_a_coded_error(w: MemoryWorld) -> None:
    (w.project / "specs" / "bin").mkdir(parents=True)
    (w.project / "specs" / "bin" / "spec.md").write_bytes(b"\x00\x01\x02binary")
    assert _refused(w, _publish(w, spec_path="specs/bin/spec.md")) is Code.VALIDATION


@pytest.mark.parametrize("overrides", [{"deadline_seconds": 10**30}, {"deadline_seconds": 0},
                                       {"amount": "7\n"}, {"amount": "007"}, {"amount": str(2**64)},
                                       {"repo": "alice/todo-app\n"}, {"asset": "USDT\n"},
                                       {"feature_id": "001-csv\n"}, {"feature_id": "001-" + "x" * 300}])
def test_publish_refuses_out_of_range_and_not_fully_matching_inputs_before_any_effect(
        w: MemoryWorld, overrides: dict[str, Any]) -> None:
    assert _refused(w, _publish(w, **overrides)) is Code.VALIDATION


def test_a_crashed_publish_retried_with_another_amount_is_refused_before_a_second_issue(w: MemoryWorld) -> None:
    first = _publish(w)
    real = w.ledger.create_bounty

    def dies(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the process died before the bounty")

    w.ledger.create_bounty = dies  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        first()
    w.ledger.create_bounty = real  # type: ignore[method-assign]
    assert _refused(w, _publish(w, amount=str(AMOUNT + 1))) is Code.IDEMPOTENT_REJECTED
    assert len(w.forge_state.issues) == 1


@pytest.mark.parametrize("task_id", [f"{REPO}#1\n", f" {REPO}#1", f"{REPO}#0", "x" * 500])
def test_task_ids_match_in_full(w: MemoryWorld, task_id: str) -> None:
    assert _refused(w, lambda: work.accept_task(w["bob"], task_id)) is Code.VALIDATION


def _open_bounty(w: MemoryWorld) -> tuple[str, str]:
    answer = _publish(w)()
    return answer["bounty"]["bounty_id"], f"{REPO}#{answer['issue']['number']}"


def test_refusals_the_chain_would_make_spend_no_transaction(w: MemoryWorld) -> None:
    bounty_id, task = _open_bounty(w)
    pr = w["bob"].forge.open_pr(REPO, "bob:feat/x", "main", "feat: x", "body")
    assert _refused(w, lambda: work.accept_task(w["alice"], task)) is Code.UNAUTHORIZED  # the sponsor's own
    assert _refused(w, lambda: work.submit_pr(w["bob"], bounty_id, pr.url)) is Code.INVALID_STATE  # not accepted
    work.accept_task(w["bob"], task)
    work.submit_pr(w["bob"], bounty_id, pr.url)
    # a submitted PR: the sponsor may take the escrow back only after the deadline
    assert _refused(w, lambda: settle.cancel_bounty(w["alice"], bounty_id)) is Code.PRECONDITION


def test_only_the_resolver_reports_a_merge_and_a_refused_report_sends_nothing(w: MemoryWorld) -> None:
    bounty_id, task = _open_bounty(w)
    work.accept_task(w["bob"], task)
    pr = w["bob"].forge.open_pr(REPO, "bob:feat/x", "main", "feat: x", "body")
    work.submit_pr(w["bob"], bounty_id, pr.url)
    w["bob"].forge.merge_pr(pr.url)
    assert _refused(w, lambda: settle.mark_merged(w["carol"], pr.url, delivery_id="d-1", bounty_id=bounty_id)) \
        is Code.UNAUTHORIZED
    merged = settle.mark_merged(w["alice"], pr.url, delivery_id="d-2", bounty_id=bounty_id)
    assert merged["winner"] == w["bob"].signer.address
