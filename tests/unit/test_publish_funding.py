"""A publish that cannot be funded changes nothing public; one the chain refuses after the issue opened leaves the
issue marked unfunded, and a corrected publish of the same feature reuses that issue; amounts are read right."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domain.bounties.contract import Status
from domain.bounties.issue import Issue
from domain.bounties.metadata import IssueMetadata
from domain.errors import Code, Code3Error
from mcp_tools.lifecycle import audit, publish, specs, work
from mcp_tools.lifecycle.chain_record import require_bounty
from projections.bounties import board
from projections.bounties.board import BountyBoard
from projections.runner import follow
from tests.unit.handler_world import AMOUNT, REPO, MemoryWorld


@pytest.fixture
def w(tmp_path: Path) -> Iterator[MemoryWorld]:
    world = MemoryWorld(tmp_path)  # alice holds 10 USDT
    yield world
    world.close()


def _feature(w: MemoryWorld) -> str:
    return str(specs.specify(w["alice"], "Users can export their to-do list as CSV")["feature_id"])


def _publish(w: MemoryWorld, feature: str, amount: int, **extra: Any) -> dict[str, Any]:
    return dict(publish.publish_issue_with_metadata(
        w["alice"], repo=REPO, feature_id=feature, spec_path=f"specs/{feature}/spec.md", amount=str(amount),
        **{"asset": "USDT", "network": w.ledger.network, **extra}))


def _refused(call: Any) -> Code3Error:
    with pytest.raises(Code3Error) as caught:
        call()
    return caught.value


def _events(w: MemoryWorld) -> int:
    return w.store.recorder.max_notification_id() or 0


def _only_issue(w: MemoryWorld) -> Any:
    [issue] = w.forge_state.issues.values()
    return issue


# --- pre-checks: nothing public, nothing recorded --------------------------------------------------------------------

def test_a_publish_beyond_the_sponsors_balance_is_refused_before_anything_happens(w: MemoryWorld) -> None:
    feature = _feature(w)
    before, balance = _events(w), w.ledger.balance(w["alice"].signer.address, "USDT")
    refused = _refused(lambda: _publish(w, feature, 11 * AMOUNT))
    assert refused.code is Code.CHAIN_TX_FAILED and "code3 account fund alice --amount 1000000" in refused.hint
    assert "10 USDT" in refused.message and "11 USDT" in refused.message and "nothing was published" in \
        refused.message
    assert w.forge_state.issues == {} and w.ledger.list_bounties() == [] and _events(w) == before
    assert w.ledger.balance(w["alice"].signer.address, "USDT") == balance
    answer = _publish(w, feature, 5 * AMOUNT)  # the feature is not locked by the refusal
    assert answer["bounty"]["amount_display"] == "5 USDT" and len(w.forge_state.issues) == 1


def test_an_asset_the_contract_does_not_escrow_is_refused_before_anything_happens(w: MemoryWorld) -> None:
    feature = _feature(w)
    w.ledger.mint(w["alice"].signer.address, "APT", 10 * AMOUNT)
    before = _events(w)
    refused = _refused(lambda: _publish(w, feature, AMOUNT, asset="APT"))
    assert refused.code is Code.VALIDATION and "escrows USDT" in refused.message and "USDT" in refused.hint
    assert w.forge_state.issues == {} and w.ledger.list_bounties() == [] and _events(w) == before


# --- the chain refuses after the issue opened -------------------------------------------------------------------------

def _publish_refused_after_opening(w: MemoryWorld, monkeypatch: pytest.MonkeyPatch, feature: str,
                                   amount: int) -> Code3Error:
    """The balance the pre-check reads covers the amount, the one the create meets does not (spent meanwhile)."""
    with monkeypatch.context() as patch:
        patch.setattr(w.ledger, "balance", lambda address, asset: 10**15)
        return _refused(lambda: _publish(w, feature, amount))


def test_a_bounty_the_chain_refuses_leaves_the_issue_marked_unfunded(w: MemoryWorld,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    feature = _feature(w)
    refused = _publish_refused_after_opening(w, monkeypatch, feature, 20 * AMOUNT)
    assert refused.code is Code.CHAIN_TX_FAILED and "marked unfunded" in refused.message
    assert "the same issue is reused" in refused.hint
    issue = _only_issue(w)
    assert "unfunded" in issue.labels and "open" not in issue.labels and w.ledger.list_bounties() == []
    meta = IssueMetadata.from_body(issue.body)
    assert meta is not None and meta.bounty.status == "unfunded" and meta.bounty.bounty_id is None
    problems = audit.verify(w["alice"]).problems
    assert any("unfunded" in p and "20 USDT" in p for p in problems), problems
    follow(w.store, w.views, BountyBoard())
    [row] = board.unfunded(w.views)
    assert row["task_id"] == f"{REPO}#{issue.number}" and row["amount_display"] == "20 USDT"


def test_a_corrected_publish_reuses_the_unfunded_issue_and_the_bounty_is_accepted(
        w: MemoryWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    feature = _feature(w)
    _publish_refused_after_opening(w, monkeypatch, feature, 20 * AMOUNT)
    number = _only_issue(w).number
    answer = _publish(w, feature, 3 * AMOUNT)  # what alice holds: no E_IDEMPOTENT_REJECTED, no second issue
    assert answer["issue"]["number"] == number and len(w.forge_state.issues) == 1
    issue = _only_issue(w)
    assert "open" in issue.labels and "unfunded" not in issue.labels
    meta = IssueMetadata.from_body(issue.body)
    assert meta is not None and meta.bounty.amount == str(3 * AMOUNT) and meta.bounty.status is None
    assert meta.issue_hash == answer["issue"]["issue_hash"] and meta.bounty.bounty_id == answer["bounty"]["bounty_id"]
    accepted = work.accept_task(w["bob"], f"{REPO}#{number}")
    assert accepted["bounty_id"] == answer["bounty"]["bounty_id"] and "in-progress" in accepted["labels"]
    assert require_bounty(w["bob"], accepted["bounty_id"]).status == Status.STARTED
    assert not [p for p in audit.verify(w["alice"]).problems if "unfunded" in p or "orphan" in p]
    follow(w.store, w.views, BountyBoard())
    assert board.unfunded(w.views) == []
    assert _publish(w, feature, 3 * AMOUNT) == answer, "the corrected publish repeats as any publish"
    old = _refused(lambda: _publish(w, feature, 20 * AMOUNT))
    assert old.code is Code.IDEMPOTENT_REJECTED and f"issues/{number}" in old.message, "the old terms point at it"


def test_the_same_publish_retried_once_funded_reopens_the_unfunded_issue(w: MemoryWorld,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    feature = _feature(w)
    _publish_refused_after_opening(w, monkeypatch, feature, 20 * AMOUNT)
    w.ledger.mint(w["alice"].signer.address, "USDT", 10 * AMOUNT)
    answer = _publish(w, feature, 20 * AMOUNT)
    issue = _only_issue(w)
    assert answer["issue"]["number"] == issue.number and "open" in issue.labels and "unfunded" not in issue.labels
    meta = IssueMetadata.from_body(issue.body)
    assert meta is not None and meta.bounty.status is None and meta.bounty.bounty_id == answer["bounty"]["bounty_id"]
    recorded = w.store.get(Issue, Issue.create_id(answer["issue"]["issue_hash"]))
    assert recorded is not None and not recorded.unfunded


def test_a_publish_with_other_terms_is_refused_while_the_first_is_funded(w: MemoryWorld) -> None:
    feature = _feature(w)
    _publish(w, feature, AMOUNT)
    refused = _refused(lambda: _publish(w, feature, 2 * AMOUNT))
    assert refused.code is Code.IDEMPOTENT_REJECTED and len(w.forge_state.issues) == 1


# --- amounts a person reads right ---------------------------------------------------------------------------------

def test_an_amount_below_the_floor_is_published_with_a_warning(w: MemoryWorld) -> None:
    answer = _publish(w, _feature(w), 1)  # seed 001's example amount: one millionth of a USDT
    assert answer["success"] and answer["bounty"]["amount_display"] == "0.000001 USDT"
    [said] = [x for x in answer["warnings"] if "CODE3_AMOUNT_WARN_BELOW" in x]
    assert "0.000001 USDT" in said and "1 USDT" in said and '"1000000" is 1 USDT' in said


def test_an_amount_at_the_floor_or_a_floor_of_zero_warns_nothing(w: MemoryWorld) -> None:
    answer = _publish(w, _feature(w), AMOUNT)
    assert not [x for x in answer.get("warnings", []) if "CODE3_AMOUNT_WARN_BELOW" in x]
    w["alice"].amount_warn_below = 0
    other = str(specs.specify(w["alice"], "Users can import a to-do list from CSV")["feature_id"])
    assert not [x for x in _publish(w, other, 1).get("warnings", []) if "CODE3_AMOUNT_WARN_BELOW" in x]


# --- the Issue's rules, and what was stored before them -----------------------------------------------------------

def _issue() -> Issue:
    return Issue(issue_hash="cd" * 32, repo=REPO, feature_id="001-x", spec_path="specs/001-x/spec.md",
                 spec_digest="ef" * 32, amount=AMOUNT, asset="USDT", network="local", labels=["code3", "open"],
                 assignees=[], effort=1, deadline=None)


def test_only_an_unfunded_issue_gives_its_claim_and_to_one_publish_only() -> None:
    funded = _issue()
    funded.open_once(number=1, url="u", task_id=f"{REPO}#1")
    funded.link_bounty_once("7")
    assert not funded.mark_unfunded_once("refused"), "a linked bounty is never unfunded"
    assert _refused(lambda: funded.supersede_once("ab" * 32)).code is Code.IDEMPOTENT_REJECTED
    issue = _issue()
    issue.open_once(number=1, url="u", task_id=f"{REPO}#1")
    assert issue.mark_unfunded_once("refused") and not issue.mark_unfunded_once("refused again")
    assert issue.unfunded and issue.releasable
    assert issue.supersede_once("ab" * 32) and not issue.supersede_once("ab" * 32) and not issue.unfunded
    assert _refused(lambda: issue.supersede_once("ef" * 32)).code is Code.IDEMPOTENT_REJECTED


def test_a_snapshot_taken_before_the_unfunded_marks_loads_with_none() -> None:
    from datetime import UTC, datetime

    from eventsourcing.domain import Aggregate
    from eventsourcing.utils import get_topic

    issue = _issue()
    state = {k: v for k, v in vars(issue).items()
             if k not in ("_id", "_version", "_pending_events", "unfunded_reason", "superseded_by", "reuses")}
    state["class_version"] = 2
    old = Aggregate.Snapshot(originator_id=issue.id, originator_version=1, timestamp=datetime.now(UTC),
                             topic=get_topic(Issue), state=state)
    loaded = old.mutate(None)
    assert loaded.unfunded_reason is None and loaded.superseded_by is None and loaded.reuses is None
    assert not loaded.unfunded
