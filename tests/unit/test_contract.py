"""The contract's rules (domain.bounties.contract, v2), one table per rule: what each allows, and the abort of each
refusal.

The embedded ledger runs exactly these functions and the Move module encodes the same checks in the same
order (tests/unit/test_move_abi.py), so these tables are the contract's specification.
"""

from collections.abc import Callable
from typing import Any

import pytest

from domain.bounties import contract, contract_args
from domain.bounties.contract import (
    ABORT_CODES,
    BPS,
    DAY,
    MAX_COOLING_PERIOD,
    MAX_DEADLINE_AHEAD,
    MAX_HOLD_SECONDS,
    MAX_SUBMISSIONS,
    REFUND_GRACE,
    U64_MAX,
    Abort,
    BountyState,
    ChainConfig,
    ContractAbort,
    Mode,
    Rejection,
    Status,
    SubmissionState,
)
from domain.errors import Code, Code3Error

NOW = 1_000
SHA = "c" * 40
HASH = "e" * 64
DEADLINE = NOW + 500
REPO_ID = 77


def bounty(mode: Mode = Mode.CONTEST, hold: int = 0, deadline: int = DEADLINE, **over: Any) -> BountyState:
    state = BountyState(**{"bounty_id": "1", "sponsor": "S", "resolver": "R", "repo": "o/r", "repo_id": REPO_ID,
                           "issue_hash": HASH, "asset": "USDT", "amount": 10, "created_at": NOW, "cooling_period": 50,
                           "dispute_period": 30, "deadline": deadline, "mode": mode, "hold_seconds": hold, **over})
    state.pool, state.funders = state.amount, 1
    return state


def exclusive(hold: int = 100) -> BountyState:
    return bounty(Mode.EXCLUSIVE, hold)


def aborts(call: Callable[[], Any]) -> Abort:
    with pytest.raises(ContractAbort) as caught:
        call()
    return caught.value.abort


def url(worker: str) -> str:
    return f"https://github.com/o/r/pull/{worker}"


def submitted(b: BountyState, *workers: str, now: int = NOW) -> BountyState:
    for w in workers:
        contract.accept(b, w, now, entered=False)
        contract.submit_pr(b, w, url(w), SHA, now, entered=True)
    return b


def merge(b: BountyState, worker: str = "w", now: int = NOW, pr_number: int = 1) -> contract.Emitted:
    return contract.mark_merged(b, "R", url(worker), author_id=9, repo_id=REPO_ID, pr_number=pr_number, now=now,
                                winner=worker, settled=False)


def cooling(b: BountyState | None = None, worker: str = "w", now: int = NOW) -> BountyState:
    b = submitted(b or bounty(), worker, now=now)
    merge(b, worker, now)
    return b


# --- create: bounded strings, amount, deadline, mode and hold time, issue hash per sponsor, balance ----------

@pytest.mark.parametrize(("change", "taken", "balance", "expected"), [
    ({}, False, 10, None),
    ({"repo": ""}, False, 10, Abort.INVALID_REPO),
    ({"repo": "o/" + "r" * 139}, False, 10, Abort.INVALID_REPO),
    ({"repo": "o/" + "r" * 138}, False, 10, None),
    ({"repo": "o/" + "é" * 70}, False, 10, Abort.INVALID_REPO),  # bytes, as Move's string::length counts
    ({"issue_hash": "E" * 64}, False, 10, Abort.INVALID_ISSUE_HASH),
    ({"issue_hash": "e" * 63}, False, 10, Abort.INVALID_ISSUE_HASH),
    ({"issue_hash": "hash-1"}, False, 10, Abort.INVALID_ISSUE_HASH),
    ({"amount": 0}, False, 10, Abort.INVALID_AMOUNT),
    ({"deadline": NOW}, False, 10, Abort.INVALID_DEADLINE),
    ({"deadline": NOW + MAX_DEADLINE_AHEAD}, False, 10, None),
    ({"deadline": NOW + MAX_DEADLINE_AHEAD + 1}, False, 10, Abort.INVALID_DEADLINE),
    ({"mode": 2}, False, 10, Abort.INVALID_MODE),
    ({"mode": Mode.EXCLUSIVE, "hold_seconds": 0}, False, 10, Abort.INVALID_HOLD),
    ({"mode": Mode.EXCLUSIVE, "hold_seconds": MAX_HOLD_SECONDS}, False, 10, None),
    ({"mode": Mode.EXCLUSIVE, "hold_seconds": MAX_HOLD_SECONDS + 1}, False, 10, Abort.INVALID_HOLD),
    ({"mode": Mode.CONTEST, "hold_seconds": 1}, False, 10, Abort.INVALID_HOLD),
    ({}, True, 10, Abort.ISSUE_HASH_EXISTS),
    ({}, False, 9, Abort.INSUFFICIENT_BALANCE),
    ({"amount": 0, "repo": ""}, True, 0, Abort.INVALID_REPO),  # the first check wins, as on chain
], ids=lambda v: str(v)[:40])
def test_create(change: dict[str, Any], taken: bool, balance: int, expected: Abort | None) -> None:
    b = bounty(**change)
    if expected is not None:
        assert aborts(lambda: contract.create(b, balance, NOW, taken)) is expected
        return
    [(name, data)] = contract.create(b, balance, NOW, taken)
    assert name == "BountyCreated" and data["deadline"] == b.deadline and data["mode"] == int(b.mode)
    assert (data["resolver"], data["repo_id"], data["dispute_period"]) == ("R", REPO_ID, 30)
    assert (b.pool, b.funders) == (b.amount, 1), "the sponsor is the first funder"


