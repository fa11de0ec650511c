"""The contract's rules (domain.contract), one table per rule: what each allows, and the abort of each refusal.

The embedded ledger runs exactly these functions and the Move module encodes the same checks in the same
order (tests/unit/test_move_abi.py), so these tables are the contract's specification.
"""

from collections.abc import Callable
from typing import Any

import pytest

from domain import contract
from domain.contract import (
    ABORT_CODES,
    DAY,
    MAX_COOLING_PERIOD,
    MAX_DEADLINE_AHEAD,
    MAX_HOLD_SECONDS,
    MAX_WORKERS,
    U64_MAX,
    Abort,
    BountyState,
    ChainConfig,
    ContractAbort,
    Mode,
    Status,
)
from domain.errors import Code, Code3Error

NOW = 1_000
SHA = "c" * 40
HASH = "e" * 64


def bounty(mode: Mode = Mode.CONTEST, hold: int = 0, deadline: int = NOW + 500, **over: Any) -> BountyState:
    return BountyState(**{"bounty_id": "1", "sponsor": "S", "repo": "o/r", "issue_hash": HASH, "asset": "USDT",
                          "amount": 10, "created_at": NOW, "cooling_period": 50, "deadline": deadline, "mode": mode,
                          "hold_seconds": hold, **over})


def exclusive(hold: int = 100) -> BountyState:
    return bounty(Mode.EXCLUSIVE, hold)


def aborts(call: Callable[[], Any]) -> Abort:
    with pytest.raises(ContractAbort) as caught:
        call()
    return caught.value.abort


def submitted(b: BountyState, *workers: str, now: int = NOW) -> BountyState:
    for w in workers:
        contract.accept(b, w, now)
        contract.submit_pr(b, w, f"https://github.com/o/r/pull/{w}", SHA, now)
    return b


def cooling(b: BountyState | None = None, worker: str = "w", now: int = NOW) -> BountyState:
    b = submitted(b or bounty(), worker, now=now)
    contract.mark_merged(b, "R", "R", f"https://github.com/o/r/pull/{worker}", worker, now)
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
    assert data["hold_seconds"] == b.hold_seconds and isinstance(b.mode, Mode)


# --- accept: exclusive holds, contest joins ---------------------------------------------------------------

def test_exclusive_the_first_worker_holds_the_task_and_a_second_is_refused_until_the_hold_ends() -> None:
    b = exclusive(hold=100)
    [(name, data)] = contract.accept(b, "w1", NOW)
    assert (name, data["hold_until"]) == ("BountyAccepted", NOW + 100)
    assert (b.status, b.workers, b.holder, b.hold_until) == (Status.STARTED, ["w1"], "w1", NOW + 100)
    assert contract.accept(b, "w1", NOW + 10) == [], "the holder accepting again changes nothing"
    assert aborts(lambda: contract.accept(b, "w2", NOW + 99)) is Abort.HELD_BY_OTHER
    assert b.held_by_other("w2", NOW + 99) and not b.held_by_other("w1", NOW + 99)
    assert not b.held_by_other("w2", NOW + 100), "the hold ends at hold_until"
    contract.accept(b, "w2", NOW + 100)  # takes over the expired hold
    assert (b.workers, b.holder, b.hold_until) == (["w2"], "w2", NOW + 200)


def test_exclusive_an_expired_holder_renews_by_accepting_again() -> None:
    b = exclusive(hold=100)
    contract.accept(b, "w1", NOW)
    [(_, data)] = contract.accept(b, "w1", NOW + 150)
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
        assert contract.accept(b, "w", NOW)[0][1]["hold_until"] == 0
    else:
        assert aborts(lambda: contract.accept(b, "w", NOW)) is expected


def test_the_sponsor_cannot_accept_and_a_contest_takes_a_bounded_number_of_workers() -> None:
    b = bounty()
    assert aborts(lambda: contract.accept(b, "S", NOW)) is Abort.SPONSOR_CANNOT_ACCEPT
    for n in range(MAX_WORKERS):
        contract.accept(b, f"w{n}", NOW)
    assert contract.accept(b, "w0", NOW) == []
    assert aborts(lambda: contract.accept(b, "one-too-many", NOW)) is Abort.TOO_MANY_WORKERS


