"""The bounty lifecycle through the command handlers: on SQLite and PostgreSQL, on the embedded stack and
on the real adapters (githubkit, aptos-sdk) against their loopback stand-ins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adapters.git import git
from adapters.ports import IssueRef, Receipt
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from domain.errors import Code3Error
from mcp_tools.lifecycle import publish, settle, work
from mcp_tools.services import Services
from projections.replay import replay_aggregates, state_of
from tests.conftest import AMOUNT, REPO, STACKS, World

pytestmark = STACKS


def submit_work(w: World, who: str, published: dict[str, Any], feature_id: str) -> str:
    s = w[who]
    prepared = work.fork_and_prepare(s, REPO, {"schema": "code3/v1", "feature_id": feature_id,
                                               "issue_number": published["issue"]["number"]})
    (Path(prepared["workdir"]) / f"{who}.py").write_text(f"print('{who} was here')\n")
    pr = work.open_pr(s, REPO, prepared["branch"], f"feat: {who}", "work")
    work.submit_pr(s, published["bounty"]["bounty_id"], pr["pr_url"])
    return pr["pr_url"]


def code_of(call: Any) -> str:
    with pytest.raises(Code3Error) as caught:
        call()
    assert caught.value.hint, "every failure says what to do next"
    return caught.value.code.value


def events_in(w: World) -> int:
    return w["alice"].store.recorder.max_notification_id() or 0


def test_whole_lifecycle_pays_the_first_merged_prs_worker(world: World) -> None:
    w = world
    published = w.published()
    bounty_id = published["bounty"]["bounty_id"]
    task_id = f"{REPO}#{published['issue']['number']}"
    feature_id = next(p.name for p in (w.project / "specs").iterdir())

    assert work.accept_task(w["bob"], task_id)["labels"] == ["in-progress"]  # the state label, as seed 001 answers
    assert w.forge.get_issue(REPO, published["issue"]["number"]).labels == ["code3", "in-progress"]
    assert work.accept_best_task(w["carol"])["selected_task_id"] == task_id
    bob_pr = submit_work(w, "bob", published, feature_id)
    carol_pr = submit_work(w, "carol", published, feature_id)

    w.stack.merge_pr(carol_pr)
    merged = settle.mark_merged(w["alice"], carol_pr, delivery_id="d-1")
    assert merged["winner"] == w.address("carol")
    assert merged["cooling_until"] == merged["merged_at"] + w.stack.cooling_period
    w.stack.merge_pr(bob_pr)
    late = settle.mark_merged(w["alice"], bob_pr, delivery_id="d-2")
    assert late["winner"] == w.address("carol") and "first merged PR won" in late["note"]

    assert code_of(lambda: settle.claim_payout(w["carol"], bounty_id)) == "E_COOLING"
    w.stack.advance(w.stack.cooling_period)
    assert code_of(lambda: settle.claim_payout(w["bob"], bounty_id)) == "E_UNAUTHORIZED"
    paid = settle.claim_payout(w["carol"], bounty_id)

    assert w.ledger.balance(w.address("carol"), "USDT") == AMOUNT
    assert w.ledger.balance(w.address("bob"), "USDT") == 0
    assert w.stack.escrow() == 0
    assert w.ledger.balance(w.address("alice"), "USDT") == 9 * AMOUNT
    assert w.forge.get_issue(REPO, published["issue"]["number"]).labels == ["code3", "paid"]
    bounty = w["alice"].store.get(Bounty, Bounty.create_id(bounty_id))
    assert bounty is not None and bounty.status is Status.PAID and bounty.paid_tx == paid["tx_hash"]


def test_repeating_each_command_with_its_key_changes_nothing_and_answers_the_same(world: World) -> None:
    w = world
    spec = w.specified()
    args = w.publish_args(spec)
    first = publish.publish_issue_with_metadata(w["alice"], **args)
    bounty_id = first["bounty"]["bounty_id"]
    task_id = f"{REPO}#{first['issue']['number']}"
    accepted = work.accept_task(w["bob"], task_id)
    pr_url = submit_work(w, "bob", first, spec["feature_id"])
    submitted = work.submit_pr(w["bob"], bounty_id, pr_url)
    w.stack.merge_pr(pr_url)
    merged = settle.mark_merged(w["alice"], pr_url, delivery_id="delivery-1")
    w.stack.advance(w.stack.cooling_period)
    claimed = settle.claim_payout(w["bob"], bounty_id)
    chain_version = len(w.ledger.bounty_events(bounty_id))
    before = events_in(w)

    assert publish.publish_issue_with_metadata(w["alice"], **args) == first
    assert work.accept_task(w["bob"], task_id) == {**accepted, "labels": ["paid"]}
    again = work.submit_pr(w["bob"], bounty_id, pr_url)
    # the same submission; its `link` says how a merge reaches bob, which the merge's report has made a link since
    assert {k: v for k, v in again.items() if k != "link"} == {k: v for k, v in submitted.items() if k != "link"}
    assert submitted["link"]["status"] == "statement published" and again["link"] == {
        "status": "linked", "forge_user": "bob", "account": w.address("bob")}
    repeat = settle.mark_merged(w["alice"], pr_url, delivery_id="delivery-1")
    assert repeat["duplicate"] is True and repeat["winner"] == merged["winner"]
    assert settle.claim_payout(w["bob"], bounty_id) == claimed

    assert events_in(w) == before, "a repeat records nothing"
    assert len(w.ledger.bounty_events(bounty_id)) == chain_version, "a repeat sends no transaction"
    assert w.stack.issue_count(REPO) == 1
    assert len(w.ledger.list_bounties()) == 1


def test_another_pr_from_the_same_worker_is_rejected(world: World) -> None:
    w = world
    spec = w.specified()
    published = publish.publish_issue_with_metadata(w["alice"], **w.publish_args(spec))
    work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    first = submit_work(w, "bob", published, spec["feature_id"])
    workdir = w["bob"].workspace / "bob__todo-app"
    git("checkout", "-q", "-b", "second-try", cwd=workdir)
    other = work.open_pr(w["bob"], REPO, "second-try", "another attempt", "")["pr_url"]
    assert other != first
    assert code_of(lambda: work.submit_pr(w["bob"], published["bounty"]["bounty_id"], other)) \
        == "E_IDEMPOTENT_REJECTED"


def test_publishing_a_published_feature_on_other_terms_is_rejected(world: World) -> None:
    w = world
    spec = w.specified()
    first = publish.publish_issue_with_metadata(w["alice"], **w.publish_args(spec))
    answer = code_of(lambda: publish.publish_issue_with_metadata(w["alice"], **w.publish_args(spec, amount=5)))
    assert answer == "E_IDEMPOTENT_REJECTED"
    assert w.stack.issue_count(REPO) == 1
    assert [b.bounty_id for b in w.ledger.list_bounties()] == [first["bounty"]["bounty_id"]]


class Crash(Exception):
    """The process dies here: the side effect happened, nothing after it did."""


class ForgeDyingAfterCreate:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_issue(self, *args: Any, **kwargs: Any) -> IssueRef:
        self.inner.create_issue(*args, **kwargs)
        raise Crash

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class ChainDyingAfterCreate:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_bounty(self, *args: Any, **kwargs: Any) -> Receipt:
        self.inner.create_bounty(*args, **kwargs)
        raise Crash

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def crashing(s: Services, **ports: Any) -> Services:
    return Services(**{**vars(s), **ports})


def test_publish_interrupted_after_the_issue_was_created_resumes_without_a_second_issue(world: World) -> None:
    w = world
    spec = w.specified()
    alice = w["alice"]
    with pytest.raises(Crash):
        publish.publish_issue_with_metadata(crashing(alice, forge=ForgeDyingAfterCreate(alice.forge)),
                                            **w.publish_args(spec))
    assert w.stack.issue_count(REPO) == 1 and w.ledger.list_bounties() == []

    resumed = publish.publish_issue_with_metadata(w.services("alice"), **w.publish_args(spec))

    assert w.stack.issue_count(REPO) == 1
    issue = w.forge.get_issue(REPO, resumed["issue"]["number"])
    assert len(w.ledger.list_bounties()) == 1
    assert f'"bounty_id": "{resumed["bounty"]["bounty_id"]}"' in issue.body


def test_publish_interrupted_after_the_bounty_was_created_resumes_without_a_second_bounty(world: World) -> None:
    w = world
    spec = w.specified()
    alice = w["alice"]
    with pytest.raises(Crash):
        publish.publish_issue_with_metadata(crashing(alice, chain=ChainDyingAfterCreate(alice.chain)),
                                            **w.publish_args(spec))
    assert len(w.ledger.list_bounties()) == 1

    resumed = publish.publish_issue_with_metadata(w.services("alice"), **w.publish_args(spec))

    assert [b.bounty_id for b in w.ledger.list_bounties()] == [resumed["bounty"]["bounty_id"]]
    assert w.ledger.balance(w.address("alice"), "USDT") == 9 * AMOUNT, "escrowed once"
    bounty = w["alice"].store.get(Bounty, Bounty.create_id(resumed["bounty"]["bounty_id"]))
    assert bounty is not None and bounty.amount == AMOUNT


def test_chain_events_whose_recording_was_lost_are_recorded_exactly_once(world: World) -> None:
    w = world
    published = w.published()
    bounty_id = published["bounty"]["bounty_id"]
    w.ledger.accept_bounty(w["bob"].signer, bounty_id)  # committed on chain; the process died before recording
    result = work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    assert result["labels"] == ["in-progress"]
    assert w.forge.get_issue(REPO, published["issue"]["number"]).labels == ["code3", "in-progress"]
    bounty = w.services("carol").store.get(Bounty, Bounty.create_id(bounty_id))
    assert bounty is not None and bounty.workers == [w.address("bob")]
    assert len(bounty.seen) == len(w.ledger.bounty_events(bounty_id))


def test_replaying_the_log_rebuilds_every_aggregate_and_agrees_with_the_chain(world: World) -> None:
    w = world
    spec = w.specified()
    published = publish.publish_issue_with_metadata(w["alice"], **w.publish_args(spec))
    bounty_id = published["bounty"]["bounty_id"]
    work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    work.accept_best_task(w["carol"])
    pr_url = submit_work(w, "bob", published, spec["feature_id"])
    w.stack.merge_pr(pr_url)
    settle.mark_merged(w["alice"], pr_url, delivery_id="x")
    w.stack.advance(w.stack.cooling_period)
    settle.claim_payout(w["bob"], bounty_id)

    fresh = w.services("carol").store
    replayed = replay_aggregates(fresh)
    assert len(replayed) >= 5  # spec, issue, bounty and the index entries
    for aggregate_id, state in replayed.items():
        assert state_of(state) == state_of(fresh.repository.get(aggregate_id))
    bounty = replayed[Bounty.create_id(bounty_id)]
    chain = w.ledger.get_bounty(bounty_id)
    assert chain is not None
    assert (bounty.status, bounty.entrants, bounty.winner, bounty.cooling_until, bounty.pool) == (
        chain.status, chain.entrants, chain.winner, chain.cooling_until, chain.pool)
    assert bounty.comparable() == chain.comparable()


def test_best_task_strategies_rank_by_amount_or_amount_per_effort(world: World) -> None:
    w = world
    big = w.published(amount=3 * AMOUNT, description="Import to-do lists from three formats")
    small_spec = w.specified(description="Dark mode")
    (w.project / "specs" / small_spec["feature_id"] / "tasks.md").write_text("- [ ] T001 one task\n")
    small = publish.publish_issue_with_metadata(w["alice"], **w.publish_args(small_spec, amount=2 * AMOUNT))

    by_effort = work.accept_best_task(w["bob"], strategy="max_amount_per_effort")
    by_amount = work.accept_best_task(w["carol"], min_amount="1")
    assert by_effort["bounty_id"] == small["bounty"]["bounty_id"]
    assert by_amount["bounty_id"] == big["bounty"]["bounty_id"]
    nothing = work.accept_best_task(w["carol"], min_amount=str(10 * AMOUNT))
    assert nothing["selected_task_id"] is None and nothing["success"] is True


def test_settlement_steps_out_of_order_answer_their_codes(world: World) -> None:
    w = world
    spec = w.specified()
    published = publish.publish_issue_with_metadata(w["alice"], **w.publish_args(spec))
    bounty_id = published["bounty"]["bounty_id"]
    work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    assert code_of(lambda: settle.claim_payout(w["bob"], bounty_id)) == "E_INVALID_STATE"
    pr_url = submit_work(w, "bob", published, spec["feature_id"])
    assert code_of(lambda: settle.mark_merged(w["alice"], pr_url, delivery_id="early")) == "E_PRECONDITION"
    w.stack.merge_pr(pr_url)
    assert code_of(lambda: settle.mark_merged(w["bob"], pr_url, delivery_id="d")) == "E_UNAUTHORIZED"
    assert code_of(lambda: work.accept_task(w["alice"], f"{REPO}#{published['issue']['number']}")) \
        == "E_UNAUTHORIZED"
    assert code_of(lambda: work.submit_pr(w["carol"], bounty_id, pr_url)) == "E_UNAUTHORIZED"
    assert code_of(lambda: work.accept_task(w["bob"], f"{REPO}#77")) == "E_NOT_FOUND"
    assert code_of(lambda: settle.claim_payout(w["bob"], "4242")) == "E_NOT_FOUND"
