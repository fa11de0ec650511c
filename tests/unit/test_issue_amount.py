"""The Issue keeps the publish's amount as the integer parse_amount checked; what was stored as digits loads as it.

The stored events of before (amount as a string) are read by tests/integration/test_legacy_store.py; here, a
snapshot taken before the change (the store snapshots an Issue every 100 events) and the rules of each saga step.
"""

from __future__ import annotations

from datetime import UTC, datetime

from eventsourcing.domain import Aggregate
from eventsourcing.utils import get_topic

from domain.bounties.issue import Issue
from domain.values import Amount


def _issue() -> Issue:
    return Issue(issue_hash="cd" * 32, repo="alice/app", feature_id="001-x", spec_path="specs/001-x/spec.md",
                 spec_digest="ef" * 32, amount=Amount(1000), asset="USDT", network="local",
                 labels=["code3", "open"], assignees=[], effort=1, deadline=None)


def test_a_snapshot_taken_while_the_amount_was_digits_loads_as_an_integer() -> None:
    issue = _issue()
    state = {k: v for k, v in vars(issue).items() if k not in ("_id", "_version", "_pending_events")}
    state["amount"] = "1000"  # as v1 stored it, without a class_version
    old = Aggregate.Snapshot(originator_id=issue.id, originator_version=1, timestamp=datetime.now(UTC),
                             topic=get_topic(Issue), state=state)
    assert old.mutate(None).amount == 1000


def test_a_new_snapshot_keeps_the_integer_and_its_version() -> None:
    snapshot = Aggregate.Snapshot.take(_issue())
    assert snapshot.state["amount"] == 1000 and snapshot.state["class_version"] == 3
    assert snapshot.mutate(None).amount == 1000


def test_each_saga_step_records_once() -> None:
    issue = _issue()
    assert issue.open_once(number=7, url="https://forge/alice/app/issues/7", task_id="alice/app#7")
    assert not issue.open_once(number=8, url="https://forge/alice/app/issues/8", task_id="alice/app#8")
    assert issue.number == 7
    assert issue.link_bounty_once("1") and not issue.link_bounty_once("2") and issue.bounty_id == "1"
    assert issue.write_metadata_once("ab" * 32) and not issue.write_metadata_once("ab" * 32)


def test_an_opening_claim_is_taken_over_only_when_its_owner_died_or_it_expired() -> None:
    issue, living = _issue(), {"me", "other"}
    assert issue.claim_opening_once(owner="other", now=100.0, until=130.0, alive=living.__contains__)
    assert not issue.claim_opening_once(owner="me", now=110.0, until=140.0, alive=living.__contains__)
    assert not issue.claim_opening_once(owner="other", now=110.0, until=140.0, alive=living.__contains__), \
        "a live claim of one's own is not claimed twice"
    living.discard("other")
    assert issue.claim_opening_once(owner="me", now=110.0, until=140.0, alive=living.__contains__)
    assert issue.opening_owner == "me"
    assert issue.claim_opening_once(owner="third", now=141.0, until=171.0, alive=lambda _: True), "expired"


def test_an_audit_export_made_before_the_amount_became_an_integer_still_checks() -> None:
    """tests/fixtures/legacy_audit/export.jsonl: `code3 audit export` of a demo run by commit 849e4f0, whose
    PublishRequested carries the amount as digits; the chain of hashes and the signature still hold."""
    from pathlib import Path

    from projections.audit_log import check

    export = Path(__file__).resolve().parents[1] / "fixtures" / "legacy_audit" / "export.jsonl"
    assert '"amount":"' in export.read_text(encoding="utf-8"), "the fixture is of the old shape"
    result = check(export)
    assert result.ok, result.problems
    assert result.signer is not None