# --- withdraw ---------------------------------------------------------------------------------------------

def test_withdraw_releases_the_hold_and_reopens_the_task() -> None:
    b = exclusive()
    assert aborts(lambda: contract.withdraw(b, "w1")) is Abort.INVALID_STATE
    contract.accept(b, "w1", NOW)
    assert aborts(lambda: contract.withdraw(b, "w2")) is Abort.NOT_ACCEPTED
    assert contract.withdraw(b, "w1") == [("TaskWithdrawn", {"bounty_id": "1", "worker": "w1"})]
    assert (b.status, b.workers, b.holder, b.hold_until) == (Status.OPEN, [], None, None)
    contract.accept(b, "w2", NOW + 1)  # at once: nobody holds it
    assert b.holder == "w2"


def test_a_contest_worker_leaves_but_not_after_submitting() -> None:
    b = submitted(bounty(), "w1")
    contract.accept(b, "w2", NOW)
    assert aborts(lambda: contract.withdraw(b, "w1")) is Abort.INVALID_STATE
    contract.withdraw(b, "w2")
    assert (b.status, b.workers) == (Status.PR_SUBMITTED, ["w1"])


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
    contract.accept(b, "w", NOW)
    if expected is None:
        assert contract.submit_pr(b, "w", pr_url, sha, NOW)[0][0] == "PRSubmitted"
    else:
        assert aborts(lambda: contract.submit_pr(b, "w", pr_url, sha, NOW)) is expected


def test_a_pr_url_is_unique_per_bounty_and_tied_to_its_submitter() -> None:
    b = bounty()
    assert aborts(lambda: contract.submit_pr(b, "w1", "u", SHA, NOW)) is Abort.INVALID_STATE
    contract.accept(b, "w1", NOW)
    contract.accept(b, "w2", NOW)
    assert aborts(lambda: contract.submit_pr(b, "w3", "u", SHA, NOW)) is Abort.NOT_ACCEPTED
    contract.submit_pr(b, "w1", "u", SHA, NOW)
    assert contract.submit_pr(b, "w1", "u", SHA, NOW) == [], "the same PR again changes nothing"
    assert aborts(lambda: contract.submit_pr(b, "w1", "other", SHA, NOW)) is Abort.PR_ALREADY_SUBMITTED
    assert aborts(lambda: contract.submit_pr(b, "w2", "u", SHA, NOW)) is Abort.PR_URL_TAKEN
    assert contract.submitter_of(b, "u") == "w1"


def test_exclusive_only_the_holder_submits_while_the_hold_runs() -> None:
    b = exclusive(hold=100)
    contract.accept(b, "w1", NOW)
    assert aborts(lambda: contract.submit_pr(b, "w2", "u", SHA, NOW)) is Abort.NOT_ACCEPTED
    assert aborts(lambda: contract.submit_pr(b, "w1", "u", SHA, NOW + 100)) is Abort.HOLD_EXPIRED
    contract.accept(b, "w1", NOW + 100)  # renewed
    contract.submit_pr(b, "w1", "u", SHA, NOW + 150)
    assert b.status is Status.PR_SUBMITTED
    assert contract.submit_pr(b, "w1", "u", SHA, NOW + 10_000) == [], "a repeat after the hold changes nothing"


# --- mark_merged: the resolver names the winner ------------------------------------------------------------

