"""The lifecycle handlers on in-memory adapters: each use case alone, in milliseconds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from domain.bounties.spec import Spec
from domain.errors import Code, Code3Error
from mcp_tools.lifecycle import audit, publish, settle, specs, work
from mcp_tools.lifecycle.chain_record import require_bounty
from mcp_tools.lifecycle.merge_watch import reconcile_merges
from projections.bounties import board
from projections.bounties.board import BountyBoard
from projections.runner import follow
from tests.unit.handler_world import AMOUNT, REPO, MemoryWorld


@pytest.fixture
def w(tmp_path: Path) -> Iterator[MemoryWorld]:
    world = MemoryWorld(tmp_path)
    yield world
    world.close()


def _published(w: MemoryWorld, amount: int = AMOUNT) -> dict[str, Any]:
    alice = w["alice"]
    spec = specs.specify(alice, "Users can export their to-do list as CSV")
    specs.plan(alice, spec["feature_id"])
    specs.tasks(alice, spec["feature_id"])
    return publish.publish_issue_with_metadata(alice, repo=REPO, feature_id=spec["feature_id"],
                                               spec_path=spec["paths"]["spec"], amount=str(amount), asset="USDT",
                                               network=alice.chain.network)


def _code(call: Any) -> Code:
    with pytest.raises(Code3Error) as caught:
        call()
    return caught.value.code


def test_specify_plan_and_tasks_write_the_artifacts_and_record_the_spec(w: MemoryWorld) -> None:
    alice = w["alice"]
    spec = specs.specify(alice, "Users can export their to-do list as CSV")
    specs.plan(alice, spec["feature_id"])
    answer = specs.tasks(alice, spec["feature_id"])
    assert (w.project / answer["path"]).is_file()
    recorded = w.store.get(Spec, Spec.create_id(spec["feature_id"]))
    assert recorded is not None and recorded.planned and recorded.tasked


def test_a_second_publish_with_the_same_terms_returns_the_same_issue_and_bounty(w: MemoryWorld) -> None:
    first = _published(w)
    feature = first_feature(w)
    again = publish.publish_issue_with_metadata(w["alice"], repo=REPO, feature_id=feature,
                                                spec_path=f"specs/{feature}/spec.md", amount=str(AMOUNT),
                                                asset="USDT", network=w.ledger.network)
    assert again == first
    assert len(w.forge_state.issues) == 1 and len(w.ledger.list_bounties()) == 1


def first_feature(w: MemoryWorld) -> str:
    return sorted(p.name for p in (w.project / "specs").iterdir())[0]


def test_publishing_a_published_feature_with_another_amount_is_rejected(w: MemoryWorld) -> None:
    _published(w)
    feature = first_feature(w)
    assert _code(lambda: publish.publish_issue_with_metadata(
        w["alice"], repo=REPO, feature_id=feature, spec_path=f"specs/{feature}/spec.md", amount=str(AMOUNT + 1),
        asset="USDT", network=w.ledger.network)) is Code.IDEMPOTENT_REJECTED
    assert len(w.ledger.list_bounties()) == 1


def test_a_worker_accepts_a_task_and_the_issue_is_labelled_in_progress(w: MemoryWorld) -> None:
    published = _published(w)
    answer = work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    assert answer["bounty_id"] == published["bounty"]["bounty_id"] and "in-progress" in answer["labels"]
    bounty = w.store.get(Bounty, Bounty.create_id(answer["bounty_id"]))
    assert bounty is not None and bounty.status is Status.STARTED and w["bob"].signer.address in bounty.workers


def test_the_sponsor_cannot_accept_their_own_bounty(w: MemoryWorld) -> None:
    published = _published(w)
    assert _code(lambda: work.accept_task(w["alice"], f"{REPO}#{published['issue']['number']}")) is Code.UNAUTHORIZED


def test_an_unknown_task_is_not_found(w: MemoryWorld) -> None:
    assert _code(lambda: work.accept_task(w["bob"], f"{REPO}#99")) is Code.NOT_FOUND


def test_submitting_a_pr_that_does_not_exist_is_not_found_and_sends_nothing(w: MemoryWorld) -> None:
    published = _published(w)
    work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    version = w.ledger.latest_version()
    bounty_id = published["bounty"]["bounty_id"]
    assert _code(lambda: work.submit_pr(w["bob"], bounty_id, f"https://forge.test/{REPO}/pull/42")) is Code.NOT_FOUND
    assert w.ledger.latest_version() == version


def _accepted_with_pr(w: MemoryWorld, description: str = "Users can export their to-do list as CSV") -> tuple[str, Any]:
    published = _published_feature(w, description)
    work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    pr = w["bob"].forge.open_pr(REPO, "bob:feat/x", "main", "feat: x", "body")
    return published["bounty"]["bounty_id"], pr


def _published_feature(w: MemoryWorld, description: str) -> dict[str, Any]:
    alice = w["alice"]
    spec = specs.specify(alice, description)
    return publish.publish_issue_with_metadata(alice, repo=REPO, feature_id=spec["feature_id"],
                                               spec_path=spec["paths"]["spec"], amount=str(AMOUNT), asset="USDT",
                                               network=alice.chain.network)


def test_a_submit_whose_recording_was_lost_heals_from_the_chain_and_the_retry_answers_the_same_tx(
        w: MemoryWorld) -> None:
    bounty_id, pr = _accepted_with_pr(w)
    bob = w["bob"]
    sent = w.ledger.submit_pr(bob.signer, bounty_id, pr.url, pr.head_sha)  # committed; the process died here
    follow(w.store, w.views, BountyBoard())
    assert sent.success and board.bounties_with_pr(w.views, pr.url) == []
    answer = work.submit_pr(bob, bounty_id, pr.url)
    assert answer["tx_hash"] == sent.tx_hash
    follow(w.store, w.views, BountyBoard())
    assert board.bounties_with_pr(w.views, pr.url) == [bounty_id], "the PR's bounty follows from the chain's event"


def test_chain_sync_alone_restores_the_submission_of_a_lost_recording(w: MemoryWorld) -> None:
    bounty_id, pr = _accepted_with_pr(w)
    w.ledger.submit_pr(w["bob"].signer, bounty_id, pr.url, pr.head_sha)
    require_bounty(w["carol"], bounty_id)  # anyone who looks at the bounty next
    follow(w.store, w.views, BountyBoard())
    assert board.bounties_with_pr(w.views, pr.url) == [bounty_id]


def test_a_pr_already_submitted_for_one_bounty_is_refused_for_another_before_any_transaction(
        w: MemoryWorld) -> None:
    first, pr = _accepted_with_pr(w)
    work.submit_pr(w["bob"], first, pr.url)
    second = _published_feature(w, "Users can import a to-do list from CSV")
    work.accept_task(w["bob"], f"{REPO}#{second['issue']['number']}")
    version = w.ledger.latest_version()
    assert _code(lambda: work.submit_pr(w["bob"], second["bounty"]["bounty_id"], pr.url)) is Code.IDEMPOTENT_REJECTED
    assert w.ledger.latest_version() == version, "nothing was sent to the chain"


def test_a_pr_url_on_another_host_is_refused_before_any_transaction(w: MemoryWorld) -> None:
    bounty_id, pr = _accepted_with_pr(w)
    version = w.ledger.latest_version()
    foreign = pr.url.replace("https://forge.test", "http://elsewhere.example")
    assert _code(lambda: work.submit_pr(w["bob"], bounty_id, foreign)) is Code.VALIDATION
    assert w.ledger.latest_version() == version


def test_claiming_an_open_bounty_is_refused_without_a_transaction(w: MemoryWorld) -> None:
    published = _published(w)
    version = w.ledger.latest_version()
    assert _code(lambda: settle.claim_payout(w["bob"], published["bounty"]["bounty_id"])) is Code.INVALID_STATE
    assert w.ledger.latest_version() == version


def _submitted(w: MemoryWorld) -> tuple[str, Any]:
    bounty_id, pr = _accepted_with_pr(w)
    work.submit_pr(w["bob"], bounty_id, pr.url)
    follow(w.store, w.views, BountyBoard())
    return bounty_id, pr


def test_a_merge_no_webhook_reported_is_found_on_the_forge_and_recorded_once(w: MemoryWorld) -> None:
    bounty_id, pr = _submitted(w)
    w["bob"].forge.merge_pr(pr.url)  # merged while `code3 serve` was down: no webhook
    reporter = w["alice"]
    assert reconcile_merges(reporter) == [bounty_id]
    bounty = require_bounty(reporter, bounty_id)
    assert bounty.status is Status.COOLING_DOWN and bounty.merged_pr == pr.url
    follow(w.store, w.views, BountyBoard())
    assert reconcile_merges(reporter) == [], "a recorded merge is not reported again"


def test_a_merge_replayed_under_new_delivery_ids_records_nothing_more(w: MemoryWorld) -> None:
    bounty_id, pr = _submitted(w)
    w["bob"].forge.merge_pr(pr.url)
    first = settle.mark_merged(w["alice"], pr.url, delivery_id="d-1", bounty_id=bounty_id)
    length = w.store.recorder.max_notification_id()
    for delivery in ("d-2", "d-3"):
        again = settle.mark_merged(w["alice"], pr.url, delivery_id=delivery, bounty_id=bounty_id)
        assert again["duplicate"] and again["cooling_until"] == first["cooling_until"]
    assert w.store.recorder.max_notification_id() == length


def test_audit_verify_reports_a_stranded_submission_until_a_sync_heals_it(w: MemoryWorld) -> None:
    bounty_id, pr = _accepted_with_pr(w)
    w.ledger.submit_pr(w["bob"].signer, bounty_id, pr.url, pr.head_sha)  # recorded nowhere: the process died
    assert any("stranded" in p for p in audit.verify(w["alice"]).problems)
    require_bounty(w["alice"], bounty_id)
    assert audit.verify(w["alice"]).ok


def test_audit_verify_reports_a_forge_issue_with_code3_metadata_that_no_publish_owns(w: MemoryWorld) -> None:
    _published(w)
    body = next(iter(w.forge_state.issues.values())).body
    w["alice"].forge.create_issue(REPO, "[code3] a second issue of a raced publish", body, ["code3"], [])
    problems = audit.verify(w["alice"]).problems
    assert len(problems) == 1 and "orphan" in problems[0]
