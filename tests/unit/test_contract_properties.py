"""Random sequences of every entry function on the embedded ledger: money is conserved, the escrow holds
exactly the open bounties, the contract's invariants hold after every transaction, a refusal changes
nothing, and the Bounty mirror built from the chain's events agrees with the chain's state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.keystore import Keystore
from adapters.local_ledger import ESCROW, LocalLedger
from domain import contract
from domain.bounty import Bounty
from domain.contract import MAX_WORKERS, Mode, Status

PEOPLE = ("alice", "bob", "carol", "dave", "resolver")
WORKERS = ("bob", "carol", "dave")
FUNDS = 1_000
LIVE = (Status.OPEN, Status.STARTED, Status.PR_SUBMITTED, Status.COOLING_DOWN)

# Mostly calls that can succeed (so sequences reach merges, payouts and disputes), some that cannot.
who = st.sampled_from(PEOPLE)
worker = st.sampled_from(WORKERS) | who
bounty_no = st.integers(min_value=0, max_value=3)  # an existing bounty, most recent first; 0: one that is not
pr = st.sampled_from(["https://github.com/o/r/pull/1", "https://github.com/o/r/pull/2"]) | st.just("")
sha = st.just("a" * 40) | st.sampled_from(["b" * 64, "c" * 7])
terms = st.sampled_from([("contest", 0), ("exclusive", 60), ("exclusive", 600)]) | st.sampled_from(
    [("contest", 60), ("exclusive", 0)])
operation = st.one_of(
    st.tuples(st.just("create"), st.sampled_from(["alice", "bob"]), st.integers(0, 5), st.integers(1, 100), terms),
    st.tuples(st.just("accept"), worker, bounty_no),
    st.tuples(st.just("withdraw"), worker, bounty_no),
    st.tuples(st.just("submit"), worker, bounty_no, pr, sha),
    st.tuples(st.just("submit"), worker, bounty_no, pr, sha),
    st.tuples(st.just("merge"), st.just("resolver") | who, bounty_no, pr, st.none() | st.sampled_from(WORKERS)),
    st.tuples(st.just("merge"), st.just("resolver"), bounty_no, pr, st.none()),
    st.tuples(st.just("claim"), who, bounty_no),
    st.tuples(st.just("cancel"), st.sampled_from(["alice", "bob"]) | who, bounty_no),
    st.tuples(st.just("advance"), st.sampled_from([1, 59, 60, 601, 3_600])),
)


# Every sequence starts from a contest with a submitted PR and an exclusive bounty held by a worker.
PREFIX = [("create", "alice", 1, 100, ("contest", 0)), ("accept", "bob", 1), ("accept", "carol", 1),
          ("submit", "bob", 1, "https://github.com/o/r/pull/1", "a" * 40),
          ("create", "alice", 1, 50, ("exclusive", 600)), ("accept", "dave", 1)]


def run(ledger: LocalLedger, keys: dict[str, Any], op: tuple[Any, ...]) -> Any:
    kind, *args = op
    if kind == "advance":
        return ledger.advance(args[0])
    signer = keys[args[0]]
    if kind == "create":
        _, reuse, amount, (mode, hold) = args
        deadline = ledger.now() + 3_600
        issue = max(len(ledger.list_bounties()) - (reuse == 0), 0)  # now and then the previous bounty's hash
        return ledger.create_bounty(signer, "o/r", f"{issue:064x}", "USDT", amount, deadline=deadline, mode=mode,
                                    hold_seconds=hold)
    count = len(ledger.list_bounties())
    bounty_id = str(count - (args[1] - 1) % count) if args[1] and count else "99"
    if kind == "accept":
        return ledger.accept_bounty(signer, bounty_id)
    if kind == "withdraw":
        return ledger.withdraw_task(signer, bounty_id)
    if kind == "submit":
        return ledger.submit_pr(signer, bounty_id, args[2], args[3])
    if kind == "merge":
        winner = keys[args[3]].address if args[3] else None
        return ledger.mark_merged(signer, bounty_id, args[2], winner)
    if kind == "claim":
        return ledger.claim_payout(signer, bounty_id)
    return ledger.cancel_bounty(signer, bounty_id)


def check_invariants(ledger: LocalLedger, addresses: list[str], now: int) -> None:
    total = sum(ledger.balance(a, "USDT") for a in addresses) + ledger.balance(ESCROW, "USDT")
    assert total == 2 * FUNDS, "money is conserved"
    bounties = ledger.list_bounties()
    assert ledger.balance(ESCROW, "USDT") == sum(b.amount for b in bounties if b.status in LIVE)
    for b in bounties:
        assert len(b.workers) <= (1 if b.mode is Mode.EXCLUSIVE else MAX_WORKERS)
        assert set(b.submissions) <= set(b.workers) or b.status is not Status.STARTED
        urls = [s["pr_url"] for s in b.submissions.values()]
        assert len(urls) == len(set(urls)), "a PR URL belongs to one submitter"
        if b.mode is Mode.EXCLUSIVE and b.holder is not None:
            assert b.workers == [b.holder] and b.hold_until is not None
        if b.status in (Status.COOLING_DOWN, Status.PAID):
            assert b.winner is not None and contract.submitter_of(b, b.merged_pr or "") == b.winner
        if b.status is Status.OPEN:
            assert b.workers == [] and b.submissions == {}
        mirror = Bounty.from_chain(ledger.bounty_events(b.bounty_id)[0])
        for event in ledger.bounty_events(b.bounty_id)[1:]:
            mirror.observe(event)
        assert mirror.comparable() == b.comparable(), "the mirror follows the chain's rules"
        assert mirror.status is b.status
    assert ledger.now() >= now, "the clock never moves back"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(operation, min_size=1, max_size=40))
def test_any_sequence_of_calls_keeps_the_contracts_invariants(tmp_path_factory: Any, ops: list[Any]) -> None:
    root: Path = tmp_path_factory.mktemp("ledger")
    store = Keystore(root / "keys")
    keys = {name: store.new(name) for name in PEOPLE}
    ledger = LocalLedger(root / "l.sqlite", cooling_period=60, resolver=keys["resolver"].address)
    try:
        for sponsor in ("alice", "bob"):
            ledger.mint(keys[sponsor].address, "USDT", FUNDS)
        addresses = [k.address for k in keys.values()]
        for op in [*PREFIX, *ops]:
            before = [b.to_dict() for b in ledger.list_bounties()]
            now = ledger.now()
            receipt = run(ledger, keys, op)
            if op[0] != "advance" and not receipt.success:
                assert receipt.abort_code in {int(a) for a in contract.Abort} and receipt.events == []
                assert [b.to_dict() for b in ledger.list_bounties()] == before, "a refusal changes nothing"
            check_invariants(ledger, addresses, now)
    finally:
        ledger.close()
