"""The merge webhook against the worker's own look for merges (issue 20): both see a submitted PR merged on the
forge, one sends the chain's mark_merged first. The other must answer the merge that won, not fail: a webhook that
lost the race was answered 202 and its delivery dead-lettered, though nothing was wrong."""

from __future__ import annotations

from typing import Any

from adapters.webhook_inbox import Inbox
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from mcp_tools.lifecycle import settle
from mcp_tools.lifecycle.merge_watch import reconcile_merges
from projections.bounties.board import BountyBoard
from projections.runner import Runner
from tests.conftest import World
from tests.integration.test_lifecycle import crashing
from tests.integration.test_webhook import deliver, github_payload, submitted


class WorkerFirst:
    """The forge as the webhook's handler sees it, except that the worker's merge look runs in between the
    handler's check of the PR and its transaction (the race's losing order, made certain)."""

    def __init__(self, inner: Any, worker_turn: Any) -> None:
        self.inner, self.worker_turn, self.fired = inner, worker_turn, False

    def get_pr(self, url: str) -> Any:
        pr = self.inner.get_pr(url)
        if not self.fired:
            self.fired = True
            self.worker_turn()
        return pr

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _worker_turn(w: World) -> Any:
    def turn() -> None:
        worker = w.services("alice")  # the worker's own services, as its process has them
        Runner(worker.store, worker.views).catch_up(BountyBoard(), keep_lease=False)
        assert len(reconcile_merges(worker)) == 1, "the worker reports the merge first"

    return turn


def test_a_webhook_that_loses_the_race_to_the_worker_answers_the_recorded_merge_and_leaves_no_dead_letter(
        world: World) -> None:
    w = world
    published, pr_url = submitted(w)
    w.stack.merge_pr(pr_url)
    bounty_id = published["bounty"]["bounty_id"]
    raced = crashing(w["alice"], forge=WorkerFirst(w["alice"].forge, _worker_turn(w)))
    answer = deliver(raced, github_payload(pr_url), delivery="d-race")
    assert answer.status == 200, answer.body
    assert answer.body["duplicate"] is True and answer.body["state"] == "COOLING_DOWN"
    assert Inbox(w["alice"].views).dead() == []
    bounty = w["alice"].store.get(Bounty, Bounty.create_id(bounty_id))
    assert bounty.status is Status.COOLING_DOWN and bounty.merged_pr == pr_url
    assert [ev.type for ev in w.ledger.bounty_events(bounty_id)].count("BountyMerged") == 1


def test_mark_merged_that_loses_the_race_answers_the_merge_that_won(world: World) -> None:
    w = world
    published, pr_url = submitted(w)
    w.stack.merge_pr(pr_url)
    raced = crashing(w["alice"], forge=WorkerFirst(w["alice"].forge, _worker_turn(w)))
    answer = settle.mark_merged(raced, pr_url, delivery_id="d-direct")
    assert answer["duplicate"] is True and answer["merged_pr"] == pr_url
    assert answer["bounty_id"] == published["bounty"]["bounty_id"]