@pytest.mark.parametrize(("signer", "resolver", "pr", "winner", "expected"), [
    ("R", "R", "https://github.com/o/r/pull/w2", "w2", None),
    ("S", "R", "https://github.com/o/r/pull/w2", "w2", Abort.NOT_RESOLVER),  # not the sponsor's to report
    ("w2", "R", "https://github.com/o/r/pull/w2", "w2", Abort.NOT_RESOLVER),
    ("R", None, "https://github.com/o/r/pull/w2", "w2", Abort.NOT_RESOLVER),  # no resolver: nobody
    ("R", "R", "https://github.com/o/r/pull/nope", "w2", Abort.PR_NOT_SUBMITTED),
    ("R", "R", "https://github.com/o/r/pull/w2", "w1", Abort.WRONG_WINNER),
])
def test_mark_merged(signer: str, resolver: str | None, pr: str, winner: str, expected: Abort | None) -> None:
    b = submitted(bounty(), "w1", "w2")
    if expected is not None:
        assert aborts(lambda: contract.mark_merged(b, signer, resolver, pr, winner, NOW + 7)) is expected
        assert b.status is Status.PR_SUBMITTED
        return
    events = contract.mark_merged(b, signer, resolver, pr, winner, NOW + 7)
    assert [e[0] for e in events] == ["BountyMerged", "CoolingStarted"]
    assert (b.winner, b.merged_pr, b.cooling_until, b.status) == ("w2", pr, NOW + 57, Status.COOLING_DOWN)
    assert aborts(lambda: contract.mark_merged(b, "R", "R", pr, "w2", NOW + 8)) is Abort.INVALID_STATE


# --- claim_payout: anyone after cooling, to the winner -----------------------------------------------------

def test_anyone_triggers_the_payout_after_cooling_and_it_goes_to_the_winner() -> None:
    b = bounty()
    assert aborts(lambda: contract.claim_payout(b, NOW)) is Abort.INVALID_STATE
    cooling(b, "w")
    assert aborts(lambda: contract.claim_payout(b, NOW + 49)) is Abort.COOLING
    [(name, data)] = contract.claim_payout(b, NOW + 50)
    assert (name, data["winner"], data["amount"], b.status) == ("BountyPaid", "w", 10, Status.PAID)
    assert aborts(lambda: contract.claim_payout(b, NOW + 51)) is Abort.INVALID_STATE


# --- cancel: refund before a PR; after the deadline with a PR; a dispute before cooling_until ---------------

@pytest.mark.parametrize(("setup", "signer", "at", "expected"), [
    ("open", "S", NOW, False),
    ("open", "w", NOW, Abort.NOT_SPONSOR),
    ("started", "S", NOW, False),
    ("pr_submitted", "S", NOW + 499, Abort.DEADLINE_NOT_REACHED),
    ("pr_submitted", "S", NOW + 500, False),  # no worker can freeze the escrow past the deadline
    ("cooling", "S", NOW + 49, True),  # a dispute
    ("cooling", "S", NOW + 50, Abort.DISPUTE_WINDOW_CLOSED),  # from then on the payout is due
    ("cooling", "w", NOW + 1, Abort.NOT_SPONSOR),
    ("paid", "S", NOW + 60, Abort.INVALID_STATE),
    ("cancelled", "S", NOW, Abort.INVALID_STATE),
])
def test_cancel(setup: str, signer: str, at: int, expected: bool | Abort) -> None:
    b = bounty()
    if setup == "started":
        contract.accept(b, "w", NOW)
    elif setup == "pr_submitted":
        submitted(b, "w")
    elif setup in ("cooling", "paid"):
        cooling(b)
        if setup == "paid":
            contract.claim_payout(b, NOW + 50)
    elif setup == "cancelled":
        contract.cancel(b, "S", NOW)
    if isinstance(expected, Abort):
        before = b.status
        assert aborts(lambda: contract.cancel(b, signer, at)) is expected and b.status is before
        return
    [(name, data)] = contract.cancel(b, signer, at)
    assert (name, data["refund_to"], data["amount"], data["disputed"]) == ("BountyCancelled", "S", 10, expected)
    assert b.status is Status.CANCELLED


# --- the registry ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("seconds", "ok"), [(1, True), (MAX_COOLING_PERIOD, True), (0, False),
                                             (MAX_COOLING_PERIOD + 1, False), (U64_MAX, False)])
def test_the_cooling_period_is_bounded_at_initialize_and_by_its_setter(seconds: int, ok: bool) -> None:
    config = ChainConfig(admin="A", resolver="R", asset="USDT", escrow="E", cooling_period=7 * DAY)
    if ok:
        contract.initialize(seconds)
        contract.set_cooling_period(config, "A", seconds)
        assert config.cooling_period == seconds
    else:
        assert aborts(lambda: contract.initialize(seconds)) is Abort.INVALID_COOLING_PERIOD
        assert aborts(lambda: contract.set_cooling_period(config, "A", seconds)) is Abort.INVALID_COOLING_PERIOD


