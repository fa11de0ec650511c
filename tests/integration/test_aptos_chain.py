"""The Aptos adapter (aptos-sdk, end to end) against the loopback fullnode stand-in.

Every entry function and view, events with their chain coordinates, every Move abort mapped to its
error code, and the failures a real node produces: 5xx, a committed transaction whose answer is lost,
a sequence number taken by another process, a spent retry budget. And no private key anywhere.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from adapters.aptos import AptosChain, aptos_policy
from adapters.keystore import Keystore, address_of
from adapters.ports import Receipt, Signer
from domain.contract import ABORT_CODES, Abort, Mode, Status
from domain.errors import Code, Code3Error
from mcp_tools.lifecycle.chain_record import raise_for
from tests.fakes.aptos_node import MODULE_ADDRESS, USDT_METADATA, AptosNode

ROOT = Path(__file__).resolve().parents[2]
FUNDS = 10_000
SHA = "abc123".ljust(40, "0")


def h(name: str) -> str:
    """An issue hash as the contract takes it (64 lowercase hex digits), named for readability."""
    return hashlib.sha256(name.encode()).hexdigest()


@pytest.fixture
def resolver(tmp_path: Path) -> Signer:
    """The account `initialize` named as the one that reports merges (not the sponsor)."""
    return Keystore(tmp_path / "keys").new("resolver")


@pytest.fixture
def node(tmp_path: Path, resolver: Signer) -> Iterator[AptosNode]:
    n = AptosNode(tmp_path / "node.sqlite", MODULE_ADDRESS, {USDT_METADATA: "USDT"}, cooling_period=100,
                  resolver=resolver.address)
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


def test_the_whole_lifecycle_through_every_entry_function(chain: AptosChain, node: AptosNode, resolver: Signer,
                                                          people: dict[str, Signer]) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    deadline = chain.now() + 3_600
    receipts = [ok(chain.create_bounty(alice, "alice/app", h("hash-1"), "USDT", 400, deadline=deadline))]
    bounty_id = receipts[0].events[0].data["bounty_id"]
    assert receipts[0].events[0].data == {
        "bounty_id": bounty_id, "sponsor": alice.address, "repo": "alice/app", "issue_hash": h("hash-1"),
        "asset": "USDT", "amount": 400, "cooling_period": 100, "created_at": receipts[0].events[0].data["created_at"],
        "deadline": deadline, "mode": 1, "hold_seconds": 0}
    receipts += [ok(chain.accept_bounty(bob, bounty_id)), ok(chain.accept_bounty(carol, bounty_id))]
    receipts.append(ok(chain.withdraw_task(carol, bounty_id)))
    receipts.append(ok(chain.submit_pr(bob, bounty_id, "https://github.com/alice/app/pull/1", SHA)))
    refused = chain.mark_merged(alice, bounty_id, "https://github.com/alice/app/pull/1", bob.address)
    assert refused.abort_code == Abort.NOT_RESOLVER, "the sponsor does not report merges"
    assert chain.mark_merged(resolver, bounty_id, "https://github.com/alice/app/pull/1",
                             carol.address).abort_code == Abort.WRONG_WINNER
    receipts.append(ok(chain.mark_merged(resolver, bounty_id, "https://github.com/alice/app/pull/1", bob.address)))
    early = chain.claim_payout(bob, bounty_id)
    assert not early.success and early.abort_code == Abort.COOLING and early.events == []
    node.advance(101)
    receipts.append(ok(chain.claim_payout(carol, bounty_id)))  # anyone may trigger it: the winner is paid

    types = [e.type for r in receipts for e in r.events]
    assert types == ["BountyCreated", "BountyAccepted", "BountyAccepted", "TaskWithdrawn", "PRSubmitted",
                     "BountyMerged", "CoolingStarted", "BountyPaid"]
    state = chain.get_bounty(bounty_id)
    assert state is not None and state.status is Status.PAID and state.winner == bob.address
    assert state.workers == [bob.address] and state.mode is Mode.CONTEST and state.deadline == deadline
    assert state.submissions == {bob.address: {"pr_url": "https://github.com/alice/app/pull/1", "commit_sha": SHA}}
    assert state.cooling_until == state.merged_at + 100
    assert chain.balance(alice.address, "USDT") == FUNDS - 400 and chain.balance(bob.address, "USDT") == 400
    assert chain.balance(carol.address, "USDT") == 0 and chain.balance(bob.address, "BTC") == 0

    # cancel before merge refunds; a dispute during cooling refunds too, marked as disputed
    second = created(chain, people, "hash-2")
    cancelled = ok(chain.cancel_bounty(alice, second))
    assert cancelled.events[0].data == {"bounty_id": second, "refund_to": alice.address, "amount": 400,
                                        "disputed": False}
    third = created(chain, people, "hash-3")
    ok(chain.accept_bounty(bob, third))
    ok(chain.submit_pr(bob, third, "https://github.com/alice/app/pull/3", "d" * 64))
    ok(chain.mark_merged(resolver, third, "https://github.com/alice/app/pull/3"))  # winner: the submitter
    disputed = ok(chain.cancel_bounty(alice, third))
    assert disputed.events[0].data["disputed"] is True
    assert chain.balance(alice.address, "USDT") == FUNDS - 400
    assert [b.status for b in chain.list_bounties()] == [Status.PAID, Status.CANCELLED, Status.CANCELLED]


def test_an_exclusive_bounty_is_held_by_one_worker_until_the_hold_ends(chain: AptosChain, node: AptosNode,
                                                                      people: dict[str, Signer]) -> None:
    bob, carol = people["bob"], people["carol"]
    bounty_id = created(chain, people, mode="exclusive", hold_seconds=60)
    accepted = ok(chain.accept_bounty(bob, bounty_id))
    assert accepted.events[0].data["hold_until"] == chain.get_bounty(bounty_id).hold_until
    assert chain.accept_bounty(carol, bounty_id).abort_code == Abort.HELD_BY_OTHER
    node.advance(61)
    assert chain.submit_pr(bob, bounty_id, "pr-bob", SHA).abort_code == Abort.HOLD_EXPIRED
    ok(chain.accept_bounty(carol, bounty_id))
    state = chain.get_bounty(bounty_id)
    assert (state.mode, state.holder, state.workers) == (Mode.EXCLUSIVE, carol.address, [carol.address])
    ok(chain.withdraw_task(carol, bounty_id))
    assert chain.get_bounty(bounty_id).status is Status.OPEN


def test_the_registry_is_read_and_changed_by_its_admin_only(chain: AptosChain, resolver: Signer,
                                                            people: dict[str, Signer]) -> None:
    config = chain.config()
    assert (config.admin, config.resolver, config.asset, config.cooling_period) == (
        resolver.address, resolver.address, "USDT", 100)
    assert chain.set_resolver(people["alice"], people["alice"].address).abort_code == Abort.NOT_ADMIN
    assert chain.set_cooling_period(resolver, 0).abort_code == Abort.INVALID_COOLING_PERIOD
    ok(chain.set_cooling_period(resolver, 200))
    ok(chain.set_resolver(resolver, people["carol"].address))
    assert (chain.config().resolver, chain.config().cooling_period) == (people["carol"].address, 200)
    assert chain.get_bounty(created(chain, people)).cooling_period == 200


def test_views_answer_none_for_what_is_not_there(chain: AptosChain, people: dict[str, Signer]) -> None:
    alice, bob = people["alice"], people["bob"]
    assert chain.list_bounties() == [] and chain.bounty_events("1") == [] and chain.events_since(0) == []
    bounty_id = created(chain, people)
    assert chain.get_bounty(bounty_id).issue_hash == h("hash-1")
    assert chain.find_bounty_by_issue_hash(alice.address, h("hash-1")).bounty_id == bounty_id
    assert chain.find_bounty_by_issue_hash(bob.address, h("hash-1")) is None, "issue hashes are keyed by sponsor"
    assert chain.get_bounty("999") is None and chain.get_bounty("not-a-number") is None
    assert chain.find_bounty_by_issue_hash(alice.address, h("hash-404")) is None
    assert abs(chain.now() - int(__import__("time").time())) <= 2


def test_events_carry_their_chain_coordinates(chain: AptosChain, node: AptosNode, people: dict[str, Signer],
                                              resolver: Signer) -> None:
    alice, bob = people["alice"], people["bob"]
    create = ok(chain.create_bounty(alice, "alice/app", h("hash-1"), "USDT", 400))
    bounty_id = create.events[0].data["bounty_id"]
    # the escrow transfer's framework events come first: the index is the position among all events
    assert create.events[0].index == 2
    tx = node.transaction(create.tx_hash)
    assert tx["events"][2]["type"].endswith("::bounty::BountyCreated") and tx["version"] == str(create.version)
    accept = ok(chain.accept_bounty(bob, bounty_id))
    ok(chain.submit_pr(bob, bounty_id, "pr-1", SHA))
    merge = ok(chain.mark_merged(resolver, bounty_id, "pr-1"))
    assert [(e.type, e.index) for e in merge.events] == [("BountyMerged", 0), ("CoolingStarted", 1)]

    history = chain.bounty_events(bounty_id)
    assert [e.type for e in history] == ["BountyCreated", "BountyAccepted", "PRSubmitted", "BountyMerged",
                                         "CoolingStarted"]
    assert history[0] == create.events[0] and history[1] == accept.events[0] and history[3:] == merge.events
    assert len({e.key for e in history}) == len(history)
    assert chain.events_since(0) == history and chain.events_since(accept.version) == history[2:]
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
        assert node.count("GET", "/accounts/") <= 9 * 2 * 8, "logarithmic probes per handle, not every page"

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
    with pytest.raises(Code3Error) as caught:
        chain.accept_bounty(bob, "seven")
    assert caught.value.code is Code.NOT_FOUND
    with pytest.raises(Code3Error) as caught:
        chain.create_bounty(alice, "alice/app", h("hash-4"), "USDT", 2**64)
    assert caught.value.code is Code.VALIDATION


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
    for wrong in (Signer("alice", alice.address, bob.private_key_hex), Signer("alice", alice.address, "zz")):
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
    worker = Signer("zero", address, key.private_bytes_raw().hex())
    bounty_id = created(chain, people)
    accepted = ok(chain.accept_bounty(worker, bounty_id))
    assert node.transaction(accepted.tx_hash)["sender"] != address, "the node prints it short"
    assert accepted.events[0].data["worker"] == address and chain.get_bounty(bounty_id).workers == [address]


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
        seen.append(repr(chain.mark_merged(people["carol"], bounty_id, "pr")))
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