# --- accept: exclusive holds, contest entrants without a cap ----------------------------------------------

def test_exclusive_the_first_worker_holds_the_task_and_a_second_is_refused_until_the_hold_ends() -> None:
    b = exclusive(hold=100)
    [(name, data)] = contract.accept(b, "w1", NOW, entered=False)
    assert (name, data["hold_until"]) == ("BountyAccepted", NOW + 100)
    assert (b.status, b.entrants, b.holder, b.hold_until) == (Status.STARTED, 1, "w1", NOW + 100)
    assert contract.accept(b, "w1", NOW + 10, entered=False) == [], "the holder accepting again changes nothing"
    assert aborts(lambda: contract.accept(b, "w2", NOW + 99, entered=False)) is Abort.HELD_BY_OTHER
    assert b.held_by_other("w2", NOW + 99) and not b.held_by_other("w1", NOW + 99)
    assert not b.held_by_other("w2", NOW + 100), "the hold ends at hold_until"
    contract.accept(b, "w2", NOW + 100, entered=False)  # takes over the expired hold
    assert (b.entrants, b.holder, b.hold_until) == (1, "w2", NOW + 200)


def test_exclusive_an_expired_holder_renews_by_accepting_again() -> None:
    b = exclusive(hold=100)
    contract.accept(b, "w1", NOW, entered=False)
    [(_, data)] = contract.accept(b, "w1", NOW + 150, entered=False)
    assert data["hold_until"] == NOW + 250 and b.hold_until == NOW + 250


@pytest.mark.parametrize(("mode", "status", "expected"), [
    (Mode.EXCLUSIVE, Status.PR_SUBMITTED, Abort.INVALID_STATE),
    (Mode.CONTEST, Status.PR_SUBMITTED, None),
    (Mode.CONTEST, Status.COOLING_DOWN, Abort.INVALID_STATE),
    (Mode.EXCLUSIVE, Status.PAID, Abort.INVALID_STATE),
    (Mode.CONTEST, Status.CANCELLED, Abort.INVALID_STATE),
])
def test_accept_is_allowed_in_open_and_started_and_for_a_contest_in_pr_submitted(
        mode: Mode, status: Status, expected: Abort | None) -> None:
    b = bounty(mode, 100 if mode is Mode.EXCLUSIVE else 0, status=status)
    if expected is None:
        assert contract.accept(b, "w", NOW, entered=False)[0][1]["hold_until"] == 0
    else:
        assert aborts(lambda: contract.accept(b, "w", NOW, entered=False)) is expected


def test_the_sponsor_cannot_accept_and_no_crowd_fills_a_contest() -> None:
    b = bounty()
    assert aborts(lambda: contract.accept(b, "S", NOW, entered=False)) is Abort.SPONSOR_CANNOT_ACCEPT
    for n in range(1_000):  # throw-away accounts: no cap on entrants, so nobody is locked out
        contract.accept(b, f"junk{n}", NOW, entered=False)
    assert contract.accept(b, "honest", NOW, entered=False)[0][0] == "BountyAccepted"
    assert contract.accept(b, "honest", NOW, entered=True) == [], "an entrant entering again changes nothing"
    assert b.entrants == 1_001


# --- withdraw ---------------------------------------------------------------------------------------------

def test_withdraw_releases_the_hold_and_reopens_the_task() -> None:
    b = exclusive()
    assert aborts(lambda: contract.withdraw(b, "w1", entered=False)) is Abort.INVALID_STATE
    contract.accept(b, "w1", NOW, entered=False)
    assert aborts(lambda: contract.withdraw(b, "w2", entered=False)) is Abort.NOT_ACCEPTED
    assert contract.withdraw(b, "w1", entered=False) == [("TaskWithdrawn", {"bounty_id": "1", "worker": "w1"})]
    assert (b.status, b.entrants, b.holder, b.hold_until) == (Status.OPEN, 0, None, None)
    contract.accept(b, "w2", NOW + 1, entered=False)  # at once: nobody holds it
    assert b.holder == "w2"


def test_a_contest_worker_leaves_but_not_while_its_pr_is_live() -> None:
    b = submitted(bounty(), "w1")
    contract.accept(b, "w2", NOW, entered=False)
    assert aborts(lambda: contract.withdraw(b, "w1", entered=True)) is Abort.INVALID_STATE
    assert aborts(lambda: contract.withdraw(b, "w3", entered=False)) is Abort.NOT_ACCEPTED
    contract.withdraw(b, "w2", entered=True)
    assert (b.status, b.entrants) == (Status.PR_SUBMITTED, 1)


