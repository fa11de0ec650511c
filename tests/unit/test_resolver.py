"""The resolver's judgement of a live submission, from the forge, on in-memory adapters: each verdict, and the link
statements it accepts or refuses. The chain's own checks of the same facts are in test_contract; the campaign
(tests/campaigns/test_money_integrity.py) plays the attacks end to end with real processes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from adapters.keystore import public_key_of, sign
from domain.bounties.contract import Rejection, Status
from domain.bounties.links import LinkStatement, find_statement, link_message
from mcp_tools.lifecycle import publish, resolver, specs, work
from mcp_tools.lifecycle.chain_record import require_bounty
from mcp_tools.lifecycle.identity import comment_text, statement
from tests.unit.handler_world import AMOUNT, REPO, MemoryWorld


@pytest.fixture
def w(tmp_path: Path) -> Iterator[MemoryWorld]:
    world = MemoryWorld(tmp_path)
    yield world
    world.close()


def _bounty(w: MemoryWorld, n: int = 1) -> tuple[str, str]:
    alice = w["alice"]
    spec = specs.specify(alice, f"Feature {n}: users can export their lists as format {n}")
    published = publish.publish_issue_with_metadata(
        alice, repo=REPO, feature_id=spec["feature_id"], spec_path=spec["paths"]["spec"], amount=str(AMOUNT),
        asset="USDT", network=w.ledger.network, mode="contest")
    return published["bounty"]["bounty_id"], f"{REPO}#{published['issue']['number']}"


def _verdicts(w: MemoryWorld, bounty_id: str) -> dict[str, Any]:
    return {v.worker: v for v in resolver.review(w["alice"], bounty_id)}


def test_a_pr_of_another_repository_is_rejected_and_blocks_nothing(w: MemoryWorld) -> None:
    bounty_id, task = _bounty(w)
    work.accept_task(w["carol"], task)
    w["carol"].forge.create_repo("carol/elsewhere")
    theirs = w["carol"].forge.open_pr("carol/elsewhere", "feat/x", "main", "x", "")
    w.ledger.submit_pr(w["carol"].signer, bounty_id, theirs.url, theirs.head_sha)
    [verdict] = _verdicts(w, bounty_id).values()
    assert (verdict.action, verdict.reason) == ("reject", Rejection.NOT_IN_REPO)
    bounty = require_bounty(w["alice"], bounty_id)
    assert bounty.submissions == {} and bounty.status is Status.STARTED


def test_a_pr_into_another_branch_than_the_default_is_rejected(w: MemoryWorld) -> None:
    bounty_id, task = _bounty(w)
    work.accept_task(w["bob"], task)
    into_dev = w["bob"].forge.open_pr(REPO, "bob:feat/x", "dev", "x", "")
    w.ledger.submit_pr(w["bob"].signer, bounty_id, into_dev.url, into_dev.head_sha)
    assert _verdicts(w, bounty_id)[w["bob"].signer.address].reason is Rejection.WRONG_BASE


def test_a_linked_submitter_of_someone_elses_pr_is_rejected_and_the_author_wins(w: MemoryWorld) -> None:
    bounty_id, task = _bounty(w)
    for name in ("bob", "carol"):
        work.accept_task(w[name], task)
    bobs = w["bob"].forge.open_pr(REPO, "bob:feat/x", "main", "x", "")
    _link(w, "carol", bobs.repo, bobs.number)  # carol is linked to her own forge account
    w.ledger.submit_pr(w["carol"].signer, bounty_id, bobs.url, bobs.head_sha)  # front-running bob
    work.submit_pr(w["bob"], bounty_id, bobs.url)  # not refused: several may name one PR
    assert _verdicts(w, bounty_id)[w["carol"].signer.address].reason is Rejection.NOT_AUTHOR, "known before a merge"
    w["bob"].forge.merge_pr(bobs.url)
    verdicts = _verdicts(w, bounty_id)
    assert verdicts[w["bob"].signer.address].action == "merge"
    assert require_bounty(w["alice"], bounty_id).winner == w["bob"].signer.address


def test_a_merged_pr_of_an_unlinked_author_waits_and_pays_nobody(w: MemoryWorld) -> None:
    bounty_id, task = _bounty(w)
    work.accept_task(w["bob"], task)
    pr = w["bob"].forge.open_pr(REPO, "bob:feat/x", "main", "x", "")
    w.ledger.submit_pr(w["bob"].signer, bounty_id, pr.url, pr.head_sha)  # no tool: no statement posted
    w["bob"].forge.merge_pr(pr.url)
    [verdict] = _verdicts(w, bounty_id).values()
    assert verdict.action == "wait" and "not linked" in verdict.note
    _link(w, "bob", pr.repo, pr.number, record=False)  # the author publishes a statement at last
    [verdict] = _verdicts(w, bounty_id).values()
    assert verdict.action == "merge" and require_bounty(w["alice"], bounty_id).status is Status.COOLING_DOWN


def test_a_closed_pr_is_rejected_as_closed_and_kept_for_a_dispute(w: MemoryWorld) -> None:
    bounty_id, task = _bounty(w)
    work.accept_task(w["bob"], task)
    pr = w["bob"].forge.open_pr(REPO, "bob:feat/x", "main", "x", "")
    work.submit_pr(w["bob"], bounty_id, pr.url)
    w["alice"].forge.close_pr(pr.url)  # type: ignore[attr-defined]
    assert _verdicts(w, bounty_id)[w["bob"].signer.address].reason is Rejection.CLOSED
    assert require_bounty(w["alice"], bounty_id).submissions[w["bob"].signer.address]["state"] == "closed"


def test_one_merged_pr_settles_one_bounty_and_the_other_submission_is_rejected(w: MemoryWorld) -> None:
    first, first_task = _bounty(w, 1)
    second, second_task = _bounty(w, 2)
    work.accept_task(w["bob"], first_task)
    work.accept_task(w["bob"], second_task)
    pr = w["bob"].forge.open_pr(REPO, "bob:feat/x", "main", "x", "")
    work.submit_pr(w["bob"], first, pr.url)
    w.ledger.submit_pr(w["bob"].signer, second, pr.url, pr.head_sha)  # what the tool refuses, a key records
    w["bob"].forge.merge_pr(pr.url)
    assert _verdicts(w, first)[w["bob"].signer.address].action == "merge"
    assert _verdicts(w, second)[w["bob"].signer.address].reason is Rejection.SETTLED_ELSEWHERE


@pytest.mark.parametrize("tamper", ["edited", "another_author", "another_id", "bad_signature", "another_key"])
def test_a_statement_that_does_not_prove_the_link_is_not_recorded(w: MemoryWorld, tamper: str) -> None:
    bob = w["bob"]
    _, task = _bounty(w)
    number = int(task.rsplit("#", 1)[1])
    mine = statement(bob)
    if tamper == "another_id":
        mine = replace(mine, forge_user_id=mine.forge_user_id + 1)
    elif tamper == "bad_signature":
        mine = replace(mine, signature="00" * 64)
    elif tamper == "another_key":  # carol signs a statement naming bob's account
        carol = w["carol"].signer
        mine = replace(mine, public_key=public_key_of(carol.private_key_hex).hex(),
                       signature=sign(carol, link_message(mine.forge_user_id, mine.account)).hex())
    writer = w["carol"] if tamper == "another_author" else bob
    comment_id = writer.forge.create_comment(REPO, number, comment_text(mine))
    if tamper == "edited":  # on GitHub anyone with push access may edit a comment
        writer.forge.edit_comment(REPO, comment_id, comment_text(mine) + "\n")
    found = resolver.published_statement(w["alice"], bob.forge.actor_id, [(REPO, number)])
    if tamper == "another_key":  # the signature holds for carol's key: only the chain's key check refuses it
        assert found is not None
        receipt = w.ledger.link_account(w["alice"].signer, found.forge_user_id, "bob", found.account,
                                        bytes.fromhex(found.public_key), bytes.fromhex(found.signature))
        assert not receipt.success and w.ledger.linked_account(w["alice"].signer.address, found.forge_user_id) is None
    else:
        assert found is None


def test_a_statement_survives_its_text_round_trip() -> None:
    made = LinkStatement(login="octo-cat", forge_user_id=583231, account="0x" + "ab" * 32, public_key="cd" * 32,
                         signature="ef" * 64)
    assert find_statement(f"some words\n\n```\n{made.text()}\n```\n") == made
    assert find_statement(made.text().replace("v1", "v2")) is None


def _link(w: MemoryWorld, name: str, repo: str, number: int, record: bool = True) -> None:
    """`name` posts their statement on repo#number; with `record`, the resolver records it at once."""
    mine = statement(w[name])
    w[name].forge.create_comment(repo, number, comment_text(mine))
    if record:
        resolver.link(w["alice"], mine, w[name].forge.actor)
