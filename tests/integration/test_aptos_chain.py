"""The Aptos adapter (aptos-sdk, end to end) against the loopback fullnode stand-in, for the v2 contract.

Every entry function and view, events with their chain coordinates (links included), every Move abort mapped
to its error code, and the failures a real node produces: 5xx, a committed transaction whose answer is lost,
a sequence number taken by another process, a spent retry budget. And no private key anywhere.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from adapters.aptos import AptosChain, aptos_policy
from adapters.keystore import Keystore, address_of, public_key_of, sign
from adapters.ports import Key, Receipt, Signer
from domain.bounties.contract import ABORT_CODES, MAX_PAGE, Abort, Mode, Rejection, Status, SubmissionState
from domain.bounties.links import link_message
from domain.errors import Code, Code3Error
from mcp_tools.lifecycle.chain_record import raise_for
from tests.fakes.aptos_node import MODULE_ADDRESS, USDT_METADATA, AptosNode

ROOT = Path(__file__).resolve().parents[2]
FUNDS = 10_000
SHA = "abc123".ljust(40, "0")
REPO_ID = 42  # the forge's id of alice/app
FORGE_IDS = {"bob": 1001, "carol": 1002}  # the forge accounts of the workers


def h(name: str) -> str:
    """An issue hash as the contract takes it (64 lowercase hex digits), named for readability."""
    return hashlib.sha256(name.encode()).hexdigest()


def pr(number: int) -> str:
    return f"https://github.com/alice/app/pull/{number}"


@pytest.fixture
def resolver(tmp_path: Path) -> Signer:
    """The account `initialize` named as the one that reports merges (not the sponsor)."""
    return Keystore(tmp_path / "keys").new("resolver")


@pytest.fixture
def node(tmp_path: Path, resolver: Signer) -> Iterator[AptosNode]:
    n = AptosNode(tmp_path / "node.sqlite", MODULE_ADDRESS, {USDT_METADATA: "USDT"}, cooling_period=100,
                  resolver=resolver.address, dispute_period=150)
    yield n
    assert n.errors == [], n.errors
    n.close()


@pytest.fixture
def slept() -> list[float]:
    return []


@pytest.fixture
def chain(node: AptosNode, slept: list[float]) -> Iterator[AptosChain]:
    c = AptosChain(node.url, MODULE_ADDRESS, asset_metadata=USDT_METADATA, sleep=slept.append)
    yield c
    c.close()


@pytest.fixture
def people(tmp_path: Path, node: AptosNode) -> dict[str, Signer]:
    keys = Keystore(tmp_path / "keys")
    found = {name: keys.new(name) for name in ("alice", "bob", "carol")}
    node.mint(found["alice"].address, FUNDS)
    return found


def created(chain: AptosChain, people: dict[str, Signer], issue_hash: str = "hash-1", amount: int = 400,
            **terms: Any) -> str:
    receipt = chain.create_bounty(people["alice"], "alice/app", h(issue_hash), "USDT", amount, **terms)
    assert receipt.success, receipt.vm_status
    return str(receipt.events[0].data["bounty_id"])


def ok(receipt: Receipt) -> Receipt:
    assert receipt.success, receipt.vm_status
    return receipt


def link(chain: AptosChain, resolver: Signer, worker: Signer, login: str | None = None) -> Receipt:
    """The resolver records the worker's link, with the statement the worker's own key signed."""
    forge_user_id = FORGE_IDS[worker.name]
    signature = sign(worker, link_message(forge_user_id, worker.address))
    return chain.link_account(resolver, forge_user_id, login or worker.name, worker.address,
                              public_key_of(worker.private_key_hex), signature)


def merged(chain: AptosChain, resolver: Signer, people: dict[str, Signer], issue_hash: str = "hash-1",
           number: int = 1, worker: str = "bob") -> str:
    """A bounty whose PR by `worker` (linked) merged: cooling runs."""
    bounty_id = created(chain, people, issue_hash, repo_id=REPO_ID)
    ok(chain.accept_bounty(people[worker], bounty_id))
    ok(chain.submit_pr(people[worker], bounty_id, pr(number), SHA))
    if chain.linked_account(resolver.address, FORGE_IDS[worker]) is None:
        ok(link(chain, resolver, people[worker]))
    ok(chain.mark_merged(resolver, bounty_id, pr(number), FORGE_IDS[worker], REPO_ID, number))
    return bounty_id


def test_the_whole_lifecycle_through_a_link_and_a_merge_naming_the_author(
        chain: AptosChain, node: AptosNode, resolver: Signer, people: dict[str, Signer]) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    deadline = chain.now() + 3_600
    receipts = [ok(chain.create_bounty(alice, "alice/app", h("hash-1"), "USDT", 400, deadline=deadline,
                                       repo_id=REPO_ID))]
    bounty_id = receipts[0].events[0].data["bounty_id"]
    assert receipts[0].events[0].data == {
        "bounty_id": bounty_id, "sponsor": alice.address, "resolver": resolver.address, "repo": "alice/app",
        "repo_id": REPO_ID, "issue_hash": h("hash-1"), "asset": "USDT", "amount": 400, "cooling_period": 100,
        "dispute_period": 150, "created_at": receipts[0].events[0].data["created_at"], "deadline": deadline,
        "mode": 1, "hold_seconds": 0}
    receipts += [ok(chain.accept_bounty(bob, bounty_id)), ok(chain.accept_bounty(carol, bounty_id))]
    receipts.append(ok(chain.withdraw_task(carol, bounty_id)))
    receipts.append(ok(chain.submit_pr(bob, bounty_id, pr(1), SHA)))
    assert chain.mark_merged(alice, bounty_id, pr(1), 1001, REPO_ID, 1).abort_code == Abort.NOT_RESOLVER, \
        "the sponsor does not report merges"
    assert chain.mark_merged(resolver, bounty_id, pr(1), 1001, REPO_ID, 1).abort_code == Abort.NOT_LINKED

    linked = ok(link(chain, resolver, bob))
    assert [(e.type, e.data) for e in linked.events] == [("AccountLinked", {
        "resolver": resolver.address, "forge_user_id": 1001, "login": "bob", "account": bob.address})]
    assert chain.linked_account(resolver.address, 1001) == bob.address
    assert chain.linked_forge_id(resolver.address, bob.address) == 1001
    ok(link(chain, resolver, carol))
    assert chain.mark_merged(resolver, bounty_id, pr(1), 1001, 7, 1).abort_code == Abort.WRONG_REPO, \
        "a PR of another repository pays nothing"
    assert chain.mark_merged(resolver, bounty_id, pr(1), 1002, REPO_ID, 1).abort_code == Abort.PR_NOT_SUBMITTED, \
        "carol did not write the PR bob submitted"
    merge = ok(chain.mark_merged(resolver, bounty_id, pr(1), 1001, REPO_ID, 1))
    receipts.append(merge)
    assert merge.events[0].data == {"bounty_id": bounty_id, "winner": bob.address, "pr_url": pr(1),
                                    "merged_at": merge.events[0].data["merged_at"], "author_id": 1001,
                                    "repo_id": REPO_ID, "pr_number": 1}
    early = chain.claim_payout(bob, bounty_id)
    assert not early.success and early.abort_code == Abort.COOLING and early.events == []
    node.advance(101)
    receipts.append(ok(chain.claim_payout(carol, bounty_id)))  # anyone may trigger it: the winner is paid

    types = [e.type for r in receipts for e in r.events]
    assert types == ["BountyCreated", "BountyAccepted", "BountyAccepted", "TaskWithdrawn", "PRSubmitted",
                     "BountyMerged", "CoolingStarted", "BountyPaid"]
    assert receipts[-1].events[0].data["recipients"] == [bob.address] and \
        receipts[-1].events[0].data["amounts"] == [400]
    state = chain.get_bounty(bounty_id)
    assert state is not None and state.status is Status.PAID and state.winner == bob.address
    assert state.resolver == resolver.address and state.repo_id == REPO_ID and state.merged_pr_number == 1
    assert state.entrants == 1 and state.mode is Mode.CONTEST and state.deadline == deadline
    assert chain.is_entrant(bounty_id, bob.address) and not chain.is_entrant(bounty_id, carol.address)
    submitted = state.submissions[bob.address]
    assert submitted == {"pr_url": pr(1), "commit_sha": SHA, "submitted_at": submitted["submitted_at"],
                         "state": SubmissionState.LIVE}
    assert state.cooling_until == state.merged_at + 100 and state.dispute is None and state.split is None
    assert chain.balance(alice.address, "USDT") == FUNDS - 400 and chain.balance(bob.address, "USDT") == 400
    assert chain.balance(carol.address, "USDT") == 0 and chain.balance(bob.address, "BTC") == 0
    assert chain.settled_by(REPO_ID, 1) == bounty_id


def test_one_merged_pr_settles_one_bounty(chain: AptosChain, resolver: Signer, people: dict[str, Signer]) -> None:
    first = merged(chain, resolver, people, "hash-1", number=1)
    second = created(chain, people, "hash-2", repo_id=REPO_ID)
    ok(chain.accept_bounty(people["bob"], second))
    ok(chain.submit_pr(people["bob"], second, pr(1), SHA))
    again = chain.mark_merged(resolver, second, pr(1), 1001, REPO_ID, 1)
    assert again.abort_code == Abort.PR_ALREADY_SETTLED and again.events == []
    assert chain.settled_by(REPO_ID, 1) == first and chain.settled_by(REPO_ID, 2) is None
    assert chain.get_bounty(second).status is Status.PR_SUBMITTED


def test_each_funder_withdraws_their_own_share_of_a_refund(chain: AptosChain, node: AptosNode,
                                                           people: dict[str, Signer]) -> None:
    alice, carol = people["alice"], people["carol"]
    node.mint(carol.address, 100)
    bounty_id = created(chain, people)
    funded = ok(chain.fund_bounty(carol, bounty_id, 100, nonce=7))
    assert funded.events[0].data == {"bounty_id": bounty_id, "funder": carol.address, "amount": 100, "pool": 500,
                                     "nonce": 7}
    assert chain.nonce_used(carol.address, 7) and not chain.nonce_used(carol.address, 8)
    assert (chain.contribution(bounty_id, alice.address), chain.contribution(bounty_id, carol.address)) == (400, 100)
    state = chain.get_bounty(bounty_id)
    assert (state.pool, state.funders) == (500, 2)

    cancelled = ok(chain.cancel_bounty(alice, bounty_id))
    assert [(e.type, e.data) for e in cancelled.events] == [
        ("BountyCancelled", {"bounty_id": bounty_id, "refund_to": alice.address, "amount": 500, "disputed": False}),
        ("RefundWithdrawn", {"bounty_id": bounty_id, "funder": alice.address, "amount": 400})]
    assert chain.fund_bounty(carol, bounty_id, 1, nonce=7).abort_code == Abort.NONCE_USED
    assert chain.fund_bounty(carol, bounty_id, 1, nonce=8).abort_code == Abort.INVALID_STATE
    withdrawn = ok(chain.withdraw_refund(carol, bounty_id))
    assert withdrawn.events[0].data == {"bounty_id": bounty_id, "funder": carol.address, "amount": 100}
    assert chain.withdraw_refund(carol, bounty_id).abort_code == Abort.NO_REFUND
    assert chain.withdraw_refund(people["bob"], bounty_id).abort_code == Abort.NO_REFUND
    assert chain.balance(alice.address, "USDT") == FUNDS and chain.balance(carol.address, "USDT") == 100
    assert chain.contribution(bounty_id, carol.address) == 0
    state = chain.get_bounty(bounty_id)
    assert (state.status, state.refund_total, state.refunded, state.funders) == (Status.CANCELLED, 500, 500, 0)


def test_a_dispute_during_cooling_is_ruled_by_the_bounty_s_resolver(
        chain: AptosChain, node: AptosNode, resolver: Signer, people: dict[str, Signer]) -> None:
    alice, bob = people["alice"], people["bob"]
    bounty_id = merged(chain, resolver, people)
    assert chain.cancel_bounty(alice, bounty_id).abort_code == Abort.INVALID_STATE, "after a merge: dispute"
    assert chain.dispute(bob, bounty_id, "why not").abort_code == Abort.NOT_SPONSOR
    assert chain.dispute(alice, bounty_id, "").abort_code == Abort.INVALID_REASON
    opened = ok(chain.dispute(alice, bounty_id, "the PR does not fix the issue"))
    rule_by = opened.events[0].data["rule_by"]
    assert opened.events[0].data == {"bounty_id": bounty_id, "by": alice.address,
                                     "reason": "the PR does not fix the issue", "rule_by": rule_by}
    state = chain.get_bounty(bounty_id)
    assert state.dispute == {"by": alice.address, "reason": "the PR does not fix the issue",
                             "opened_at": state.dispute["opened_at"], "rule_by": rule_by}
    assert rule_by == state.dispute["opened_at"] + 150, "the bounty's dispute period"
    node.advance(101)
    assert chain.claim_payout(bob, bounty_id).abort_code == Abort.DISPUTED, "cooling over, the ruling's time not"
    assert chain.rule(alice, bounty_id, 10_000).abort_code == Abort.NOT_RESOLVER
    assert chain.rule(resolver, bounty_id, 10_001).abort_code == Abort.INVALID_SHARE

    ruled = ok(chain.rule(resolver, bounty_id, 6_000))
    assert [(e.type, e.data) for e in ruled.events] == [
        ("DisputeRuled", {"bounty_id": bounty_id, "claimant": bob.address, "share_bps": 6_000, "paid": 240,
                          "refunded": 160}),
        ("BountyPaid", {"bounty_id": bounty_id, "winner": bob.address, "asset": "USDT", "amount": 240,
                        "paid_at": ruled.events[1].data["paid_at"], "recipients": [bob.address], "amounts": [240]}),
        ("BountyCancelled", {"bounty_id": bounty_id, "refund_to": alice.address, "amount": 160, "disputed": True}),
        ("RefundWithdrawn", {"bounty_id": bounty_id, "funder": alice.address, "amount": 160})]
    assert chain.balance(bob.address, "USDT") == 240 and chain.balance(alice.address, "USDT") == FUNDS - 240
    assert chain.get_bounty(bounty_id).status is Status.PAID
    assert chain.rule(resolver, bounty_id, 0).abort_code == Abort.NO_DISPUTE


def test_the_winner_splits_the_payout_among_linked_accounts(
        chain: AptosChain, node: AptosNode, resolver: Signer, people: dict[str, Signer]) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    bounty_id = merged(chain, resolver, people)
    assert chain.set_split(bob, bounty_id, [bob.address, carol.address], [3, 1]).abort_code == Abort.NOT_LINKED
    ok(link(chain, resolver, carol))
    assert chain.set_split(carol, bounty_id, [carol.address], [1]).abort_code == Abort.NOT_WINNER
    assert chain.set_split(bob, bounty_id, [bob.address, bob.address], [1, 1]).abort_code == Abort.INVALID_SPLIT
    assert chain.set_split(bob, bounty_id, [bob.address, alice.address], [1, 1]).abort_code == Abort.NOT_LINKED
    split = ok(chain.set_split(bob, bounty_id, [bob.address, carol.address], [3, 1]))
    assert split.events[0].data == {"bounty_id": bounty_id, "recipients": [bob.address, carol.address],
                                    "shares": [3, 1]}
    assert chain.get_bounty(bounty_id).split == {"recipients": [bob.address, carol.address], "shares": [3, 1]}
    node.advance(101)
    paid = ok(chain.claim_payout(alice, bounty_id))
    assert paid.events[0].data["recipients"] == [bob.address, carol.address]
    assert paid.events[0].data["amounts"] == [300, 100] and paid.events[0].data["winner"] == bob.address
    assert chain.balance(bob.address, "USDT") == 300 and chain.balance(carol.address, "USDT") == 100


def test_a_tip_is_paid_once_per_nonce_to_a_linked_account(chain: AptosChain, resolver: Signer,
                                                          people: dict[str, Signer]) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    bounty_id = created(chain, people)
    ok(link(chain, resolver, bob))
    tipped = ok(chain.tip(alice, bounty_id, bob.address, 25, nonce=9))
    assert tipped.events[0].data == {"bounty_id": bounty_id, "tipper": alice.address, "to": bob.address,
                                     "asset": "USDT", "amount": 25, "nonce": 9}
    assert chain.tip(alice, bounty_id, bob.address, 25, nonce=9).abort_code == Abort.NONCE_USED, \
        "a re-signed tip cannot pay twice"
    assert chain.tip(alice, bounty_id, carol.address, 25, nonce=10).abort_code == Abort.NOT_LINKED
    assert chain.tip(carol, bounty_id, bob.address, 25, nonce=1).abort_code == Abort.INSUFFICIENT_BALANCE
    assert chain.tip(alice, "77", bob.address, 25, nonce=11).abort_code == Abort.BOUNTY_NOT_FOUND
    assert chain.balance(bob.address, "USDT") == 25 and chain.balance(alice.address, "USDT") == FUNDS - 400 - 25


def test_the_resolver_acts_for_linked_accounts(chain: AptosChain, resolver: Signer,
                                               people: dict[str, Signer]) -> None:
    alice, bob = people["alice"], people["bob"]
    bounty_id = created(chain, people)
    assert chain.accept_for(resolver, bounty_id, 1001).abort_code == Abort.NOT_LINKED
    ok(link(chain, resolver, bob))
    assert chain.accept_for(alice, bounty_id, 1001).abort_code == Abort.NOT_RESOLVER
    assert chain.accept_for(resolver, "77", 1001).abort_code == Abort.BOUNTY_NOT_FOUND
    accepted = ok(chain.accept_for(resolver, bounty_id, 1001))
    assert accepted.events[0].data["worker"] == bob.address and chain.is_entrant(bounty_id, bob.address)
    submitted = ok(chain.submit_pr_for(resolver, bounty_id, 1001, pr(3), "e" * 64))
    assert submitted.events[0].data == {"bounty_id": bounty_id, "worker": bob.address, "pr_url": pr(3),
                                        "commit_sha": "e" * 64}
    assert chain.withdraw_for(resolver, bounty_id, 1001).abort_code == Abort.INVALID_STATE, "a live PR"
    assert chain.reject_submission(alice, bounty_id, bob.address, Rejection.CLOSED).abort_code == Abort.NOT_RESOLVER
    assert chain.reject_submission(resolver, bounty_id, bob.address, 9).abort_code == Abort.INVALID_REASON
    rejected = ok(chain.reject_submission(resolver, bounty_id, bob.address, Rejection.CLOSED))
    assert rejected.events[0].data == {"bounty_id": bounty_id, "worker": bob.address, "pr_url": pr(3),
                                       "reason": int(Rejection.CLOSED)}
    state = chain.get_bounty(bounty_id)
    assert state.status is Status.STARTED and state.submissions[bob.address]["state"] == SubmissionState.CLOSED
    assert state.last_closed_at > 0
    opened = ok(chain.dispute_for(resolver, bounty_id, 1001, "closed without a review"))
    assert opened.events[0].data["by"] == bob.address
    assert chain.cancel_bounty(alice, bounty_id).abort_code == Abort.DISPUTED
    ok(chain.withdraw_for(resolver, bounty_id, 1001))
    assert not chain.is_entrant(bounty_id, bob.address) and chain.get_bounty(bounty_id).status is Status.OPEN


def test_bounties_are_listed_page_by_page(chain: AptosChain, node: AptosNode, people: dict[str, Signer]) -> None:
    """The views return at most MAX_PAGE: list_bounties reads get_bounties pages, a few at once, until a page
    is not full."""
    alice = people["alice"]
    assert chain.list_bounty_ids() == [] and chain.list_bounties() == []
    count = 4 * MAX_PAGE + 50
    for k in range(count):  # on the ledger directly: the node shows what it committed
        assert node.ledger.create_bounty(alice, "alice/app", h(f"page-{k}"), "USDT", 1).success
    assert chain.list_bounty_ids() == [str(i) for i in range(1, MAX_PAGE + 1)]
    assert chain.list_bounty_ids(0, 3) == ["1", "2", "3"] and chain.list_bounty_ids(101, 5) == [
        str(i) for i in range(101, 106)]
    assert chain.list_bounty_ids(count - 5, 1_000) == [str(i) for i in range(count - 5, count + 1)]
    assert chain.list_bounty_ids(count + 1) == [] and chain.list_bounty_ids(2**64 - 1, 2**64 - 1) == []
    node.requests.clear()
    listed = chain.list_bounties()
    assert [b.bounty_id for b in listed] == [str(i) for i in range(1, count + 1)]
    assert listed[7].issue_hash == h("page-7") and listed[7].pool == 1
    assert node.count("POST", "/view") == 8, "two rounds of four pages: the second round's first page ends it"


def test_the_registry_is_read_and_changed_by_its_admin_only(chain: AptosChain, resolver: Signer,
                                                            people: dict[str, Signer]) -> None:
    config = chain.config()
    assert (config.admin, config.resolver, config.asset, config.cooling_period, config.dispute_period) == (
        resolver.address, resolver.address, "USDT", 100, 150)
    assert chain.set_resolver(people["alice"], people["alice"].address).abort_code == Abort.NOT_ADMIN
    assert chain.set_cooling_period(resolver, 0).abort_code == Abort.INVALID_COOLING_PERIOD
    assert chain.set_dispute_period(resolver, 0).abort_code == Abort.INVALID_DISPUTE_PERIOD
    assert chain.set_dispute_period(people["alice"], 60).abort_code == Abort.NOT_ADMIN
    old = created(chain, people, "hash-old")
    ok(chain.set_cooling_period(resolver, 200))
    ok(chain.set_dispute_period(resolver, 60))
    ok(chain.set_resolver(resolver, people["carol"].address))
    assert (chain.config().resolver, chain.config().cooling_period, chain.config().dispute_period) == (
        people["carol"].address, 200, 60)
    new = chain.get_bounty(created(chain, people))
    assert (new.cooling_period, new.dispute_period, new.resolver) == (200, 60, people["carol"].address)
    assert chain.get_bounty(old).resolver == resolver.address, "a bounty keeps the resolver it was created with"


def test_views_answer_none_for_what_is_not_there(chain: AptosChain, people: dict[str, Signer],
                                                 resolver: Signer) -> None:
    alice, bob = people["alice"], people["bob"]
    assert chain.list_bounties() == [] and chain.bounty_events("1") == [] and chain.events_since(0) == []
    bounty_id = created(chain, people)
    assert chain.get_bounty(bounty_id).issue_hash == h("hash-1")
    assert chain.find_bounty_by_issue_hash(alice.address, h("hash-1")).bounty_id == bounty_id
    assert chain.find_bounty_by_issue_hash(bob.address, h("hash-1")) is None, "issue hashes are keyed by sponsor"
    assert chain.get_bounty("999") is None and chain.get_bounty("not-a-number") is None
    assert chain.find_bounty_by_issue_hash(alice.address, h("hash-404")) is None
    assert chain.linked_account(resolver.address, 1001) is None and chain.linked_forge_id(resolver.address,
                                                                                          bob.address) is None
    assert chain.settled_by(REPO_ID, 1) is None and chain.contribution("999", alice.address) == 0
    assert chain.contribution(bounty_id, bob.address) == 0 and not chain.is_entrant(bounty_id, bob.address)
    assert not chain.is_entrant("x", bob.address) and not chain.nonce_used(alice.address, 1)
    assert abs(chain.now() - int(time.time())) <= 2


def test_events_carry_their_chain_coordinates(chain: AptosChain, node: AptosNode, people: dict[str, Signer],
                                              resolver: Signer) -> None:
    alice, bob = people["alice"], people["bob"]
    create = ok(chain.create_bounty(alice, "alice/app", h("hash-1"), "USDT", 400, repo_id=REPO_ID))
    bounty_id = create.events[0].data["bounty_id"]
    # the escrow transfer's framework events come first: the index is the position among all events
    assert create.events[0].index == 2
    tx = node.transaction(create.tx_hash)
    assert tx["events"][2]["type"].endswith("::bounty::BountyCreated") and tx["version"] == str(create.version)
    accept = ok(chain.accept_bounty(bob, bounty_id))
    ok(chain.submit_pr(bob, bounty_id, "pr-1", SHA))
    linked = ok(link(chain, resolver, bob))
    merge = ok(chain.mark_merged(resolver, bounty_id, "pr-1", 1001, REPO_ID, 1))
    assert [(e.type, e.index) for e in merge.events] == [("BountyMerged", 0), ("CoolingStarted", 1)]

    history = chain.bounty_events(bounty_id)
    assert [e.type for e in history] == ["BountyCreated", "BountyAccepted", "PRSubmitted", "BountyMerged",
                                         "CoolingStarted"], "a link names no bounty: it is not in a bounty's history"
    assert history[0] == create.events[0] and history[1] == accept.events[0] and history[3:] == merge.events
    assert len({e.key for e in history}) == len(history)
    everything = chain.events_since(0)
    assert everything == [*history[:3], *linked.events, *history[3:]], "a follower sees the links too"
    assert chain.events_since(accept.version) == [history[2], *linked.events, *history[3:]]
    # a limit never splits a transaction: a follower resuming after the last version misses nothing
    assert chain.events_since(merge.version - 1, limit=1) == merge.events
    other = created(chain, people, "hash-2")
    assert chain.bounty_events(bounty_id) == history and chain.bounty_events(other)[0].data["issue_hash"] == h("hash-2")


def test_a_fresh_client_reads_the_events_after_its_cursor_and_a_bounty_from_its_creation_not_the_whole_chain(
        chain: AptosChain, node: AptosNode, people: dict[str, Signer]) -> None:
    """A process that starts (a worker, a serve) follows the chain from its cursor and syncs the bounties it is
    asked about: it reads handle pages by a logarithmic search and the transactions after the point asked for,
    never every transaction of the chain; and whatever order the questions come in, the answers are whole."""
    bob = people["bob"]
    ids = [created(chain, people, f"old-{k}", amount=10) for k in range(60)]
    for bounty_id in ids[:40]:
        ok(chain.accept_bounty(bob, bounty_id))
    everything = chain.events_since(-1, limit=10_000)
    assert len(everything) == 100
    cursor = everything[-1].version
    late = created(chain, people, "late", amount=10)
    accept = ok(chain.accept_bounty(bob, late))

    fresh = AptosChain(node.url, MODULE_ADDRESS, asset_metadata=USDT_METADATA)
    try:
        node.requests.clear()
        found = fresh.events_since(cursor)
        assert [e.type for e in found] == ["BountyCreated", "BountyAccepted"] and found[1] == accept.events[0]
        assert node.count("GET", "/transactions/by_version/") == 2, "only the transactions after the cursor"
        handles = len(fresh.abi.handle_fields)
        assert node.count("GET", "/accounts/") <= 9 * 2 * handles, "logarithmic probes per handle, not every page"

        node.requests.clear()
        assert [e.type for e in fresh.bounty_events(late)] == ["BountyCreated", "BountyAccepted"]
        assert node.count("GET", "/transactions/by_version/") == 0, "already read"
        history = fresh.bounty_events(ids[1])  # an older bounty: the window grows back to its creation
        assert [e.type for e in history] == ["BountyCreated", "BountyAccepted"] and history == [
            e for e in everything if e.data["bounty_id"] == ids[1]]
        assert fresh.events_since(-1, limit=10_000) == [*everything, *found]  # and back to the beginning
        assert fresh.bounty_events("999") == [] and fresh.bounty_events("x") == []
    finally:
        fresh.close()


@pytest.mark.parametrize("abort", list(Abort), ids=lambda a: a.name)
def test_every_move_abort_maps_to_its_error_code(abort: Abort, chain: AptosChain, node: AptosNode,
                                                 people: dict[str, Signer]) -> None:
    bounty_id = created(chain, people)
    node.abort_next(int(abort))
    receipt = chain.accept_bounty(people["bob"], bounty_id)
    assert not receipt.success and receipt.abort_code == int(abort) and receipt.events == []
    assert f"({int(abort):#x})" in receipt.vm_status
    with pytest.raises(Code3Error) as caught:
        raise_for(receipt)
    # seed 001 sends balance problems to E_CHAIN_TX_FAILED ("重试/检查 Gas/余额/网络"): chain_record maps it so
    expected = Code.CHAIN_TX_FAILED if abort is Abort.INSUFFICIENT_BALANCE else ABORT_CODES[abort][0]
    assert caught.value.code is expected and caught.value.hint
    assert node.count("POST", "/transactions") == 2, "a Move abort is final: never retried"
    assert ok(chain.accept_bounty(people["bob"], bounty_id)).events[0].type == "BountyAccepted", \
        "the forced abort replaced one transaction's body only"


def test_the_rules_abort_with_their_own_codes(chain: AptosChain, people: dict[str, Signer]) -> None:
    alice, bob = people["alice"], people["bob"]
    bounty_id = created(chain, people)
    assert chain.create_bounty(alice, "alice/app", h("hash-1"), "USDT", 1).abort_code == Abort.ISSUE_HASH_EXISTS
    assert chain.create_bounty(alice, "alice/app", h("hash-2"), "USDT", 0).abort_code == Abort.INVALID_AMOUNT
    assert chain.create_bounty(bob, "alice/app", h("hash-3"), "USDT", 5).abort_code == Abort.INSUFFICIENT_BALANCE
    assert chain.accept_bounty(alice, bounty_id).abort_code == Abort.SPONSOR_CANNOT_ACCEPT
    assert chain.accept_bounty(bob, "77").abort_code == Abort.BOUNTY_NOT_FOUND
    assert chain.submit_pr(bob, bounty_id, "pr", SHA).abort_code == Abort.INVALID_STATE
    assert chain.create_bounty(alice, "alice/app", "hash-5", "USDT", 5).abort_code == Abort.INVALID_ISSUE_HASH
    assert chain.create_bounty(alice, "alice/app", h("hash-5"), "USDT", 5, deadline=1).abort_code == \
        Abort.INVALID_DEADLINE
    assert chain.create_bounty(alice, "alice/app", h("hash-5"), "USDT", 5, mode=9).abort_code == Abort.INVALID_MODE
    assert chain.create_bounty(alice, "alice/app", h("hash-5"), "USDT", 5, mode="exclusive").abort_code == \
        Abort.INVALID_HOLD
    assert chain.create_bounty(bob, "alice/app", h("hash-1"), "USDT", 5).abort_code == Abort.INSUFFICIENT_BALANCE, \
        "another sponsor may use the same issue hash (it is keyed by sponsor)"
    assert chain.fund_bounty(bob, bounty_id, 0, nonce=1).abort_code == Abort.INVALID_AMOUNT
    assert chain.fund_bounty(bob, bounty_id, 5, nonce=1).abort_code == Abort.INSUFFICIENT_BALANCE
    with pytest.raises(Code3Error) as caught:
        chain.accept_bounty(bob, "seven")
    assert caught.value.code is Code.NOT_FOUND
    for refused in (lambda: chain.create_bounty(alice, "alice/app", h("hash-4"), "USDT", 2**64),
                    lambda: chain.reject_submission(alice, bounty_id, bob.address, 256),
                    lambda: chain.set_split(bob, bounty_id, [bob.address], [-1]),
                    lambda: chain.tip(alice, bounty_id, "not an address", 1, nonce=1)):
        with pytest.raises(Code3Error) as caught:
            refused()
        assert caught.value.code is Code.VALIDATION


def test_a_link_needs_the_account_s_own_signature(chain: AptosChain, resolver: Signer,
                                                  people: dict[str, Signer]) -> None:
    bob, carol = people["bob"], people["carol"]
    message = link_message(1001, bob.address)
    forged = chain.link_account(resolver, 1001, "bob", bob.address, public_key_of(carol.private_key_hex),
                                sign(carol, message))
    assert forged.abort_code == Abort.INVALID_SIGNATURE, "carol's key does not authenticate bob's address"
    wrong = chain.link_account(resolver, 1001, "bob", bob.address, public_key_of(bob.private_key_hex),
                               sign(bob, link_message(1002, bob.address)))
    assert wrong.abort_code == Abort.INVALID_SIGNATURE, "a statement for another forge account"
    assert chain.link_account(resolver, 0, "bob", bob.address, b"", b"").abort_code == Abort.INVALID_LINK
    assert chain.link_account(resolver, 1001, "", bob.address, b"", b"").abort_code == Abort.INVALID_LINK
    assert chain.link_account(resolver, 1001, "bob", bob.address, b"\0" * 31, b"").abort_code == \
        Abort.INVALID_SIGNATURE
    ok(link(chain, resolver, bob))
    renamed = ok(link(chain, resolver, bob, login="bob-renamed"))
    assert renamed.events[0].data["login"] == "bob-renamed"
    assert chain.linked_account(resolver.address, 1001) == bob.address
    assert chain.linked_account(people["alice"].address, 1001) is None, "links are kept per resolver"


def test_an_abort_in_another_module_is_a_plain_chain_failure(chain: AptosChain, node: AptosNode,
                                                             people: dict[str, Signer]) -> None:
    node.abort_next(0x10004, location="0x1::fungible_asset")
    receipt = chain.create_bounty(people["alice"], "alice/app", h("hash-1"), "USDT", 400)
    assert not receipt.success and receipt.abort_code is None
    with pytest.raises(Code3Error) as caught:
        raise_for(receipt)
    assert caught.value.code is Code.CHAIN_TX_FAILED and "0x1::fungible_asset" in caught.value.message


def test_node_5xx_is_retried_then_the_transaction_commits_once(chain: AptosChain, node: AptosNode,
                                                               people: dict[str, Signer], slept: list[float]) -> None:
    bounty_id = created(chain, people)
    before = len(node.committed)
    node.fail_next(2, 503, "POST", "/transactions")
    receipt = ok(chain.accept_bounty(people["bob"], bounty_id))
    assert node.count("POST", "/transactions") == 1 + 3, "two 503s, then accepted"
    assert node.committed[before:] == [receipt.tx_hash]
    assert slept == [0.5, 1.0], "exponential backoff between attempts"
    # after each 503 the same signed transaction was looked up by hash before being sent again
    assert node.count("GET", f"/transactions/by_hash/{receipt.tx_hash}") == 3


def test_the_wait_the_node_asks_for_is_honoured(chain: AptosChain, node: AptosNode, people: dict[str, Signer],
                                                slept: list[float]) -> None:
    node.fail_next(1, 429, "POST", "/view", retry_after=3)
    node.fail_next(1, 502, "GET", "/accounts/")
    assert chain.find_bounty_by_issue_hash(people["alice"].address, h("nothing")) is None
    created(chain, people)
    assert slept == [3.0, 0.5]


@pytest.mark.parametrize("hang_s", [None, 2.0], ids=["connection-dropped", "read-timeout"])
def test_a_committed_transaction_whose_answer_is_lost_is_recorded_exactly_once(
        node: AptosNode, people: dict[str, Signer], hang_s: float | None) -> None:
    chain = AptosChain(node.url, MODULE_ADDRESS, asset_metadata=USDT_METADATA, sleep=lambda s: None, timeout_s=0.5)
    try:
        bounty_id = created(chain, people)
        before = len(node.committed)
        node.drop_after_commit(1, hang_s=hang_s)
        receipt = ok(chain.accept_bounty(people["bob"], bounty_id))
        assert node.committed[before:] == [receipt.tx_hash], "exactly one transaction committed"
        assert node.count("POST", "/transactions") == 2, "looked up by hash, never sent again"
        committed = node.transaction(receipt.tx_hash)
        assert receipt.version == int(committed["version"]) and [e.type for e in receipt.events] == ["BountyAccepted"]
        assert [e.type for e in chain.bounty_events(bounty_id)] == ["BountyCreated", "BountyAccepted"]
    finally:
        chain.close()


def test_a_pending_transaction_is_waited_for(chain: AptosChain, node: AptosNode, people: dict[str, Signer]) -> None:
    node.pending_lookups = 2
    receipt = ok(chain.create_bounty(people["alice"], "alice/app", h("hash-1"), "USDT", 400))
    assert node.count("GET", f"/transactions/by_hash/{receipt.tx_hash}") == 3


def test_a_sequence_number_race_with_another_process_is_re_signed(node: AptosNode, chain: AptosChain,
                                                                  people: dict[str, Signer]) -> None:
    bob = people["bob"]
    first, second = created(chain, people, "hash-1"), created(chain, people, "hash-2")
    other = AptosChain(node.url, MODULE_ADDRESS, asset_metadata=USDT_METADATA)  # another process, same key
    try:
        raced: list[Receipt] = []
        node.before_next_submit(lambda: raced.append(other.accept_bounty(bob, second)))
        mine = ok(chain.accept_bounty(bob, first))
    finally:
        other.close()
    assert ok(raced[0]).version < mine.version
    assert node.ledger.sequence_number(bob.address) == 2
    assert node.count("POST", "/transactions") == 2 + 3, "ours, theirs, ours re-signed"
    assert [e.type for e in chain.bounty_events(first)] == ["BountyCreated", "BountyAccepted"]


def test_a_spent_budget_answers_chain_tx_failed_with_when_to_retry(node: AptosNode, people: dict[str, Signer]) -> None:
    chain = AptosChain(node.url, MODULE_ADDRESS, asset_metadata=USDT_METADATA, sleep=lambda s: None,
                       policy=aptos_policy(attempts=3))
    try:
        node.fail_next(50, 503)
        with pytest.raises(Code3Error) as caught:
            chain.create_bounty(people["alice"], "alice/app", h("hash-1"), "USDT", 400)
        assert caught.value.code is Code.CHAIN_TX_FAILED and "3 attempt(s)" in caught.value.message
        assert "retry after 20" in caught.value.hint, caught.value.hint
        assert node.committed == [] and len(node.requests) == 3
        with pytest.raises(Code3Error) as caught:
            chain.get_bounty("1")
        assert caught.value.code is Code.CHAIN_TX_FAILED and "retry after" in caught.value.hint
    finally:
        chain.close()


def test_a_spent_budget_with_a_transaction_in_doubt_names_it(node: AptosNode, people: dict[str, Signer]) -> None:
    chain = AptosChain(node.url, MODULE_ADDRESS, asset_metadata=USDT_METADATA, sleep=lambda s: None,
                       policy=aptos_policy(attempts=3))
    try:
        node.drop_after_commit(1)
        node.fail_next(50, 503, "GET", "/transactions/by_hash")
        with pytest.raises(Code3Error) as caught:
            chain.create_bounty(people["alice"], "alice/app", h("hash-1"), "USDT", 400)
        assert caught.value.code is Code.CHAIN_TX_FAILED
        assert f"transaction {node.committed[0]} may still commit" in caught.value.message
        assert node.count("POST", "/transactions") == 1
    finally:
        chain.close()


def test_a_key_that_does_not_own_the_address_is_refused_without_showing_it(chain: AptosChain,
                                                                           people: dict[str, Signer]) -> None:
    alice, bob = people["alice"], people["bob"]
    for wrong in (Key("alice", alice.address, bob.private_key_hex), Key("alice", alice.address, "zz")):
        with pytest.raises(Code3Error) as caught:
            chain.create_bounty(wrong, "alice/app", h("hash-1"), "USDT", 1)
        assert caught.value.code is Code.VALIDATION
        assert wrong.private_key_hex not in f"{caught.value} {caught.value.hint} {caught.value!r}"


def test_addresses_the_node_prints_short_are_read_long(chain: AptosChain, node: AptosNode,
                                                       people: dict[str, Signer]) -> None:
    while True:
        key = Ed25519PrivateKey.generate()
        address = address_of(key.public_key().public_bytes_raw())
        if address.startswith("0x0"):
            break
    worker = Key("zero", address, key.private_bytes_raw().hex())
    bounty_id = created(chain, people)
    accepted = ok(chain.accept_bounty(worker, bounty_id))
    assert node.transaction(accepted.tx_hash)["sender"] != address, "the node prints it short"
    assert accepted.events[0].data["worker"] == address and chain.is_entrant(bounty_id, address)


def test_no_private_key_in_any_log_record_receipt_or_error(node: AptosNode, people: dict[str, Signer],
                                                           caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    chain = AptosChain(node.url, MODULE_ADDRESS, asset_metadata=USDT_METADATA, sleep=lambda s: None,
                       policy=aptos_policy(attempts=4))
    seen: list[str] = [repr(chain)]
    try:
        bounty_id = created(chain, people)
        node.fail_next(1, 500)
        node.drop_after_commit(1)
        seen.append(repr(chain.accept_bounty(people["bob"], bounty_id)))
        node.abort_next(int(Abort.NOT_SPONSOR))
        seen.append(repr(chain.mark_merged(people["carol"], bounty_id, "pr", 1001, REPO_ID, 1)))
        node.fail_next(4, 503)  # every attempt of the claim
        with pytest.raises(Code3Error) as caught:
            chain.claim_payout(people["bob"], bounty_id)
        import traceback

        seen += [str(caught.value), caught.value.hint, "".join(traceback.format_exception(caught.value))]
        seen.append(repr(chain.bounty_events(bounty_id)))
    finally:
        chain.close()
    seen += [f"{r.name} {r.levelname} {r.getMessage()} {r.args!r}" for r in caplog.records]
    seen += node.requests
    assert any(r.levelno == logging.DEBUG for r in caplog.records), "DEBUG logs were captured"
    text = "\n".join(seen)
    for signer in people.values():
        raw = bytes.fromhex(signer.private_key_hex)
        for form in (signer.private_key_hex, signer.private_key_hex.upper(), base64.b64encode(raw).decode(),
                     f"ed25519-priv-0x{signer.private_key_hex}"):
            assert form not in text


def test_aptos_sdk_is_imported_only_when_the_adapter_is_used() -> None:
    code = ("import sys, adapters.aptos, adapters.aptos_events, code3.wiring, mcp_tools.server; "
            "print('aptos_sdk' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