# --- submit_pr ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("pr_url", "sha", "expected"), [
    ("https://github.com/o/r/pull/1", "a" * 40, None),
    ("https://github.com/o/r/pull/1", "a" * 64, None),
    ("", "a" * 40, Abort.INVALID_PR_URL),
    ("h" * 301, "a" * 40, Abort.INVALID_PR_URL),
    ("h" * 300, "a" * 40, None),
    ("https://github.com/o/r/pull/1", "a" * 7, Abort.INVALID_COMMIT_SHA),
    ("https://github.com/o/r/pull/1", "A" * 40, Abort.INVALID_COMMIT_SHA),
    ("https://github.com/o/r/pull/1", "g" * 40, Abort.INVALID_COMMIT_SHA),
])
def test_submit_pr_strings_are_bounded(pr_url: str, sha: str, expected: Abort | None) -> None:
    b = bounty()
    contract.accept(b, "w", NOW, entered=False)
    if expected is None:
        assert contract.submit_pr(b, "w", pr_url, sha, NOW, entered=True)[0][0] == "PRSubmitted"
    else:
        assert aborts(lambda: contract.submit_pr(b, "w", pr_url, sha, NOW, entered=True)) is expected


def test_several_workers_may_name_one_pr_so_a_front_runner_locks_nobody_out() -> None:
    b = bounty()
    assert aborts(lambda: contract.submit_pr(b, "w1", "u", SHA, NOW, entered=True)) is Abort.INVALID_STATE
    contract.accept(b, "w1", NOW, entered=False)
    contract.accept(b, "w2", NOW, entered=False)
    assert aborts(lambda: contract.submit_pr(b, "w3", "u", SHA, NOW, entered=False)) is Abort.NOT_ACCEPTED
    contract.submit_pr(b, "w1", "u", SHA, NOW, entered=True)
    assert contract.submit_pr(b, "w1", "u", SHA, NOW, entered=True) == [], "the same PR again changes nothing"
    assert aborts(lambda: contract.submit_pr(b, "w1", "other", SHA, NOW, entered=True)) is Abort.PR_ALREADY_SUBMITTED
    contract.submit_pr(b, "w2", "u", SHA, NOW, entered=True)  # the true author too
    assert b.submitter_of("u") == ["w1", "w2"]


def test_exclusive_only_the_holder_submits_while_the_hold_runs() -> None:
    b = exclusive(hold=100)
    contract.accept(b, "w1", NOW, entered=False)
    assert aborts(lambda: contract.submit_pr(b, "w2", "u", SHA, NOW, entered=False)) is Abort.NOT_ACCEPTED
    assert aborts(lambda: contract.submit_pr(b, "w1", "u", SHA, NOW + 100, entered=False)) is Abort.HOLD_EXPIRED
    contract.accept(b, "w1", NOW + 100, entered=False)  # renewed
    contract.submit_pr(b, "w1", "u", SHA, NOW + 150, entered=False)
    assert b.status is Status.PR_SUBMITTED
    assert contract.submit_pr(b, "w1", "u", SHA, NOW + 10_000, entered=False) == [], "a repeat changes nothing"


def test_submissions_are_bounded_and_a_worker_whose_pr_closed_submits_another() -> None:
    b = bounty()
    for n in range(MAX_SUBMISSIONS):
        submitted(b, f"w{n}")
    contract.accept(b, "late", NOW, entered=False)
    assert aborts(lambda: contract.submit_pr(b, "late", "u", SHA, NOW, entered=True)) is Abort.TOO_MANY_SUBMISSIONS
    contract.reject_submission(b, "R", "w0", Rejection.NOT_IN_REPO, NOW)  # junk frees its place
    contract.submit_pr(b, "late", "u", SHA, NOW, entered=True)
    contract.reject_submission(b, "R", "w1", Rejection.CLOSED, NOW)
    assert b.submissions["w1"]["state"] == SubmissionState.CLOSED
    contract.submit_pr(b, "w1", "second-try", SHA, NOW, entered=True)
    assert b.submissions["w1"] == {"pr_url": "second-try", "commit_sha": SHA, "submitted_at": NOW, "state": 0}


# --- reject_submission: the resolver, from the forge ---------------------------------------------------------

@pytest.mark.parametrize(("signer", "worker", "reason", "expected"), [
    ("R", "w1", Rejection.NOT_IN_REPO, None),
    ("S", "w1", Rejection.NOT_IN_REPO, Abort.NOT_RESOLVER),
    ("w1", "w1", Rejection.NOT_IN_REPO, Abort.NOT_RESOLVER),
    ("R", "w1", 0, Abort.INVALID_REASON),
    ("R", "w1", 6, Abort.INVALID_REASON),
    ("R", "nobody", Rejection.NOT_AUTHOR, Abort.PR_NOT_SUBMITTED),
])
def test_reject_submission(signer: str, worker: str, reason: int, expected: Abort | None) -> None:
    b = submitted(bounty(), "w1")
    if expected is not None:
        assert aborts(lambda: contract.reject_submission(b, signer, worker, reason, NOW)) is expected
        return
    [(name, data)] = contract.reject_submission(b, signer, worker, reason, NOW)
    assert (name, data["reason"], data["pr_url"]) == ("SubmissionRejected", reason, url("w1"))
    assert b.submissions == {} and b.status is Status.STARTED, "junk blocks nothing"


