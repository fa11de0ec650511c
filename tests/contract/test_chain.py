"""The Chain port's contract: every entry function and view of the v2 bounty contract, on every implementation, with
the same observable result.

Each journey below runs on the embedded ledger (`LocalLedger`) and on the Aptos adapter (`AptosChain`, against the
fullnode stand-in tests/fakes/aptos_node.py), from the same keys, on a clock frozen at the same instant and moved by
the same steps. Both runs record what a client observes (whether each transaction succeeded, its abort code, its
events' types and data; every view's answer) and the two records must be equal; each step also says what it must
do (succeed, or abort with a given code), so a journey cannot pass by failing the same way on both. The rules
themselves are tests/unit/test_contract.py's; what differs by design (the escrow's address, event coordinates,
the wording of a VM status, the network's name) is left out of the record.
"""

from __future__ import annotations

import dataclasses
import hashlib
import types
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters import ledger_tables
from adapters.keystore import Keystore, public_key_of, sign
from adapters.local_ledger import LocalLedger
from adapters.ports import Chain, Receipt, Signer
from domain.bounties.contract import Abort, Rejection
from domain.bounties.links import link_message
from domain.errors import Code, Code3Error
from tests.contract.registry import covers

T0 = 1_800_000_000  # the frozen clock's start (unix seconds); only `advance` moves it
COOLING, DISPUTE = 100, 150
REPO, REPO_ID = "alice/app", 7
FORGE_IDS = {"bob": 11, "carol": 12, "dave": 13}
SHA = "ab12" * 10
FUNDS = {"alice": 5_000, "carol": 1_000, "dave": 1_000}
PEOPLE = ("alice", "bob", "carol", "dave", "resolver")  # alice is also the registry's admin


def h(name: str) -> str:
    """An issue hash as the contract takes it (64 lowercase hex digits), named for readability."""
    return hashlib.sha256(name.encode()).hexdigest()


def pr(number: int) -> str:
    return f"https://github.com/{REPO}/pull/{number}"


@dataclass
class Ledger:
    """An implementation of the port with what a test does beside it: mint, move the clock."""

    chain: Any
    mint: Callable[[str, int], Any]
    advance: Callable[[int], Any]
    network: str


def local(tmp_path: Path, resolver: str, admin: str) -> Iterator[Ledger]:
    ledger = LocalLedger(tmp_path / "ledger.sqlite", cooling_period=COOLING, resolver=resolver, admin=admin,
                         dispute_period=DISPUTE)
    yield Ledger(ledger, lambda address, amount: ledger.mint(address, "USDT", amount), ledger.advance, "local")
    ledger.close()


def aptos(tmp_path: Path, resolver: str, admin: str) -> Iterator[Ledger]:
    from adapters.aptos import AptosChain
    from tests.fakes.aptos_node import MODULE_ADDRESS, USDT_METADATA, AptosNode

    node = AptosNode(tmp_path / "aptos-node.sqlite", MODULE_ADDRESS, {USDT_METADATA: "USDT"}, cooling_period=COOLING,
                     resolver=resolver, admin=admin, dispute_period=DISPUTE)
    chain = AptosChain(node.url, MODULE_ADDRESS, network="testnet", asset_metadata=USDT_METADATA,
                       sleep=lambda _s: None)
    yield Ledger(chain, node.mint, node.advance, "testnet")
    chain.close()
    assert node.errors == [], node.errors
    node.close()


IMPLEMENTATIONS: dict[str, Callable[[Path, str, str], Iterator[Ledger]]] = {"local": local, "aptos": aptos}


