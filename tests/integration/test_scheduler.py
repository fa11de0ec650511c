"""The worker's scheduled work: auto-claim for local winners, claimable otherwise, deadlines refund."""

from __future__ import annotations

from code3 import wiring
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from mcp_tools.lifecycle import audit, publish, settle, work
from projections.bounties import board
from tests.conftest import AMOUNT, REPO, World
from tests.integration.test_lifecycle import submit_work


def cooling(w: World) -> dict:
    spec = w.specified()
    published = w.published_spec(spec)
    work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    pr_url = submit_work(w, "bob", published, spec["feature_id"])
    w.stack.merge_pr(pr_url)
    settle.mark_merged(w["alice"], pr_url, delivery_id="d")
    return published


def test_the_worker_claims_for_a_winner_whose_key_it_holds_once_cooling_ends(world: World) -> None:
    w = world
    published = cooling(w)
    worker = wiring.worker(w.settings("alice"))
    try:
        worker.tick()
        assert w.ledger.balance(w.address("bob"), "USDT") == 0, "not before cooling_until"
        w.stack.advance(w.stack.cooling_period)
        assert worker.tick()["payouts"] == 1
        worker.tick()
    finally:
        worker.close()
    assert w.ledger.balance(w.address("bob"), "USDT") == AMOUNT and w.stack.escrow() == 0
    paid = [e for e in w.ledger.bounty_events(published["bounty"]["bounty_id"]) if e.type == "BountyPaid"]
    assert len(paid) == 1


def test_without_the_winners_key_the_bounty_is_marked_claimable(world: World) -> None:
    w = world
    published = cooling(w)
    (w.settings("alice").keystore_dir / "bob.key").unlink()  # bob's key lives on his own machine
    w.stack.advance(w.stack.cooling_period)
    worker = wiring.worker(w.settings("alice"))
    try:
        worker.tick()
        worker.tick()
    finally:
        worker.close()
    bounty_id = published["bounty"]["bounty_id"]
    bounty = w["alice"].store.get(Bounty, Bounty.create_id(bounty_id))
    assert bounty.status is Status.COOLING_DOWN and bounty.claimable
    [row] = board.rows(w["alice"].views)
    assert row["claimable"] == 1
    history = [record["event"] for record in audit.history(w["alice"], bounty_id)]
    assert history.count("BecameClaimable") == 1


def test_an_open_bounty_past_its_deadline_is_cancelled_and_refunded(world: World) -> None:
    w = world
    spec = w.specified()
    published = publish.publish_issue_with_metadata(w["alice"], **w.publish_args(spec), deadline_seconds=3600)
    worker = wiring.worker(w.settings("alice"))
    try:
        assert worker.tick()["expired"] == 0
        w.stack.advance(3600)
        assert worker.tick()["expired"] == 1
        worker.tick()
    finally:
        worker.close()
    assert w.ledger.balance(w.address("alice"), "USDT") == 10 * AMOUNT and w.stack.escrow() == 0
    assert w.forge.get_issue(REPO, published["issue"]["number"]).labels == ["cancelled", "code3"]
    assert board.rows(w["alice"].views)[0]["state"] == Status.CANCELLED.name


def test_audit_history_lists_a_bountys_events_with_chain_coordinates(world: World) -> None:
    w = world
    published = cooling(w)
    records = audit.history(w["alice"], published["bounty"]["bounty_id"])
    assert [r["event"] for r in records] == ["Created", "Accepted", "PRSubmitted", "Merged", "CoolingStarted",
                                             "MergeReported"]
    assert all(r["data"]["coords"]["tx_hash"].startswith("0x") for r in records[:5])
    by_task = audit.history(w["alice"], f"{REPO}#{published['issue']['number']}")
    assert by_task[0]["event"] == "PublishRequested"