def test_a_closed_pr_is_kept_closed_and_cannot_be_rejected_twice() -> None:
    b = submitted(bounty(), "w1", "w2")
    contract.reject_submission(b, "R", "w1", Rejection.CLOSED, NOW + 3)
    assert (b.status, b.last_closed_at) == (Status.PR_SUBMITTED, NOW + 3), "w2's PR is still live"
    assert aborts(lambda: contract.reject_submission(b, "R", "w1", Rejection.CLOSED, NOW + 4)) \
        is Abort.PR_NOT_SUBMITTED
    contract.reject_submission(b, "R", "w2", Rejection.WRONG_BASE, NOW + 5)
    assert b.status is Status.STARTED and list(b.submissions) == ["w1"]


# --- mark_merged: the resolver reports what the forge shows; the winner is the author's linked address --------

@pytest.mark.parametrize(("signer", "pr", "repo_id", "pr_number", "winner", "settled", "expected"), [
    ("R", url("w2"), REPO_ID, 5, "w2", False, None),
    ("S", url("w2"), REPO_ID, 5, "w2", False, Abort.NOT_RESOLVER),  # not the sponsor's to report
    ("w2", url("w2"), REPO_ID, 5, "w2", False, Abort.NOT_RESOLVER),
    ("R", url("w2"), 8, 5, "w2", False, Abort.WRONG_REPO),  # a PR of another repository
    ("R", url("w2"), 0, 5, "w2", False, Abort.WRONG_REPO),
    ("R", url("w2"), REPO_ID, 0, "w2", False, Abort.INVALID_PR_URL),
    ("R", url("w2"), REPO_ID, 5, None, False, Abort.NOT_LINKED),  # the author has no linked address
    ("R", url("w2"), REPO_ID, 5, "w3", False, Abort.PR_NOT_SUBMITTED),  # the author never submitted it
    ("R", url("w1"), REPO_ID, 5, "w2", False, Abort.PR_NOT_SUBMITTED),  # the author submitted another PR
    ("R", url("w2"), REPO_ID, 5, "w2", True, Abort.PR_ALREADY_SETTLED),  # one merged PR, one bounty
])
def test_mark_merged(signer: str, pr: str, repo_id: int, pr_number: int, winner: str | None, settled: bool,
                     expected: Abort | None) -> None:
    b = submitted(bounty(), "w1", "w2")
    call = lambda: contract.mark_merged(b, signer, pr, 9, repo_id, pr_number, NOW + 7, winner, settled)  # noqa: E731
    if expected is not None:
        assert aborts(call) is expected
        assert b.status is Status.PR_SUBMITTED
        return
    events = call()
    assert [e[0] for e in events] == ["BountyMerged", "CoolingStarted"]
    assert events[0][1] | {} == {"bounty_id": "1", "winner": "w2", "pr_url": pr, "merged_at": NOW + 7,
                                 "author_id": 9, "repo_id": REPO_ID, "pr_number": 5}
    assert (b.winner, b.merged_pr, b.cooling_until, b.status) == ("w2", pr, NOW + 57, Status.COOLING_DOWN)
    assert aborts(lambda: merge(b, "w2", NOW + 8)) is Abort.INVALID_STATE


def test_a_front_runner_who_submitted_the_authors_pr_is_not_the_winner() -> None:
    b = submitted(bounty(), "front")
    contract.accept(b, "author", NOW, entered=False)
    contract.submit_pr(b, "author", url("front"), SHA, NOW, entered=True)  # the author's own PR, submitted second
    contract.mark_merged(b, "R", url("front"), 9, REPO_ID, 5, NOW, winner="author", settled=False)
    assert b.winner == "author"


def test_a_bounty_of_the_v1_contract_compares_the_repository_by_the_id_the_resolver_found() -> None:
    b = submitted(bounty(repo_id=0), "w")
    contract.mark_merged(b, "R", url("w"), 9, 1234, 5, NOW, "w", settled=False)
    assert b.status is Status.COOLING_DOWN


# --- claim_payout: anyone after cooling (and a dispute's time), to the winner or the winner's split ----------

def test_anyone_triggers_the_payout_after_cooling_and_it_goes_to_the_winner() -> None:
    b = bounty()
    assert aborts(lambda: contract.claim_payout(b, NOW)) is Abort.INVALID_STATE
    cooling(b, "w")
    assert aborts(lambda: contract.claim_payout(b, NOW + 49)) is Abort.COOLING
    [(name, data)] = contract.claim_payout(b, NOW + 50)
    assert (name, data["winner"], data["amount"], b.status) == ("BountyPaid", "w", 10, Status.PAID)
    assert (data["recipients"], data["amounts"]) == (["w"], [10])
    assert aborts(lambda: contract.claim_payout(b, NOW + 51)) is Abort.INVALID_STATE