def test_only_the_admin_changes_the_resolver_and_the_cooling_period() -> None:
    config = ChainConfig(admin="A", resolver="R", asset="USDT", escrow="E", cooling_period=7 * DAY)
    assert aborts(lambda: contract.set_resolver(config, "R", "X")) is Abort.NOT_ADMIN
    assert aborts(lambda: contract.set_cooling_period(config, "S", 60)) is Abort.NOT_ADMIN
    contract.set_resolver(config, "A", "R2")
    assert config.resolver == "R2"


def test_a_bounty_keeps_the_cooling_period_it_was_created_with() -> None:
    b = bounty(cooling_period=50)
    config = ChainConfig(admin="A", resolver="R", asset="USDT", escrow="E", cooling_period=50)
    contract.set_cooling_period(config, "A", 9_999)
    assert cooling(b).cooling_until == NOW + 50


# --- encoding: what a transaction cannot carry -------------------------------------------------------------

@pytest.mark.parametrize("value", [-1, U64_MAX + 1, 1.5, "5", True, None])
def test_u64_arguments_outside_the_range_are_refused_before_signing(value: Any) -> None:
    with pytest.raises(Code3Error) as caught:
        contract.u64_arg("amount", value)
    assert caught.value.code is Code.VALIDATION and "u64" in caught.value.message
    assert contract.u64_arg("amount", U64_MAX) == U64_MAX and contract.u64_arg("amount", 0) == 0


def test_modes_by_name_or_number() -> None:
    assert (contract.mode_arg("exclusive"), contract.mode_arg("contest"), contract.mode_arg(7)) == (0, 1, 7)
    for bad in ("solo", True, -1, 256):
        with pytest.raises(Code3Error):
            contract.mode_arg(bad)
    assert Mode.parse(0) is Mode.EXCLUSIVE and Mode.CONTEST.label == "contest"


# --- shared definitions --------------------------------------------------------------------------------------

def test_every_abort_code_maps_to_a_contract_error_code() -> None:
    assert set(ABORT_CODES) == set(Abort)
    assert {code.value for code, _ in ABORT_CODES.values()} <= {
        "E_NOT_FOUND", "E_EXISTS", "E_PRECONDITION", "E_INVALID_STATE", "E_COOLING", "E_UNAUTHORIZED",
        "E_IDEMPOTENT_REJECTED", "E_VALIDATION", "E_CHAIN_TX_FAILED"}
    assert ABORT_CODES[Abort.HELD_BY_OTHER][0] is Code.INVALID_STATE, "seed 001 C.1: choose another task"
    assert ABORT_CODES[Abort.INSUFFICIENT_BALANCE][0] is Code.CHAIN_TX_FAILED, "seed 001: 检查 Gas/余额"


def test_state_survives_a_round_trip_through_its_stored_form() -> None:
    b = exclusive()
    contract.accept(b, "w", NOW)
    assert BountyState.from_dict(b.to_dict()) == b


def test_a_state_stored_before_modes_and_deadlines_reads_as_a_contest_with_the_default_deadline() -> None:
    old = bounty().to_dict()
    for key in ("deadline", "mode", "hold_seconds", "holder", "hold_until"):
        del old[key]
    state = BountyState.from_dict(old)
    assert (state.mode, state.deadline, state.hold_seconds) == (Mode.CONTEST, NOW + contract.DEFAULT_DEADLINE, 0)


def test_the_status_rules_the_mirror_and_the_board_share() -> None:
    assert contract.status_after_accept(Status.OPEN) is Status.STARTED
    assert contract.status_after_accept(Status.PR_SUBMITTED) is Status.PR_SUBMITTED
    assert contract.status_after_withdraw(Status.STARTED, []) is Status.OPEN
    assert contract.status_after_withdraw(Status.STARTED, ["w"]) is Status.STARTED
    assert contract.status_after_withdraw(Status.PR_SUBMITTED, []) is Status.PR_SUBMITTED
