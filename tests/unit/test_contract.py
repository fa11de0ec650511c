import pytest

from domain import contract
from domain.contract import ABORT_CODES, Abort, BountyState, ContractAbort, Status


def bounty() -> BountyState:
    return BountyState(bounty_id="1", sponsor="S", repo="o/r", issue_hash="h", asset="USDT", amount=10,
                       created_at=100, cooling_period=50)


def aborts(call) -> Abort:
    with pytest.raises(ContractAbort) as caught:
        call()
    return caught.value.abort


def test_several_workers_accept_and_the_first_merged_pr_wins() -> None:
    b = bounty()
    contract.accept(b, "w1")
    contract.accept(b, "w2")
    assert b.status is Status.STARTED and b.workers == ["w1", "w2"]
    contract.submit_pr(b, "w1", "u1", "a" * 7)
    contract.submit_pr(b, "w2", "u2", "b" * 7)
    events = contract.mark_merged(b, "S", "u2", now=200)
    assert [e[0] for e in events] == ["BountyMerged", "CoolingStarted"]
    assert (b.winner, b.cooling_until, b.status) == ("w2", 250, Status.COOLING_DOWN)
    assert aborts(lambda: contract.mark_merged(b, "S", "u1", now=201)) is Abort.INVALID_STATE
    assert aborts(lambda: contract.claim_payout(b, "w2", now=249)) is Abort.COOLING
    assert aborts(lambda: contract.claim_payout(b, "w1", now=250)) is Abort.NOT_WINNER
    assert contract.claim_payout(b, "w2", now=250)[0][0] == "BountyPaid" and b.status is Status.PAID


def test_rules_refuse_out_of_order_and_foreign_steps() -> None:
    b = bounty()
    assert aborts(lambda: contract.accept(b, "S")) is Abort.SPONSOR_CANNOT_ACCEPT
    assert aborts(lambda: contract.submit_pr(b, "w1", "u", "c" * 7)) is Abort.INVALID_STATE
    contract.accept(b, "w1")
    assert contract.accept(b, "w1") == [], "accepting twice emits nothing"
    assert aborts(lambda: contract.submit_pr(b, "w2", "u", "c" * 7)) is Abort.NOT_ACCEPTED
    contract.submit_pr(b, "w1", "u", "c" * 7)
    assert contract.submit_pr(b, "w1", "u", "c" * 7) == []
    assert aborts(lambda: contract.submit_pr(b, "w1", "other", "c" * 7)) is Abort.PR_ALREADY_SUBMITTED
    assert aborts(lambda: contract.mark_merged(b, "w1", "u", 1)) is Abort.NOT_SPONSOR
    assert aborts(lambda: contract.mark_merged(b, "S", "nope", 1)) is Abort.PR_NOT_SUBMITTED
    assert aborts(lambda: contract.cancel(b, "S")) is Abort.INVALID_STATE


def test_sponsor_may_cancel_before_work_is_submitted_or_dispute_during_cooling() -> None:
    b = bounty()
    assert contract.cancel(b, "S")[0][1]["disputed"] is False and b.status is Status.CANCELLED
    b = bounty()
    contract.accept(b, "w")
    contract.submit_pr(b, "w", "u", "d" * 7)
    contract.mark_merged(b, "S", "u", 1)
    assert aborts(lambda: contract.cancel(b, "w")) is Abort.NOT_SPONSOR
    assert contract.cancel(b, "S")[0][1]["disputed"] is True


def test_every_abort_code_maps_to_a_contract_error_code() -> None:
    assert set(ABORT_CODES) == set(Abort)
    assert {code.value for code, _ in ABORT_CODES.values()} <= {
        "E_NOT_FOUND", "E_EXISTS", "E_PRECONDITION", "E_INVALID_STATE", "E_COOLING", "E_UNAUTHORIZED",
        "E_IDEMPOTENT_REJECTED", "E_VALIDATION"}


def test_state_survives_a_round_trip_through_its_stored_form() -> None:
    b = bounty()
    contract.accept(b, "w")
    assert BountyState.from_dict(b.to_dict()) == b