def test_the_winner_splits_the_payout_among_linked_co_authors_remainder_to_the_first_named() -> None:
    b = cooling(bounty(amount=100))
    assert aborts(lambda: contract.set_split(b, "S", ["a", "b"], [1, 1], [True, True])) is Abort.NOT_WINNER
    assert aborts(lambda: contract.set_split(b, "w", ["a", "b"], [1, 1], [True, False])) is Abort.NOT_LINKED
    for recipients, shares in ((["a", "a"], [1, 1]), ([], []), (["a"], [0]), (["a"], [1, 2]),
                               ([f"r{n}" for n in range(11)], [1] * 11)):
        assert aborts(lambda r=recipients, sh=shares: contract.set_split(b, "w", r, sh, [True] * len(r))) \
            is Abort.INVALID_SPLIT
    contract.set_split(b, "w", ["w", "co", "third"], [1, 1, 1], [True] * 3)
    [(_, data)] = contract.claim_payout(b, NOW + 50)
    assert (data["recipients"], data["amounts"]) == (["w", "co", "third"], [34, 33, 33])
    assert sum(data["amounts"]) == 100


def test_split_amounts_round_down_and_give_the_remainder_to_the_first() -> None:
    assert contract.split_amounts(10, [3, 3, 3]) == [4, 3, 3]
    assert contract.split_amounts(U64_MAX, [1_000_000, 1]) == [U64_MAX - U64_MAX // 1_000_001, U64_MAX // 1_000_001]


# --- cancel: before a PR at any time; with a live PR after the deadline once it closed, or after the grace ---

@pytest.mark.parametrize(("setup", "signer", "at", "expected"), [
    ("open", "S", NOW, None),
    ("open", "w", NOW, Abort.NOT_SPONSOR),
    ("started", "S", NOW, None),
    ("pr_submitted", "S", DEADLINE - 1, Abort.DEADLINE_NOT_REACHED),
    ("pr_submitted", "S", DEADLINE, Abort.SUBMISSION_LIVE),  # no refund that races a merge
    ("pr_submitted", "S", DEADLINE + REFUND_GRACE, None),  # no worker freezes the escrow past the grace
    ("closed", "S", NOW + 10 + REFUND_GRACE - 1, Abort.CLOSED_RECENTLY),  # its worker may dispute a cherry-pick
    ("closed", "S", NOW + 10 + REFUND_GRACE, None),
    ("junk", "S", NOW + 10, None),  # junk blocks nothing
    ("worker_dispute", "S", DEADLINE, Abort.DISPUTED),
    ("worker_dispute", "S", DEADLINE + REFUND_GRACE, None),
    ("cooling", "S", NOW + 49, Abort.INVALID_STATE),  # after a merge: dispute, never cancel
    ("paid", "S", NOW + 60, Abort.INVALID_STATE),
    ("cancelled", "S", NOW, Abort.INVALID_STATE),
])
def test_cancel(setup: str, signer: str, at: int, expected: Abort | None) -> None:
    b = bounty()
    if setup == "started":
        contract.accept(b, "w", NOW, entered=False)
    elif setup in ("pr_submitted", "closed", "junk", "worker_dispute"):
        submitted(b, "w")
        if setup == "closed":
            contract.reject_submission(b, "R", "w", Rejection.CLOSED, NOW + 10)
        elif setup == "junk":
            contract.reject_submission(b, "R", "w", Rejection.NOT_IN_REPO, NOW + 10)
        elif setup == "worker_dispute":
            contract.reject_submission(b, "R", "w", Rejection.CLOSED, NOW + 10)
            contract.dispute(b, "w", "my commits were cherry-picked", NOW + 11)
    elif setup in ("cooling", "paid"):
        cooling(b)
        if setup == "paid":
            contract.claim_payout(b, NOW + 50)
    elif setup == "cancelled":
        contract.cancel(b, "S", NOW, contribution=10)
    if expected is not None:
        before = b.to_dict()
        assert aborts(lambda: contract.cancel(b, signer, at, contribution=10)) is expected
        assert b.to_dict() == before
        return
    events = contract.cancel(b, signer, at, contribution=10)
    assert [e[0] for e in events] == ["BountyCancelled", "RefundWithdrawn"]
    assert (events[0][1]["amount"], events[1][1]) == (10, {"bounty_id": "1", "funder": "S", "amount": 10})
    assert (b.status, b.refund_total, b.refunded, b.dispute) == (Status.CANCELLED, 10, 10, None)


# --- funders and refunds -------------------------------------------------------------------------------------

def test_funders_add_to_the_pool_once_per_nonce_and_each_withdraws_their_share_of_a_refund() -> None:
    b = bounty(amount=10)
    assert aborts(lambda: contract.fund(b, "f1", 0, False, 100, True, 1)) is Abort.INVALID_AMOUNT
    assert aborts(lambda: contract.fund(b, "f1", 5, True, 100, True, 1)) is Abort.NONCE_USED
    assert aborts(lambda: contract.fund(b, "f1", 5, False, 4, True, 1)) is Abort.INSUFFICIENT_BALANCE
    [(name, data)] = contract.fund(b, "f1", 5, False, 100, True, 1)
    assert (name, data["pool"], b.pool, b.funders) == ("BountyFunded", 15, 15, 2)
    contract.fund(b, "f2", 7, False, 100, True, 1)  # nonces are per funder
    assert (b.pool, b.funders) == (22, 3)
    assert aborts(lambda: contract.withdraw_refund(b, "f1", 5)) is Abort.NO_REFUND
    contract.cancel(b, "S", NOW, contribution=10)
    assert b.refunded == 10 * 22 // 22
    [(_, got1)] = contract.withdraw_refund(b, "f1", 5)
    [(_, got2)] = contract.withdraw_refund(b, "f2", 7)
    assert (got1["amount"], got2["amount"], b.refunded, b.funders) == (5, 7, 22, 0)
    assert aborts(lambda: contract.withdraw_refund(b, "f2", 0)) is Abort.NO_REFUND
    assert aborts(lambda: contract.fund(b, "f3", 1, False, 9, True, 1)) is Abort.INVALID_STATE


def test_dust_funders_cannot_block_a_refund_and_the_last_takes_what_rounding_left() -> None:
    b = bounty(amount=1_000_003)
    for n in range(1_000):
        contract.fund(b, f"dust{n}", 1, False, 1, True, n)
    contract.cancel(b, "S", NOW, contribution=1_000_003)
    paid = [contract.withdraw_refund(b, f"dust{n}", 1)[0][1]["amount"] for n in range(1_000)]
    assert b.refunded == b.refund_total == b.pool == 1_001_003 and sum(paid) == 1_000


# --- disputes and rulings -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("setup", "signer", "reason", "at", "expected"), [
    ("cooling", "S", "the PR breaks the login page", NOW + 10, None),
    ("cooling", "w", "why not", NOW + 10, Abort.NOT_SPONSOR),
    ("cooling", "S", "", NOW + 10, Abort.INVALID_REASON),
    ("cooling", "S", "x" * 501, NOW + 10, Abort.INVALID_REASON),
    ("cooling", "S", "late", NOW + 50, Abort.DISPUTE_WINDOW_CLOSED),
    ("submitted", "w", "merged elsewhere", DEADLINE, None),
    ("submitted", "other", "me too", DEADLINE, Abort.PR_NOT_SUBMITTED),
    ("submitted", "w", "too late", DEADLINE + REFUND_GRACE, Abort.DISPUTE_WINDOW_CLOSED),
    ("open", "S", "nothing to dispute", NOW, Abort.INVALID_STATE),
])
def test_dispute(setup: str, signer: str, reason: str, at: int, expected: Abort | None) -> None:
    b = bounty()
    if setup == "cooling":
        cooling(b)
    elif setup == "submitted":
        submitted(b, "w")
    if expected is not None:
        assert aborts(lambda: contract.dispute(b, signer, reason, at)) is expected
        return
    [(name, data)] = contract.dispute(b, signer, reason, at)
    rule_by = at + 30 if setup == "cooling" else DEADLINE + REFUND_GRACE
    assert (name, data["by"], data["rule_by"]) == ("DisputeOpened", signer, rule_by)
    assert aborts(lambda: contract.dispute(b, signer, reason, at)) is Abort.DISPUTED, "one dispute at a time"


