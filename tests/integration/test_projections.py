"""Projections follow the log with tracking: board, forge mirror, chain sync and reconciliation."""

from __future__ import annotations

import re
import time

from adapters.sql import SqlDb
from adapters.tracking import NamedCursor
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from mcp_tools.lifecycle import settle, work
from mcp_tools.lifecycle.chain_sync import CURSOR, reconcile, reconcile_all, sync_new_events
from mcp_tools.lifecycle.forge_mirror import ForgeMirror
from projections.bounties import board
from projections.bounties.board import BountyBoard
from projections.runner import Runner, dead_letters, follow
from tests.conftest import REPO, World
from tests.integration.test_lifecycle import submit_work


def settled(w: World) -> tuple[dict, str]:
    """A bounty taken through the whole lifecycle by bob (carol also accepted)."""
    spec = w.specified()
    published = w.published_spec(spec)
    task_id = f"{REPO}#{published['issue']['number']}"
    work.accept_task(w["bob"], task_id)
    work.accept_task(w["carol"], task_id)
    pr_url = submit_work(w, "bob", published, spec["feature_id"])
    w.stack.merge_pr(pr_url)
    settle.mark_merged(w["alice"], pr_url, delivery_id="d1")
    w.stack.advance(w.stack.cooling_period)
    settle.claim_payout(w["bob"], published["bounty"]["bounty_id"])
    return published, pr_url


def test_board_resumes_where_it_stopped_and_equals_a_rebuild(world: World, tmp_path) -> None:
    w = world
    published, _ = settled(w)
    views = w["alice"].views
    first = Runner(w["alice"].store, views)
    assert first.run_once(BountyBoard(), limit=3) == 3
    first.release(BountyBoard.name)
    second = Runner(w.services("bob").store, views)
    second.catch_up(BountyBoard(), limit=4)
    assert second.position(BountyBoard.name) == w["alice"].store.recorder.max_notification_id()
    [row] = board.rows(views)
    assert row["state"] == Status.PAID.name and row["bounty_id"] == published["bounty"]["bounty_id"]
    assert row["winner"] == w.address("bob") and sorted(row["workers"]) == sorted([w.address("bob"),
                                                                                  w.address("carol")])
    fresh = SqlDb.sqlite(tmp_path / "rebuild.sqlite")
    Runner(w["alice"].store, fresh).catch_up(BountyBoard())
    assert board.rows(fresh) == board.rows(views)
    fresh.close()


def test_a_lease_keeps_a_second_runner_off_a_projector_with_effects(world: World) -> None:
    w = world
    w.published()
    holder = Runner(w["alice"].store, w["alice"].views, owner="worker-1")
    other = Runner(w["alice"].store, w["alice"].views, owner="worker-2")
    mirror = ForgeMirror(w["alice"].store, w["alice"].forge)
    assert holder.run_once(mirror, limit=1) == 1
    assert other.run_once(mirror) == 0
    holder.release(mirror.name)
    assert other.run_once(mirror) > 0
    other.release(mirror.name)


class SlowEffects:
    """A projector with effects whose every effect takes 50 ms (a slow forge): what it saw, in order."""

    name, version, has_effects, schema = "slow_effects", 1, True, ""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def effect(self, event: object) -> None:
        time.sleep(0.05)
        self.seen.append(f"{event.originator_id}:{event.originator_version}")  # type: ignore[attr-defined]

    def apply(self, event: object, cur: object) -> None:
        return None


def test_a_round_of_effects_ends_at_its_budget_and_the_next_round_goes_on_from_there(world: World) -> None:
    """The worker gives the mirror a share of each round (`budget_s`): a backlog of slow forge calls goes on next
    round, every event's effect once and in order, instead of holding up the round's payouts."""
    w = world
    w.published()
    w.published(description="Users can share a list by link")
    alice = w["alice"]
    head = alice.store.recorder.max_notification_id()
    assert head >= 8
    runner, slow = Runner(alice.store, alice.views, owner="worker-1"), SlowEffects()
    try:
        started = time.monotonic()
        first = runner.catch_up(slow, budget_s=0.12)
        assert 1 <= first < head and time.monotonic() - started < 1.0
        rounds = 1
        while runner.position(slow.name) < head:
            assert runner.catch_up(slow, budget_s=0.12) >= 1, "a round always moves"
            rounds += 1
        assert rounds >= 3 and len(slow.seen) == len(set(slow.seen)) == head
        assert dead_letters(alice.views) == []
        assert runner.catch_up(slow, budget_s=0.12) == 0
    finally:
        runner.release(slow.name)