class Run:
    """One journey on one implementation: the steps' checks and the record of what a client observed."""

    def __init__(self, name: str, ledger: Ledger, people: dict[str, Signer]) -> None:
        self.name, self.ledger, self.chain, self.people = name, ledger, ledger.chain, people
        self.record: list[tuple[Any, ...]] = []

    def tx(self, label: str, receipt: Receipt, abort: Abort | None = None) -> Receipt:
        where = f"{self.name}: {label}: {receipt.vm_status}"
        if abort is None:
            assert receipt.success and receipt.abort_code is None, where
        else:
            assert not receipt.success and receipt.abort_code == abort and receipt.events == [], where
        self.record.append((label, receipt.success, receipt.abort_code, events(receipt.events)))
        return receipt

    def view(self, label: str, value: Any) -> Any:
        self.record.append((label, value))
        return value

    def refused(self, label: str, call: Callable[[], Any]) -> None:
        """Refused before anything is signed (a value the entry function's Move type cannot carry)."""
        with pytest.raises(Code3Error) as caught:
            call()
        assert caught.value.code is Code.VALIDATION, f"{self.name}: {label}: {caught.value}"
        self.record.append((label, "refused", caught.value.code.value))

    def link(self, who: str) -> Receipt:
        """The worker's statement, signed by its own key, recorded by the resolver (who read it on the forge)."""
        worker, forge_id = self.people[who], FORGE_IDS[who]
        proof = sign(worker, link_message(forge_id, worker.address))
        return self.tx(f"link {who}", self.chain.link_account(self.people["resolver"], forge_id, who, worker.address,
                                                              public_key_of(worker.private_key_hex), proof))

    def advance(self, seconds: int) -> None:
        self.ledger.advance(seconds)
        self.view(f"clock after {seconds} s more", self.chain.now() - T0)

    def snapshot(self, since: Receipt) -> None:
        """Every view of the whole ledger, as a client reads it."""
        c, p = self.chain, self.people
        config = dataclasses.asdict(c.config())
        config.pop("escrow")  # the contract's own account: its address is the chain's
        self.view("config", config)
        self.view("now", c.now() - T0)
        ids = self.view("bounty ids", c.list_bounty_ids(1, 100))
        self.view("bounty ids, a page", (c.list_bounty_ids(2, 1), c.list_bounty_ids(len(ids) + 1, 100)))
        self.view("bounties", [b.to_dict() for b in c.list_bounties()])
        for bounty_id in ids:
            bounty = c.get_bounty(bounty_id)
            self.view(f"bounty {bounty_id}", bounty.to_dict())
            self.view(f"bounty {bounty_id} by its issue hash",
                      c.find_bounty_by_issue_hash(bounty.sponsor, bounty.issue_hash).bounty_id)
            self.view(f"bounty {bounty_id} events", events(c.bounty_events(bounty_id)))
            self.view(f"bounty {bounty_id} per person", {
                name: (c.contribution(bounty_id, s.address), c.is_entrant(bounty_id, s.address))
                for name, s in p.items()})
            if bounty.merged_pr_number is not None:
                self.view(f"bounty {bounty_id} settles", c.settled_by(bounty.repo_id, bounty.merged_pr_number))
        # not the escrow's: the Aptos stand-in books escrowed funds under the embedded ledger's own escrow account,
        # so the escrow address its config names shows no balance there
        self.view("balances", {name: c.balance(s.address, "USDT") for name, s in p.items()})
        resolver = config["resolver"]
        self.view("links", {name: (c.linked_account(resolver, forge_id), c.linked_forge_id(resolver, p[name].address))
                            for name, forge_id in FORGE_IDS.items()})
        self.view("nonces", {(name, n): c.nonce_used(s.address, n) for name, s in p.items() for n in (1, 2, 7)})
        self.view("every event", events(c.events_since(0)))
        self.view("events after a transaction", events(c.events_since(since.version)))
        self.view("events after a transaction, a page", [e[0] for e in events(c.events_since(since.version, 1))])