def test_a_sponsor_dispute_freezes_the_payout_until_ruled_or_until_its_time_runs_out() -> None:
    b = cooling(bounty(amount=100))
    contract.dispute(b, "S", "the feature is missing", NOW + 40)  # cooling ends at NOW + 50, the ruling's time at + 70
    assert aborts(lambda: contract.claim_payout(b, NOW + 69)) is Abort.DISPUTED
    [(_, paid)] = contract.claim_payout(b, NOW + 70)
    assert (paid["winner"], paid["amount"], b.dispute) == ("w", 100, None), "unruled: the winner is paid"


@pytest.mark.parametrize(("share", "paid", "refunded", "status"), [
    (BPS, 100, 0, Status.PAID), (0, 0, 100, Status.CANCELLED), (2_500, 25, 75, Status.PAID),
    (3_333, 33, 67, Status.PAID)])
def test_the_resolver_rules_between_the_sponsor_and_the_winner(share: int, paid: int, refunded: int,
                                                               status: Status) -> None:
    b = cooling(bounty(amount=100))
    contract.dispute(b, "S", "the feature is missing", NOW + 10)
    assert aborts(lambda: contract.rule(b, "S", share, NOW + 11, 100)) is Abort.NOT_RESOLVER
    assert aborts(lambda: contract.rule(b, "R", BPS + 1, NOW + 11, 100)) is Abort.INVALID_SHARE
    assert aborts(lambda: contract.rule(b, "R", share, NOW + 40, 100)) is Abort.DISPUTE_WINDOW_CLOSED
    events = contract.rule(b, "R", share, NOW + 11, 100)
    assert events[0] == ("DisputeRuled", {"bounty_id": "1", "claimant": "w", "share_bps": share, "paid": paid,
                                          "refunded": refunded})
    moved = {name: data for name, data in events[1:]}
    if paid:
        assert moved["BountyPaid"]["amounts"] == [paid]
    else:
        assert "BountyPaid" not in moved
    assert moved.get("RefundWithdrawn", {}).get("amount", 0) == refunded, "the sponsor's share comes back at once"
    assert b.status is status and b.dispute is None
    assert aborts(lambda: contract.rule(b, "R", share, NOW + 12, 100)) is Abort.NO_DISPUTE


