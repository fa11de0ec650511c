"""No frozen escrow, no unpaid merge: past its deadline a bounty whose submitted PR never merged is refunded
to its sponsor, and one whose PR merged on the forge is not (the merge is reported instead)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domain.bounty import Bounty
from domain.contract import Status
from mcp_tools.lifecycle import publish, specs, work
from mcp_tools.lifecycle.merge_watch import reconcile_merges
from projections.board import BountyBoard
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


def test_a_submitted_pr_that_never_merged_does_not_freeze_the_escrow_past_the_deadline(w: MemoryWorld) -> None:
    bounty_id, _ = _submitted(w)
    _past_deadline(w)
    assert expire(w["alice"], _services_for(w)) == [bounty_id]
    bounty = w.store.get(Bounty, Bounty.create_id(bounty_id))
    assert bounty is not None and bounty.status is Status.CANCELLED
    assert w.ledger.balance(w["alice"].signer.address, "USDT") == 10 * AMOUNT


def test_a_sponsor_cannot_take_back_a_bounty_whose_pr_merged_on_the_forge(w: MemoryWorld) -> None:
    bounty_id, pr = _submitted(w)
    w["bob"].forge.merge_pr(pr.url)  # merged, but no webhook reported it
    _past_deadline(w)
    assert expire(w["alice"], _services_for(w)) == []
    assert reconcile_merges(w["alice"]) == [bounty_id]
    bounty = w.store.get(Bounty, Bounty.create_id(bounty_id))
    assert bounty is not None and bounty.status is Status.COOLING_DOWN
