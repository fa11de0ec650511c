"""Random sequences of every entry function of the v2 contract on the embedded ledger: money is conserved, the
escrow holds exactly what live bounties pool and refunds still owe, a bounty pays at most once and never more than
its pool, one merged PR settles one bounty, a refusal changes nothing, and the Bounty mirror built from the chain's
events agrees with the chain's state. Every entry function but `initialize` (the ledger's opening) is called."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.keystore import Keystore, public_key_of, sign
from adapters.ledger_tables import ESCROW
from adapters.local_ledger import LocalLedger
from adapters.ports import Signer
from domain.bounties import contract
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Mode, Status, SubmissionState
from domain.bounties.links import link_message

PEOPLE = ("alice", "bob", "carol", "dave", "resolver", "other_resolver")
WORKERS = ("bob", "carol", "dave")
FORGE_IDS = {"bob": 11, "carol": 12, "dave": 13}
FUNDS = 1_000
LIVE = (Status.OPEN, Status.STARTED, Status.PR_SUBMITTED, Status.COOLING_DOWN)
PRS = ["https://github.com/o/r/pull/1", "https://github.com/o/r/pull/2"]

# Mostly calls that can succeed (so sequences reach merges, payouts, disputes and refunds), some that cannot.
who = st.sampled_from(PEOPLE)
worker = st.sampled_from(WORKERS) | who
resolver = st.just("resolver") | st.sampled_from(PEOPLE)
bounty_no = st.integers(min_value=0, max_value=3)  # an existing bounty, most recent first; 0: one that is not
pr = st.sampled_from(PRS) | st.just("")
sha = st.just("a" * 40) | st.sampled_from(["b" * 64, "c" * 7])
terms = st.sampled_from([("contest", 0), ("exclusive", 60), ("exclusive", 600)]) | st.sampled_from(
    [("contest", 60), ("exclusive", 0)])
forge_id = st.sampled_from([13, 11, 12, 99])
random_call = st.one_of(
    st.tuples(st.just("create"), st.sampled_from(["alice", "bob"]), st.integers(0, 5), st.integers(1, 100), terms),
    st.tuples(st.just("fund"), who, bounty_no, st.integers(1, 50), st.integers(0, 3)),
    st.tuples(st.just("accept"), worker, bounty_no),
    st.tuples(st.just("accept_for"), resolver, bounty_no, forge_id),
    st.tuples(st.just("withdraw"), worker, bounty_no),
    st.tuples(st.just("submit"), worker, bounty_no, pr, sha),
    st.tuples(st.just("submit"), worker, bounty_no, pr, sha),
    st.tuples(st.just("submit_for"), resolver, bounty_no, forge_id, pr),
    st.tuples(st.just("reject"), resolver, bounty_no, worker, st.integers(0, 6)),
    st.tuples(st.just("merge"), resolver, bounty_no, pr, forge_id, st.sampled_from([7, 8]), st.integers(0, 2)),
    st.tuples(st.just("merge"), st.just("resolver"), bounty_no, pr, forge_id, st.just(7), st.integers(1, 2)),
    st.tuples(st.just("split"), worker, bounty_no, st.lists(st.sampled_from(WORKERS), min_size=1, max_size=3),
              st.integers(1, 5)),
    st.tuples(st.just("claim"), who, bounty_no),
    st.tuples(st.just("cancel"), st.sampled_from(["alice", "bob"]) | who, bounty_no),
    st.tuples(st.just("withdraw_refund"), who, bounty_no),
    st.tuples(st.just("dispute"), who, bounty_no, st.sampled_from(["it does not work", ""])),
    st.tuples(st.just("rule"), resolver, bounty_no, st.sampled_from([0, 2_500, 5_000, 10_000, 10_001])),
    st.tuples(st.just("tip"), who, bounty_no, st.sampled_from(WORKERS), st.integers(0, 30), st.integers(0, 2)),
    st.tuples(st.just("link"), resolver, st.sampled_from(WORKERS), forge_id),
    st.tuples(st.just("set_resolver"), who, st.sampled_from(["resolver", "other_resolver"])),
    st.tuples(st.just("withdraw_for"), resolver, bounty_no, forge_id),
    st.tuples(st.just("split_for"), resolver, bounty_no, forge_id, st.lists(st.sampled_from(WORKERS), min_size=1,
                                                                           max_size=2)),
    st.tuples(st.just("dispute_for"), resolver, bounty_no, forge_id),
    st.tuples(st.just("set_cooling_period"), who, st.sampled_from([0, 30, 60])),
    st.tuples(st.just("set_dispute_period"), who, st.sampled_from([0, 60, 120])),
    st.tuples(st.just("advance"), st.sampled_from([1, 59, 60, 601, 3_600, contract.REFUND_GRACE])),
)
# calls built from the chain's state, so that sequences often reach merges, disputes, rulings, payouts and refunds
live_call = st.one_of(
    st.tuples(st.just("submit_live"), bounty_no, st.sampled_from(WORKERS[:2]), st.integers(0, 1)),
    st.tuples(st.just("merge_live"), bounty_no),
    st.tuples(st.just("dispute_live"), bounty_no),
    st.tuples(st.just("rule_live"), bounty_no, st.sampled_from([0, 3_333, 10_000])),
    st.tuples(st.just("split_live"), bounty_no, st.integers(1, 4)),
    st.tuples(st.just("refund_live"), bounty_no),
    st.tuples(st.just("claim_live"), bounty_no),
    st.tuples(st.just("cancel_live"), bounty_no),
    st.tuples(st.just("advance"), st.sampled_from([61, 121, contract.REFUND_GRACE])),
    st.tuples(st.just("for_live"), bounty_no, st.booleans()),
)
operation = st.one_of(live_call, random_call, live_call)


# Every sequence starts with linked workers, a contest with a submitted PR and an exclusive bounty held by a worker,
# and then, as often as not, further along: the contest funded twice and merged, and the merge disputed.
BASE = [("link", "resolver", "bob", 11), ("link", "resolver", "carol", 12), ("link", "resolver", "dave", 13),
        ("create", "alice", 1, 100, ("contest", 0)), ("accept", "bob", 1), ("accept", "carol", 1),
        ("submit", "bob", 1, PRS[0], "a" * 40),
        ("create", "alice", 1, 50, ("exclusive", 600)), ("accept", "dave", 1)]
FUNDED = [*BASE, ("fund", "carol", 2, 30, 1), ("fund", "dave", 2, 7, 1)]
MERGED = [*FUNDED, ("merge", "resolver", 2, PRS[0], 11, 7, 1)]
DISPUTED = [*MERGED, ("dispute", "alice", 2, "the feature is half done")]
prefix = st.sampled_from([BASE, FUNDED, MERGED, DISPUTED])


def run(ledger: LocalLedger, keys: dict[str, Signer], op: tuple[Any, ...]) -> Any:
    kind, *args = op
    if kind == "advance":
        return ledger.advance(args[0])
    if kind.endswith("_live"):
        return run_live(ledger, keys, kind, args)
    signer = keys[args[0]]
    if kind == "create":
        _, reuse, amount, (mode, hold) = args
        deadline = ledger.now() + 3_600
        issue = max(len(ledger.list_bounties()) - (reuse == 0), 0)  # now and then the previous bounty's hash
        return ledger.create_bounty(signer, "o/r", f"{issue:064x}", "USDT", amount, deadline=deadline, mode=mode,
                                    hold_seconds=hold, repo_id=7)
    if kind == "link":
        account = keys[args[1]]
        message = link_message(args[2], account.address)
        return ledger.link_account(signer, args[2], args[1], account.address, public_key_of(account.private_key_hex),
                                   sign(account, message))
    if kind == "set_resolver":
        return ledger.set_resolver(signer, keys[args[1]].address)
    if kind == "set_cooling_period":
        return ledger.set_cooling_period(signer, args[1])
    if kind == "set_dispute_period":
        return ledger.set_dispute_period(signer, args[1])
    count = len(ledger.list_bounties())
    bounty_id = str(count - (args[1] - 1) % count) if args[1] and count else "99"
    calls = {
        "fund": lambda: ledger.fund_bounty(signer, bounty_id, args[2], args[3]),
        "accept": lambda: ledger.accept_bounty(signer, bounty_id),
        "accept_for": lambda: ledger.accept_for(signer, bounty_id, args[2]),
        "withdraw": lambda: ledger.withdraw_task(signer, bounty_id),
        "submit": lambda: ledger.submit_pr(signer, bounty_id, args[2], args[3]),
        "submit_for": lambda: ledger.submit_pr_for(signer, bounty_id, args[2], args[3], "a" * 40),
        "reject": lambda: ledger.reject_submission(signer, bounty_id, keys[args[2]].address, args[3]),
        "merge": lambda: ledger.mark_merged(signer, bounty_id, args[2], args[3], args[4], args[5]),
        "split": lambda: ledger.set_split(signer, bounty_id, [keys[w].address for w in dict.fromkeys(args[2])],
                                          [args[3]] * len(dict.fromkeys(args[2]))),
        "withdraw_for": lambda: ledger.withdraw_for(signer, bounty_id, args[2]),
        "split_for": lambda: ledger.set_split_for(signer, bounty_id, args[2],
                                                  [keys[w].address for w in dict.fromkeys(args[3])],
                                                  [1] * len(dict.fromkeys(args[3]))),
        "dispute_for": lambda: ledger.dispute_for(signer, bounty_id, args[2], "the resolver acts for a comment"),
        "claim": lambda: ledger.claim_payout(signer, bounty_id),
        "cancel": lambda: ledger.cancel_bounty(signer, bounty_id),
        "withdraw_refund": lambda: ledger.withdraw_refund(signer, bounty_id),
        "dispute": lambda: ledger.dispute(signer, bounty_id, args[2]),
        "rule": lambda: ledger.rule(signer, bounty_id, args[2]),
        "tip": lambda: ledger.tip(signer, bounty_id, keys[args[2]].address, args[3], args[4]),
    }
    return calls[kind]()


WANTED: dict[str, Any] = {  # the bounties a live call is meant for
    "submit_live": lambda b: b.status in (Status.OPEN, Status.STARTED, Status.PR_SUBMITTED),
    "merge_live": lambda b: b.status is Status.PR_SUBMITTED,
    "dispute_live": lambda b: b.status in (Status.COOLING_DOWN, Status.PR_SUBMITTED, Status.STARTED),
    "rule_live": lambda b: b.dispute is not None,
    "split_live": lambda b: b.status is Status.COOLING_DOWN,
    "claim_live": lambda b: b.status is Status.COOLING_DOWN,
    "cancel_live": lambda b: b.status in (Status.OPEN, Status.STARTED, Status.PR_SUBMITTED),
    "refund_live": lambda b: b.refund_total > b.refunded,
    "for_live": lambda b: b.mode is Mode.CONTEST and b.status in (Status.OPEN, Status.STARTED, Status.PR_SUBMITTED),
}


def run_live(ledger: LocalLedger, keys: dict[str, Signer], kind: str, args: list[Any]) -> Any:
    """A call chosen from the state of a bounty it is meant for (its resolver, its live submissions, its dispute), that
    the rules may well accept; the ledger still judges it."""
    fitting = [b for b in ledger.list_bounties() if WANTED[kind](b)] or ledger.list_bounties()
    state = fitting[args[0] % len(fitting)] if fitting else None
    if state is None:
        return ledger.claim_payout(keys["alice"], "99")
    by_address = {k.address: name for name, k in keys.items()}
    resolver = keys[by_address.get(state.resolver or "", "resolver")]
    live = [(w, s) for w, s in state.submissions.items() if s["state"] == SubmissionState.LIVE]
    if kind == "for_live":  # the resolver acting for dave (forge id 13), a step further each time
        dave = keys["dave"].address
        if not ledger.is_entrant(state.bounty_id, dave):
            return ledger.accept_for(resolver, state.bounty_id, 13)
        if dave not in state.submissions:
            if args[1]:
                return ledger.withdraw_for(resolver, state.bounty_id, 13)
            return ledger.submit_pr_for(resolver, state.bounty_id, 13, PRS[1], "a" * 40)
        return ledger.dispute_for(resolver, state.bounty_id, 13, "a comment's /dispute, acted on by the resolver")
    if kind == "submit_live":
        worker = keys[args[1]]
        ledger.accept_bounty(worker, state.bounty_id)
        return ledger.submit_pr(worker, state.bounty_id, PRS[args[2]], "a" * 40)
    if kind == "claim_live":
        return ledger.claim_payout(keys["dave"], state.bounty_id)
    if kind == "cancel_live":
        return ledger.cancel_bounty(keys[by_address[state.sponsor]], state.bounty_id)
    if kind == "merge_live":
        worker, sub = live[0] if live else (keys["bob"].address, {"pr_url": PRS[0]})
        forge = FORGE_IDS.get(by_address.get(worker, ""), 99)
        number = PRS.index(sub["pr_url"]) + 1 if sub["pr_url"] in PRS else 3
        return ledger.mark_merged(resolver, state.bounty_id, sub["pr_url"], forge, 7, number)
    if kind == "dispute_live":
        party = keys["alice"] if state.status is Status.COOLING_DOWN or not state.submissions else \
            keys[by_address[next(iter(state.submissions))]]
        return ledger.dispute(party, state.bounty_id, "the resolver should look at this")
    if kind == "rule_live":
        return ledger.rule(resolver, state.bounty_id, args[1])
    if kind == "split_live":
        winner = keys[by_address.get(state.winner or "", "bob")]
        recipients = [keys[w].address for w in WORKERS[:args[1] % 3 + 1]]
        return ledger.set_split(winner, state.bounty_id, recipients, list(range(1, len(recipients) + 1)))
    funder = keys[next((name for name, k in keys.items() if ledger.contribution(state.bounty_id, k.address)),
                       "alice")]
    return ledger.withdraw_refund(funder, state.bounty_id)


def check_invariants(ledger: LocalLedger, addresses: list[str], now: int, paid_events: Counter[str]) -> None:
    total = sum(ledger.balance(a, "USDT") for a in addresses) + ledger.balance(ESCROW, "USDT")
    assert total == 4 * FUNDS, "money is conserved"
    bounties = ledger.list_bounties()
    owed = sum(b.pool for b in bounties if b.status in LIVE) + sum(b.refund_total - b.refunded for b in bounties)
    assert ledger.balance(ESCROW, "USDT") == owed, "the escrow holds what live pools and open refunds owe"
    settled = Counter()
    for b in bounties:
        assert paid_events[b.bounty_id] <= 1, "a bounty pays at most once"
        events = ledger.bounty_events(b.bounty_id)
        paid = sum(int(e.data["amount"]) for e in events if e.type == "BountyPaid")
        refunded = sum(int(e.data["amount"]) for e in events if e.type == "RefundWithdrawn")
        if b.status in LIVE:
            assert paid == 0 and b.refund_total == 0, "nothing leaves a live bounty's pool"
        else:
            assert paid + b.refund_total == b.pool, "a finished bounty's pool is paid or refunded, to the unit"
        assert refunded == b.refunded <= b.refund_total
        if b.mode is Mode.EXCLUSIVE:
            assert b.entrants <= 1 and (b.holder is not None or b.entrants == 0)
        urls = [s["pr_url"] for s in b.submissions.values() if s["state"] == SubmissionState.LIVE]
        assert len(b.submissions) <= contract.MAX_SUBMISSIONS and len(urls) <= len(b.submissions)
        if b.winner is not None:
            assert b.merged_pr_number is not None and b.status in (Status.COOLING_DOWN, Status.PAID, Status.CANCELLED)
            settled[(b.merged_pr_number,)] += 1
            assert ledger.settled_by(7, b.merged_pr_number) == b.bounty_id
        if b.status is Status.OPEN:
            assert b.entrants == 0 and not any(s["state"] == SubmissionState.LIVE for s in b.submissions.values())
        mirror = Bounty.from_chain(events[0])
        for event in events[1:]:
            mirror.observe(event)
        assert mirror.comparable() == b.comparable(), "the mirror follows the chain's rules"
        assert mirror.status is b.status
    assert all(n == 1 for n in settled.values()), "one merged PR settles one bounty"
    assert ledger.now() >= now, "the clock never moves back"


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=prefix, ops=st.lists(operation, min_size=12, max_size=50))
def test_any_sequence_of_calls_keeps_the_contracts_invariants(tmp_path_factory: Any, start: list[Any],
                                                              ops: list[Any]) -> None:
    root: Path = tmp_path_factory.mktemp("ledger")
    store = Keystore(root / "keys")
    keys = {name: store.new(name) for name in PEOPLE}
    ledger = LocalLedger(root / "l.sqlite", cooling_period=60, resolver=keys["resolver"].address,
                         admin=keys["alice"].address, dispute_period=120)
    try:
        for funded in ("alice", "bob", "carol", "dave"):
            ledger.mint(keys[funded].address, "USDT", FUNDS)
        addresses = [k.address for k in keys.values()]
        paid_events: Counter[str] = Counter()
        for op in [*start, *ops]:
            before = [b.to_dict() for b in ledger.list_bounties()]
            balances = [ledger.balance(a, "USDT") for a in addresses]
            now = ledger.now()
            receipt = run(ledger, keys, op)
            if op[0] != "advance":
                if not receipt.success:
                    assert receipt.abort_code in {int(a) for a in contract.Abort} and receipt.events == []
                    assert [b.to_dict() for b in ledger.list_bounties()] == before, "a refusal changes nothing"
                    assert [ledger.balance(a, "USDT") for a in addresses] == balances
                paid_events.update(e.data["bounty_id"] for e in receipt.events if e.type == "BountyPaid")
            check_invariants(ledger, addresses, now, paid_events)
    finally:
        ledger.close()