def test_a_worker_whose_pr_was_closed_and_cherry_picked_is_paid_by_a_ruling() -> None:
    b = submitted(bounty(amount=100), "w")
    contract.reject_submission(b, "R", "w", Rejection.CLOSED, NOW + 5)
    contract.dispute(b, "w", "my commits were cherry-picked into main", NOW + 6)
    events = contract.rule(b, "R", BPS, NOW + 7, 100)
    assert [e[0] for e in events] == ["DisputeRuled", "BountyPaid"] and events[1][1]["recipients"] == ["w"]
    assert b.status is Status.PAID


def test_a_merge_ends_a_workers_dispute() -> None:
    b = submitted(bounty(), "w", "v")
    contract.dispute(b, "v", "mine was first", NOW)
    merge(b, "w")
    assert b.dispute is None


# --- tips, links, and the resolver acting for a linked account --------------------------------------------------

def test_a_tip_goes_to_a_linked_account_once_per_nonce() -> None:
    b = bounty()
    assert aborts(lambda: contract.tip(b, "S", "w", 0, 1, False, True, 10)) is Abort.INVALID_AMOUNT
    assert aborts(lambda: contract.tip(b, "S", "w", 5, 1, True, True, 10)) is Abort.NONCE_USED
    assert aborts(lambda: contract.tip(b, "S", "w", 5, 1, False, False, 10)) is Abort.NOT_LINKED
    assert aborts(lambda: contract.tip(b, "S", "w", 11, 1, False, True, 10)) is Abort.INSUFFICIENT_BALANCE
    [(name, data)] = contract.tip(b, "S", "w", 5, 1, False, True, 10)
    assert (name, data["to"], data["amount"], data["nonce"]) == ("Tipped", "w", 5, 1)


@pytest.mark.parametrize(("forge_user_id", "login", "proof_ok", "expected"), [
    (42, "octocat", True, None), (0, "octocat", True, Abort.INVALID_LINK), (42, "", True, Abort.INVALID_LINK),
    (42, "x" * 40, True, Abort.INVALID_LINK), (42, "octocat", False, Abort.INVALID_SIGNATURE)])
def test_link(forge_user_id: int, login: str, proof_ok: bool, expected: Abort | None) -> None:
    if expected is not None:
        assert aborts(lambda: contract.link("R", forge_user_id, login, "0xa", proof_ok)) is expected
        return
    assert contract.link("R", 42, login, "0xa", True) == [
        ("AccountLinked", {"resolver": "R", "forge_user_id": 42, "login": login, "account": "0xa"})]


def test_only_the_bounty_resolver_acts_for_a_linked_account() -> None:
    b = bounty()
    assert aborts(lambda: contract.on_behalf(b, "S", "w")) is Abort.NOT_RESOLVER
    assert aborts(lambda: contract.on_behalf(b, "R", None)) is Abort.NOT_LINKED
    assert contract.on_behalf(b, "R", "w") == "w"


# --- the registry ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("seconds", "ok"), [(1, True), (MAX_COOLING_PERIOD, True), (0, False),
                                             (MAX_COOLING_PERIOD + 1, False), (U64_MAX, False)])
def test_the_cooling_period_is_bounded_at_initialize_and_by_its_setter(seconds: int, ok: bool) -> None:
    config = ChainConfig(admin="A", resolver="R", asset="USDT", escrow="E", cooling_period=7 * DAY)
    if ok:
        contract.initialize(seconds, 7 * DAY)
        contract.set_cooling_period(config, "A", seconds)
        assert config.cooling_period == seconds
    else:
        assert aborts(lambda: contract.initialize(seconds, 7 * DAY)) is Abort.INVALID_COOLING_PERIOD
        assert aborts(lambda: contract.set_cooling_period(config, "A", seconds)) is Abort.INVALID_COOLING_PERIOD
        assert aborts(lambda: contract.initialize(7 * DAY, seconds)) is Abort.INVALID_DISPUTE_PERIOD
        assert aborts(lambda: contract.set_dispute_period(config, "A", seconds)) is Abort.INVALID_DISPUTE_PERIOD