def events(found: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    """What an event says (its coordinates are the chain's own: versions and indexes differ between chains)."""
    return [(e.type, e.data) for e in found]


@pytest.fixture
def people(tmp_path: Path) -> dict[str, Signer]:
    keys = Keystore(tmp_path / "keys")
    return {name: keys.new(name) for name in PEOPLE}


@pytest.fixture
def same(tmp_path: Path, people: dict[str, Signer], monkeypatch: pytest.MonkeyPatch
         ) -> Iterator[Callable[[Callable[[Run], None]], None]]:
    """Runs a journey on every implementation and checks that a client observed the same on each."""
    # both ledgers' clocks (the Aptos stand-in executes on a LocalLedger too) start at T0 and move by `advance` only
    monkeypatch.setattr(ledger_tables, "time", types.SimpleNamespace(time=lambda: T0))
    with ExitStack() as stack:
        ledgers = {}
        for name, factory in IMPLEMENTATIONS.items():
            found = factory(tmp_path / name, people["resolver"].address, people["alice"].address)
            ledgers[name] = next(found)
            stack.callback(next, found, None)

        def run(journey: Callable[[Run], None]) -> None:
            records = {}
            for name, ledger in ledgers.items():
                for who, amount in FUNDS.items():
                    ledger.mint(people[who].address, amount)
                journey(done := Run(name, ledger, people))
                records[name] = done.record
            reference, *others = records
            for other in others:
                assert records[other] == records[reference], f"{other} differs from {reference}"

        yield run


@covers(Chain, "create_bounty", "fund_bounty", "accept_bounty", "withdraw_task", "submit_pr", "mark_merged",
        "set_split", "claim_payout", "tip", "link_account", "config", "now", "list_bounty_ids", "list_bounties",
        "get_bounty", "find_bounty_by_issue_hash", "bounty_events", "contribution", "is_entrant", "settled_by",
        "balance", "linked_account", "linked_forge_id", "nonce_used", "events_since")
def test_a_bounty_funded_by_two_merged_split_and_paid_then_a_tip(same: Callable[..., None]) -> None:
    def journey(r: Run) -> None:
        c, p = r.chain, r.people
        alice, bob, carol, resolver = p["alice"], p["bob"], p["carol"], p["resolver"]
        r.link("bob")
        r.link("dave")
        r.tx("create", c.create_bounty(alice, REPO, h("one"), "USDT", 400, repo_id=REPO_ID))
        r.tx("create with the hash again", c.create_bounty(alice, REPO, h("one"), "USDT", 1), Abort.ISSUE_HASH_EXISTS)
        r.tx("fund", c.fund_bounty(carol, "1", 100, 1))
        r.tx("fund with the nonce again", c.fund_bounty(carol, "1", 100, 1), Abort.NONCE_USED)
        r.tx("fund beyond the balance", c.fund_bounty(carol, "1", 10_000, 2), Abort.INSUFFICIENT_BALANCE)
        r.tx("the sponsor accepts", c.accept_bounty(alice, "1"), Abort.SPONSOR_CANNOT_ACCEPT)
        r.tx("accept", c.accept_bounty(bob, "1"))
        r.tx("accept", c.accept_bounty(carol, "1"))
        r.tx("withdraw", c.withdraw_task(carol, "1"))
        r.tx("withdraw again", c.withdraw_task(carol, "1"), Abort.NOT_ACCEPTED)
        r.tx("submit without accepting", c.submit_pr(carol, "1", pr(2), SHA), Abort.NOT_ACCEPTED)
        submitted = r.tx("submit", c.submit_pr(bob, "1", pr(1), SHA))
        r.tx("merge reported by another", c.mark_merged(alice, "1", pr(1), 11, REPO_ID, 1), Abort.NOT_RESOLVER)
        r.tx("merge in another repository", c.mark_merged(resolver, "1", pr(1), 11, 8, 1), Abort.WRONG_REPO)
        r.tx("merge by an unlinked author", c.mark_merged(resolver, "1", pr(1), 12, REPO_ID, 1), Abort.NOT_LINKED)
        r.tx("merge", c.mark_merged(resolver, "1", pr(1), 11, REPO_ID, 1))
        r.tx("split by another", c.set_split(carol, "1", [bob.address], [1]), Abort.NOT_WINNER)
        r.tx("split to an unlinked account", c.set_split(bob, "1", [bob.address, carol.address], [3, 1]),
             Abort.NOT_LINKED)
        r.tx("split", c.set_split(bob, "1", [bob.address, p["dave"].address], [3, 1]))
        r.tx("payout while cooling", c.claim_payout(carol, "1"), Abort.COOLING)
        r.advance(COOLING)
        r.tx("payout, triggered by anyone", c.claim_payout(carol, "1"))
        r.tx("payout again", c.claim_payout(carol, "1"), Abort.INVALID_STATE)
        r.tx("tip", c.tip(alice, "1", bob.address, 50, 7))
        r.tx("tip with the nonce again", c.tip(alice, "1", bob.address, 50, 7), Abort.NONCE_USED)
        r.tx("tip to an unlinked account", c.tip(alice, "1", carol.address, 50, 8), Abort.NOT_LINKED)
        r.tx("tip of nothing", c.tip(alice, "1", bob.address, 0, 9), Abort.INVALID_AMOUNT)
        r.snapshot(since=submitted)

    same(journey)


@covers(Chain, "accept_for", "withdraw_for", "submit_pr_for", "dispute_for", "set_split_for", "rule")
def test_the_resolver_acts_for_linked_accounts(same: Callable[..., None]) -> None:
    def journey(r: Run) -> None:
        c, p = r.chain, r.people
        alice, resolver = p["alice"], p["resolver"]
        r.link("bob")
        r.link("carol")
        r.tx("create", c.create_bounty(alice, REPO, h("one"), "USDT", 400, repo_id=REPO_ID))
        r.tx("create", c.create_bounty(alice, REPO, h("two"), "USDT", 300, repo_id=REPO_ID))
        r.tx("accept for an unlinked account", c.accept_for(resolver, "1", 99), Abort.NOT_LINKED)
        r.tx("accept for, by another", c.accept_for(alice, "1", 11), Abort.NOT_RESOLVER)
        r.tx("accept for bob", c.accept_for(resolver, "1", 11))
        r.tx("withdraw for bob", c.withdraw_for(resolver, "1", 11))
        r.tx("withdraw for bob again", c.withdraw_for(resolver, "1", 11), Abort.INVALID_STATE)
        r.tx("accept for bob", c.accept_for(resolver, "1", 11))
        r.tx("accept for carol", c.accept_for(resolver, "1", 12))
        submitted = r.tx("submit for bob", c.submit_pr_for(resolver, "1", 11, pr(1), SHA))
        r.tx("dispute for carol, who submitted nothing", c.dispute_for(resolver, "1", 12, "stalled"),
             Abort.PR_NOT_SUBMITTED)
        r.tx("dispute for bob", c.dispute_for(resolver, "1", 11, "the sponsor stalls"))
        r.tx("rule, by another", c.rule(alice, "1", 6_000), Abort.NOT_RESOLVER)
        r.tx("rule 60 % to bob", c.rule(resolver, "1", 6_000))
        r.tx("accept for carol", c.accept_for(resolver, "2", 12))
        r.tx("submit for carol", c.submit_pr_for(resolver, "2", 12, pr(2), SHA))
        r.tx("merge", c.mark_merged(resolver, "2", pr(2), 12, REPO_ID, 2))
        r.tx("split for bob, who did not win", c.set_split_for(resolver, "2", 11, [p["bob"].address], [1]),
             Abort.NOT_WINNER)
        r.tx("split for carol", c.set_split_for(resolver, "2", 12, [p["carol"].address, p["bob"].address], [1, 1]))
        r.advance(COOLING)
        r.tx("payout", c.claim_payout(p["dave"], "2"))
        r.snapshot(since=submitted)

    same(journey)


@covers(Chain, "cancel_bounty", "withdraw_refund", "dispute", "reject_submission", "rule")
def test_refunds_rejections_disputes_and_rulings(same: Callable[..., None]) -> None:
    def journey(r: Run) -> None:
        c, p = r.chain, r.people
        alice, bob, carol, dave, resolver = (p[n] for n in PEOPLE)
        r.tx("create", c.create_bounty(alice, REPO, h("one"), "USDT", 400, repo_id=REPO_ID))
        r.tx("fund", c.fund_bounty(carol, "1", 100, 1))
        r.tx("fund", c.fund_bounty(dave, "1", 50, 1))
        r.tx("cancel by another", c.cancel_bounty(carol, "1"), Abort.NOT_SPONSOR)
        r.tx("withdraw a refund before any", c.withdraw_refund(carol, "1"), Abort.NO_REFUND)
        r.tx("cancel", c.cancel_bounty(alice, "1"))
        r.tx("withdraw a refund", c.withdraw_refund(carol, "1"))
        r.tx("withdraw it again", c.withdraw_refund(carol, "1"), Abort.NO_REFUND)
        r.tx("withdraw a refund, never funded", c.withdraw_refund(bob, "1"), Abort.NO_REFUND)
        r.tx("withdraw the last refund", c.withdraw_refund(dave, "1"))

        r.tx("create", c.create_bounty(alice, REPO, h("two"), "USDT", 400, repo_id=REPO_ID))
        r.tx("accept", c.accept_bounty(bob, "2"))
        r.tx("submit", c.submit_pr(bob, "2", pr(1), SHA))
        r.tx("reject, by another", c.reject_submission(alice, "2", bob.address, Rejection.NOT_IN_REPO),
             Abort.NOT_RESOLVER)
        r.tx("reject as junk", c.reject_submission(resolver, "2", bob.address, Rejection.NOT_IN_REPO))
        r.tx("reject what is gone", c.reject_submission(resolver, "2", bob.address, Rejection.CLOSED),
             Abort.PR_NOT_SUBMITTED)
        r.tx("accept", c.accept_bounty(carol, "2"))
        submitted = r.tx("submit", c.submit_pr(carol, "2", pr(2), SHA))
        r.tx("reject as closed unmerged", c.reject_submission(resolver, "2", carol.address, Rejection.CLOSED))
        r.tx("cancel right after", c.cancel_bounty(alice, "2"), Abort.CLOSED_RECENTLY)
        r.tx("dispute without a reason", c.dispute(carol, "2", ""), Abort.INVALID_REASON)
        r.tx("dispute the closing", c.dispute(carol, "2", "closed without a look"))
        r.tx("dispute twice", c.dispute(carol, "2", "again"), Abort.DISPUTED)
        r.tx("rule a full refund", c.rule(resolver, "2", 0))

        r.tx("create", c.create_bounty(alice, REPO, h("three"), "USDT", 400, repo_id=REPO_ID))
        r.link("bob")
        r.tx("accept", c.accept_bounty(bob, "3"))
        r.tx("submit", c.submit_pr(bob, "3", pr(3), SHA))
        r.tx("merge", c.mark_merged(resolver, "3", pr(3), 11, REPO_ID, 3))
        r.tx("merge it again elsewhere", c.mark_merged(resolver, "3", pr(3), 11, REPO_ID, 3), Abort.INVALID_STATE)
        r.tx("dispute by the winner", c.dispute(bob, "3", "why not"), Abort.NOT_SPONSOR)
        r.tx("rule without a dispute", c.rule(resolver, "3", 5_000), Abort.NO_DISPUTE)
        r.tx("dispute the merge", c.dispute(alice, "3", "not what the spec asked"))
        r.tx("payout while disputed", c.claim_payout(carol, "3"), Abort.COOLING)
        r.tx("rule past 100 %", c.rule(resolver, "3", 10_001), Abort.INVALID_SHARE)
        r.tx("rule 25 % to the winner", c.rule(resolver, "3", 2_500))
        r.tx("payout after the ruling", c.claim_payout(carol, "3"), Abort.INVALID_STATE)
        r.snapshot(since=submitted)

    same(journey)


@covers(Chain, "set_resolver", "set_cooling_period", "set_dispute_period", "config", "create_bounty")
def test_the_registry_is_changed_by_its_admin_for_new_bounties_only(same: Callable[..., None]) -> None:
    def journey(r: Run) -> None:
        c, p = r.chain, r.people
        alice, bob, carol = p["alice"], p["bob"], p["carol"]
        r.view("config", {k: v for k, v in dataclasses.asdict(c.config()).items() if k != "escrow"})
        r.tx("create", c.create_bounty(alice, REPO, h("one"), "USDT", 400, repo_id=REPO_ID))
        r.tx("resolver set by another", c.set_resolver(bob, bob.address), Abort.NOT_ADMIN)
        r.tx("cooling set by another", c.set_cooling_period(bob, 200), Abort.NOT_ADMIN)
        r.tx("dispute period set by another", c.set_dispute_period(bob, 300), Abort.NOT_ADMIN)
        r.tx("no cooling", c.set_cooling_period(alice, 0), Abort.INVALID_COOLING_PERIOD)
        r.tx("no dispute period", c.set_dispute_period(alice, 0), Abort.INVALID_DISPUTE_PERIOD)
        r.tx("cooling", c.set_cooling_period(alice, 200))
        r.tx("dispute period", c.set_dispute_period(alice, 300))
        r.tx("resolver", c.set_resolver(alice, carol.address))
        r.view("config", {k: v for k, v in dataclasses.asdict(c.config()).items() if k != "escrow"})
        r.tx("create", c.create_bounty(alice, REPO, h("two"), "USDT", 400, deadline=T0 + 7 * 86_400,
                                       mode="exclusive", hold_seconds=60, repo_id=REPO_ID))
        r.tx("the old resolver on the new bounty", c.reject_submission(p["resolver"], "2", bob.address,
                                                                       Rejection.CLOSED), Abort.NOT_RESOLVER)
        r.tx("the new resolver on the old bounty", c.reject_submission(carol, "1", bob.address, Rejection.CLOSED),
             Abort.NOT_RESOLVER)
        r.snapshot(since=c.accept_bounty(bob, "1"))

    same(journey)


@covers(Chain, "create_bounty", "accept_bounty", "submit_pr", "withdraw_task")
def test_an_exclusive_bounty_is_held_by_one_worker_until_the_hold_expires(same: Callable[..., None]) -> None:
    def journey(r: Run) -> None:
        c, p = r.chain, r.people
        alice, bob, carol = p["alice"], p["bob"], p["carol"]
        r.tx("a contest with a hold", c.create_bounty(alice, REPO, h("x"), "USDT", 10, mode="contest", hold_seconds=60),
             Abort.INVALID_HOLD)
        r.tx("a deadline passed", c.create_bounty(alice, REPO, h("x"), "USDT", 10, deadline=T0), Abort.INVALID_DEADLINE)
        r.tx("a deadline beyond a year", c.create_bounty(alice, REPO, h("x"), "USDT", 10, deadline=T0 + 400 * 86_400),
             Abort.INVALID_DEADLINE)
        r.tx("no repository", c.create_bounty(alice, "", h("x"), "USDT", 10), Abort.INVALID_REPO)
        r.tx("not a hash", c.create_bounty(alice, REPO, "XYZ", "USDT", 10), Abort.INVALID_ISSUE_HASH)
        r.tx("nothing", c.create_bounty(alice, REPO, h("x"), "USDT", 0), Abort.INVALID_AMOUNT)
        r.tx("exclusive", c.create_bounty(alice, REPO, h("one"), "USDT", 400, mode="exclusive", hold_seconds=60,
                                          repo_id=REPO_ID))
        r.tx("hold", c.accept_bounty(bob, "1"))
        r.tx("held by another", c.accept_bounty(carol, "1"), Abort.HELD_BY_OTHER)
        r.advance(61)
        r.tx("submit after the hold", c.submit_pr(bob, "1", pr(1), SHA), Abort.HOLD_EXPIRED)
        r.tx("not a commit", c.submit_pr(bob, "1", pr(1), "xyz"), Abort.INVALID_COMMIT_SHA)
        r.tx("hold, once expired", c.accept_bounty(carol, "1"))
        r.tx("give it back", c.withdraw_task(carol, "1"))
        r.tx("hold again", c.accept_bounty(bob, "1"))
        submitted = r.tx("submit", c.submit_pr(bob, "1", pr(1), SHA))
        r.tx("a second PR", c.submit_pr(bob, "1", pr(2), SHA), Abort.PR_ALREADY_SUBMITTED)
        r.tx("the same PR again", c.submit_pr(bob, "1", pr(1), SHA))
        r.tx("withdraw with a live PR", c.withdraw_task(bob, "1"), Abort.INVALID_STATE)
        r.snapshot(since=submitted)

    same(journey)


@covers(Chain, "create_bounty", "fund_bounty", "tip", "rule", "set_cooling_period", "accept_for", "mark_merged")
def test_what_no_transaction_can_carry_is_refused_before_signing(same: Callable[..., None]) -> None:
    def journey(r: Run) -> None:
        c, p = r.chain, r.people
        alice, resolver = p["alice"], p["resolver"]
        r.tx("create", c.create_bounty(alice, REPO, h("one"), "USDT", 400, repo_id=REPO_ID))
        r.refused("an amount past u64", lambda: c.create_bounty(alice, REPO, h("two"), "USDT", 2**64))
        r.refused("an unknown mode", lambda: c.create_bounty(alice, REPO, h("two"), "USDT", 1, mode="sometimes"))
        r.refused("a negative funding", lambda: c.fund_bounty(alice, "1", -1, 1))
        r.refused("a nonce past u64", lambda: c.fund_bounty(alice, "1", 1, 2**64))
        r.refused("a tip past u64", lambda: c.tip(alice, "1", alice.address, 2**64, 1))
        r.refused("a negative share", lambda: c.rule(resolver, "1", -5))
        r.refused("a negative period", lambda: c.set_cooling_period(alice, -1))
        r.refused("a forge id past u64", lambda: c.accept_for(resolver, "1", 2**64))
        r.refused("a PR number that is not one", lambda: c.mark_merged(resolver, "1", pr(1), 11, REPO_ID, True))
        r.snapshot(since=c.fund_bounty(alice, "1", 1, 5))

    same(journey)


@covers(Chain, "get_bounty", "find_bounty_by_issue_hash", "list_bounty_ids", "list_bounties", "is_entrant",
        "contribution", "nonce_used", "linked_account", "linked_forge_id", "settled_by", "bounty_events",
        "events_since", "balance", "fund_bounty", "accept_bounty", "cancel_bounty", "claim_payout")
def test_views_answer_nothing_for_what_is_not_there(same: Callable[..., None]) -> None:
    def journey(r: Run) -> None:
        c, p = r.chain, r.people
        alice, bob, resolver = p["alice"], p["bob"], p["resolver"]
        r.view("no bounty", (c.get_bounty("1"), c.list_bounty_ids(1, 100), c.list_bounties(), c.bounty_events("1")))
        r.view("no events", events(c.events_since(0)))
        r.view("no balance", c.balance(bob.address, "USDT"))
        r.tx("fund what is not there", c.fund_bounty(alice, "9", 1, 1), Abort.BOUNTY_NOT_FOUND)
        r.tx("accept what is not there", c.accept_bounty(bob, "9"), Abort.BOUNTY_NOT_FOUND)
        r.tx("cancel what is not there", c.cancel_bounty(alice, "9"), Abort.BOUNTY_NOT_FOUND)
        r.tx("pay what is not there", c.claim_payout(alice, "9"), Abort.BOUNTY_NOT_FOUND)
        created = r.tx("create", c.create_bounty(alice, REPO, h("one"), "USDT", 400, repo_id=REPO_ID))
        r.view("absent", {
            "bounty": c.get_bounty("2"), "another sponsor's hash": c.find_bounty_by_issue_hash(bob.address, h("one")),
            "an unknown hash": c.find_bounty_by_issue_hash(alice.address, h("two")),
            "entrant": c.is_entrant("1", bob.address), "contribution": c.contribution("1", bob.address),
            "nonce": c.nonce_used(bob.address, 1), "linked account": c.linked_account(resolver.address, 11),
            "linked forge id": c.linked_forge_id(resolver.address, bob.address), "settled": c.settled_by(REPO_ID, 1),
            "events": c.bounty_events("2"), "later events": c.events_since(created.version)})
        r.snapshot(since=created)

    same(journey)


@covers(Chain, "network")
@pytest.mark.parametrize("name", sorted(IMPLEMENTATIONS))
def test_the_chain_names_its_network(name: str, tmp_path: Path, people: dict[str, Signer]) -> None:
    found = IMPLEMENTATIONS[name](tmp_path, people["resolver"].address, people["alice"].address)
    ledger = next(found)
    try:
        assert ledger.chain.network == ledger.network and isinstance(ledger.chain.network, str)
    finally:
        next(found, None)