def test_a_pure_projector_takes_no_lease(world: World) -> None:
    """Two processes catch the board up one after the other, each while the other's runner still lives."""
    w = world
    w.published()
    first = Runner(w["alice"].store, w["alice"].views, owner="worker-1")
    assert first.run_once(BountyBoard(), limit=1) == 1
    assert follow(w["bob"].store, w["bob"].views, BountyBoard()) > 0
    assert len(board.rows(w["bob"].views)) == 1
    assert w["alice"].views.query("SELECT COUNT(*) FROM projection_leases")[0][0] == 0


def test_the_mirror_writes_one_comment_per_transition_even_when_repeated(world: World) -> None:
    w = world
    published, _ = settled(w)
    number = published["issue"]["number"]
    mirror = ForgeMirror(w["alice"].store, w["alice"].forge)
    runner = Runner(w["alice"].store, w["alice"].views)
    runner.catch_up(mirror)
    comments = w.forge.list_comments(REPO, number)
    markers = [re.search(r"<!-- code3:[^>]+-->", c.body).group(0) for c in comments]
    bounty = w["alice"].store.get(Bounty, Bounty.create_id(published["bounty"]["bounty_id"]))
    transitions = len(bounty.seen)  # created, 2 accepted, submitted, merged, cooling, paid
    assert len(comments) == transitions == 7 and len(set(markers)) == transitions
    assert w.forge.get_issue(REPO, number).labels == ["code3", "paid"]

    with w["alice"].views.transaction() as cur:  # a crash after the forge writes, before tracking
        cur.execute("UPDATE projection_tracking SET position = 0 WHERE name = ?", (mirror.name,))
    runner.catch_up(mirror)
    assert [c.body for c in w.forge.list_comments(REPO, number)] == [c.body for c in comments]


def test_chain_sync_records_what_another_machine_did_once(world: World) -> None:
    w = world
    published = w.published()
    bounty_id = published["bounty"]["bounty_id"]
    w.ledger.accept_bounty(w["carol"].signer, bounty_id)  # a wallet elsewhere; no handler saw it
    alice = w["alice"]
    assert sync_new_events(alice, alice.views) == 2
    assert NamedCursor(alice.views, CURSOR).get() == w.ledger.bounty_events(bounty_id)[-1].version
    assert sync_new_events(alice, alice.views) == 0
    bounty = alice.store.get(Bounty, Bounty.create_id(bounty_id))
    assert bounty.workers == [w.address("carol")] and bounty.status is Status.STARTED


def test_a_mirror_that_disagrees_with_the_chain_is_corrected_and_the_disagreement_recorded(world: World) -> None:
    w = world
    published = w.published()
    bounty_id = published["bounty"]["bounty_id"]
    store = w["alice"].store
    bounty = store.get(Bounty, Bounty.create_id(bounty_id))
    bounty._accepted(worker="0xforged", coords={"tx_hash": "0xnone", "version": 10**9, "index": 0})
    store.save(bounty)

    assert reconcile_all(w["alice"]) == [bounty_id]

    fixed = store.get(Bounty, Bounty.create_id(bounty_id))
    assert fixed.workers == [] and fixed.status is Status.OPEN
    events = [type(e).__name__ for e in store.repository.event_store.get(fixed.id)]
    assert events[-1] == "Reconciled"
    assert reconcile_all(w["alice"]) == []


def test_a_chain_only_ahead_of_the_log_is_recorded_not_reconciled(world: World) -> None:
    """A transaction whose events are not recorded yet (its handler is still at it) is no disagreement: reconcile
    records the chain's events and no Reconciled, so the mirror posts no "corrected" comment beside the
    transition's own (seen in the soak campaign)."""
    w = world
    bounty_id = w.published()["bounty"]["bounty_id"]
    alice = w["alice"]
    stale = alice.store.get(Bounty, Bounty.create_id(bounty_id))
    w.ledger.accept_bounty(w["carol"].signer, bounty_id)  # committed on chain; nobody has recorded it yet

    assert reconcile(alice, stale) is False

    bounty = alice.store.get(Bounty, Bounty.create_id(bounty_id))
    assert bounty.status is Status.STARTED and bounty.workers == [w.address("carol")]
    events = [type(e).__name__ for e in alice.store.repository.event_store.get(bounty.id)]
    assert "Reconciled" not in events and events[-1] == "Accepted"


def test_two_servers_each_read_their_own_writes(world: World) -> None:
    """Two MCP servers each catch the board up before choosing a task: each sees what was just written."""
    w = world
    w.published()
    assert follow(w["bob"].store, w["bob"].views, BountyBoard()) > 0
    w.published(description="A second feature")
    assert follow(w["carol"].store, w["carol"].views, BountyBoard()) > 0
    assert len(board.rows(w["alice"].views)) == 2