def test_only_the_admin_changes_the_resolver_and_the_periods() -> None:
    config = ChainConfig(admin="A", resolver="R", asset="USDT", escrow="E", cooling_period=7 * DAY)
    assert aborts(lambda: contract.set_resolver(config, "R", "X")) is Abort.NOT_ADMIN
    assert aborts(lambda: contract.set_cooling_period(config, "S", 60)) is Abort.NOT_ADMIN
    assert aborts(lambda: contract.set_dispute_period(config, "S", 60)) is Abort.NOT_ADMIN
    contract.set_resolver(config, "A", "R2")
    assert config.resolver == "R2"


def test_a_bounty_keeps_the_resolver_and_periods_it_was_created_with() -> None:
    b = bounty(cooling_period=50)
    config = ChainConfig(admin="A", resolver="R", asset="USDT", escrow="E", cooling_period=50)
    contract.set_cooling_period(config, "A", 9_999)
    contract.set_resolver(config, "A", "R2")
    c = cooling(b)
    assert c.cooling_until == NOW + 50
    contract.dispute(c, "S", "no", NOW + 1)
    assert aborts(lambda: contract.rule(c, "R2", BPS, NOW + 2, 10)) is Abort.NOT_RESOLVER, "no arbiter swapped"


# --- encoding: what a transaction cannot carry -------------------------------------------------------------

@pytest.mark.parametrize("value", [-1, U64_MAX + 1, 1.5, "5", True, None])
def test_u64_arguments_outside_the_range_are_refused_before_signing(value: Any) -> None:
    with pytest.raises(Code3Error) as caught:
        contract_args.u64_arg("amount", value)
    assert caught.value.code is Code.VALIDATION and "u64" in caught.value.message
    assert contract_args.u64_arg("amount", U64_MAX) == U64_MAX and contract_args.u64_arg("amount", 0) == 0


def test_modes_by_name_or_number() -> None:
    mode_arg = contract_args.mode_arg
    assert (mode_arg("exclusive"), mode_arg("contest"), mode_arg(7)) == (0, 1, 7)
    for bad in ("solo", True, -1, 256):
        with pytest.raises(Code3Error):
            contract_args.mode_arg(bad)
    assert contract_args.parse_mode(0) is Mode.EXCLUSIVE and Mode.CONTEST.label == "contest"


# --- shared definitions --------------------------------------------------------------------------------------

def test_every_abort_code_maps_to_a_contract_error_code() -> None:
    assert set(ABORT_CODES) == set(Abort)
    assert {code.value for code, _ in ABORT_CODES.values()} <= {
        "E_NOT_FOUND", "E_EXISTS", "E_PRECONDITION", "E_INVALID_STATE", "E_COOLING", "E_UNAUTHORIZED",
        "E_IDEMPOTENT_REJECTED", "E_VALIDATION", "E_CHAIN_TX_FAILED"}
    assert ABORT_CODES[Abort.HELD_BY_OTHER][0] is Code.INVALID_STATE, "seed 001 C.1: choose another task"
    assert ABORT_CODES[Abort.INSUFFICIENT_BALANCE][0] is Code.CHAIN_TX_FAILED, "seed 001: 检查 Gas/余额"


def test_state_survives_a_round_trip_through_its_stored_form() -> None:
    b = cooling(exclusive())
    contract.dispute(b, "S", "why", NOW + 1)
    assert BountyState.from_dict(b.to_dict()) == b


def test_a_state_stored_by_the_v1_contract_reads_with_v2s_defaults() -> None:
    old = bounty().to_dict()
    for key in ("deadline", "mode", "hold_seconds", "holder", "hold_until", "resolver", "repo_id", "pool", "funders",
                "entrants", "dispute_period", "dispute", "split", "refund_total", "refunded", "last_closed_at",
                "merged_pr_number"):
        del old[key]
    old["workers"] = ["w1", "w2"]
    old["submissions"] = {"w1": {"pr_url": "u", "commit_sha": SHA}}
    state = BountyState.from_dict(old)
    assert (state.mode, state.deadline, state.hold_seconds) == (Mode.CONTEST, NOW + contract.DEFAULT_DEADLINE, 0)
    assert (state.resolver, state.repo_id, state.pool, state.funders, state.entrants) == (None, 0, 10, 1, 2)
    assert state.submissions["w1"]["state"] == SubmissionState.LIVE


def test_the_status_rules_the_mirror_and_the_board_share() -> None:
    assert contract.status_after_accept(Status.OPEN) is Status.STARTED
    assert contract.status_after_accept(Status.PR_SUBMITTED) is Status.PR_SUBMITTED
    assert contract.status_after_withdraw(Status.STARTED, 0) is Status.OPEN
    assert contract.status_after_withdraw(Status.STARTED, 1) is Status.STARTED
    assert contract.status_after_withdraw(Status.PR_SUBMITTED, 0) is Status.PR_SUBMITTED
    assert contract.state_label(Status.COOLING_DOWN, disputed=True) == "disputed"
