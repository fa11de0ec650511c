"""No frozen escrow, no refund racing a merge, no unpaid merge: past its deadline a bounty whose submitted PR was
closed unmerged is refunded to its sponsor once its worker had the grace to dispute, one whose PR never closed is
refunded at the deadline's grace at the latest, and one whose PR merged on the forge is not (the merge is reported
instead)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domain.bounties.bounty import Bounty
from domain.bounties.contract import REFUND_GRACE, Status
from mcp_tools.lifecycle import publish, specs, work
from mcp_tools.lifecycle.merge_watch import reconcile_merges
from projections.bounties.board import BountyBoard
from projections.runner import follow
from scheduler.payouts import expire
from tests.unit.handler_world import AMOUNT, REPO, MemoryWorld

DEADLINE = 3600


@pytest.fixture
def w(tmp_path: Path) -> Iterator[MemoryWorld]:
    world = MemoryWorld(tmp_path)
    yield world
    world.close()


def _submitted(w: MemoryWorld) -> tuple[str, Any]:
    alice = w["alice"]
    spec = specs.specify(alice, "Users can export their to-do list as CSV")
    published = publish.publish_issue_with_metadata(alice, repo=REPO, feature_id=spec["feature_id"],
                                                    spec_path=spec["paths"]["spec"], amount=str(AMOUNT),
                                                    asset="USDT", network=w.ledger.network,
                                                    deadline_seconds=DEADLINE)
    work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    pr = w["bob"].forge.open_pr(REPO, "bob:feat/x", "main", "feat: x", "body")
    work.submit_pr(w["bob"], published["bounty"]["bounty_id"], pr.url)
    return published["bounty"]["bounty_id"], pr


def _services_for(w: MemoryWorld) -> Any:
    by_address = {w[n].signer.address: w[n] for n in ("alice", "bob", "carol")}
    return lambda address: by_address.get(address)


def _past_deadline(w: MemoryWorld) -> None:
    w.ledger.advance(DEADLINE + 1)
    follow(w.store, w.views, BountyBoard())


def test_a_submitted_pr_that_never_closed_does_not_freeze_the_escrow_past_the_deadlines_grace(
        w: MemoryWorld) -> None:
    bounty_id, _ = _submitted(w)
    _past_deadline(w)
    assert expire(w["alice"], _services_for(w)) == [], "the open PR may still merge: no refund racing it"
    w.ledger.advance(REFUND_GRACE)
    follow(w.store, w.views, BountyBoard())
    assert expire(w["alice"], _services_for(w)) == [bounty_id]
    bounty = w.store.get(Bounty, Bounty.create_id(bounty_id))
    assert bounty is not None and bounty.status is Status.CANCELLED
    assert w.ledger.balance(w["alice"].signer.address, "USDT") == 10 * AMOUNT


def test_a_pr_closed_unmerged_is_refunded_after_the_grace_its_worker_had_to_dispute(w: MemoryWorld) -> None:
    bounty_id, pr = _submitted(w)
    _past_deadline(w)
    w["bob"].forge.close_pr(pr.url)
    assert reconcile_merges(w["alice"]) == []  # the resolver sees it closed: rejected as CLOSED
    assert w.store.get(Bounty, Bounty.create_id(bounty_id)).submissions[w["bob"].signer.address]["state"] == "closed"
    follow(w.store, w.views, BountyBoard())
    assert expire(w["alice"], _services_for(w)) == [], "bob may dispute a cherry-pick for the grace"
    w.ledger.advance(REFUND_GRACE)
    assert expire(w["alice"], _services_for(w)) == [bounty_id]


def test_a_sponsor_cannot_take_back_a_bounty_whose_pr_merged_on_the_forge(w: MemoryWorld) -> None:
    bounty_id, pr = _submitted(w)
    w["bob"].forge.merge_pr(pr.url)  # merged, but no webhook reported it
    _past_deadline(w)
    assert expire(w["alice"], _services_for(w)) == []
    assert reconcile_merges(w["alice"]) == [bounty_id]
    bounty = w.store.get(Bounty, Bounty.create_id(bounty_id))
    assert bounty is not None and bounty.status is Status.COOLING_DOWN
