import json
import sqlite3
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from adapters.keystore import Keystore, public_key_of, sign
from adapters.ledger_tables import ESCROW
from adapters.local_ledger import MAX_CLOCK, SIGNING_PREFIX, LocalLedger, TransactionRejected
from adapters.ports import Signer
from domain.bounties.contract import DEFAULT_DEADLINE, MAX_COOLING_PERIOD, REFUND_GRACE, U64_MAX, Abort, Mode, Status
from domain.bounties.links import link_message
from domain.canonical import canonical_json
from domain.errors import Code, Code3Error

H1, H2 = "1" * 64, "2" * 64
SHA = "f" * 40


@pytest.fixture
def keys(tmp_path: Path) -> Keystore:
    return Keystore(tmp_path / "keys")


@pytest.fixture
def people(keys: Keystore) -> dict[str, Signer]:
    return {name: keys.new(name) for name in ("alice", "bob", "carol", "resolver")}


@pytest.fixture
def ledger(tmp_path: Path, people: dict[str, Signer]) -> LocalLedger:
    found = LocalLedger(tmp_path / "l.sqlite", cooling_period=60, resolver=people["resolver"].address)
    found.mint(people["alice"].address, "USDT", 1_000)
    return found


def test_a_transaction_signed_by_another_key_is_rejected(tmp_path: Path, keys: Keystore) -> None:
    ledger = LocalLedger(tmp_path / "l.sqlite")
    alice, mallory = keys.new("alice"), keys.new("mallory")
    raw = canonical_json({"sender": alice.address, "sequence_number": 0, "function": "code3::bounty::accept_bounty",
                          "args": {"bounty_id": "1"}}).encode()
    forged = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(mallory.private_key_hex))
    with pytest.raises(TransactionRejected, match="INVALID_AUTH_KEY"):
        ledger.submit(raw, forged.sign(SIGNING_PREFIX + raw), forged.public_key().public_bytes_raw())
    with pytest.raises(TransactionRejected, match="INVALID_SIGNATURE"):
        ledger.submit(raw, b"\0" * 64, bytes.fromhex(json.loads((tmp_path / "keys/alice.key").read_text())
                                                      ["public_key"]))


def test_ledger_state_escrow_and_clock_survive_a_restart(tmp_path: Path, keys: Keystore) -> None:
    ledger = LocalLedger(tmp_path / "l.sqlite", cooling_period=60)
    alice = keys.new("alice")
    ledger.mint(alice.address, "USDT", 100)
    receipt = ledger.create_bounty(alice, "o/r", H1, "USDT", 40)
    assert receipt.success and receipt.events[0].type == "BountyCreated"
    ledger.advance(3600)
    again = LocalLedger(tmp_path / "l.sqlite", cooling_period=120)
    assert again.balance(alice.address, "USDT") == 60 and again.balance(ESCROW, "USDT") == 40
    assert again.get_bounty("1").cooling_period == 60 and again.cooling_period == 60, "the first value stays"
    assert again.now() >= ledger.now() - 1 >= receipt.version
    assert again.sequence_number(alice.address) == 1
    assert again.transaction(receipt.tx_hash)["success"] is True


def test_an_aborted_transaction_is_recorded_without_effects(tmp_path: Path, keys: Keystore) -> None:
    ledger = LocalLedger(tmp_path / "l.sqlite")
    alice = keys.new("alice")
    receipt = ledger.create_bounty(alice, "o/r", H1, "USDT", 40)  # no funds
    assert not receipt.success and receipt.abort_code == Abort.INSUFFICIENT_BALANCE and receipt.events == []
    assert ledger.list_bounties() == [] and ledger.sequence_number(alice.address) == 1
    ledger.mint(alice.address, "USDT", 100)
    assert ledger.create_bounty(alice, "o/r", H1, "USDT", 40).success
    assert ledger.create_bounty(alice, "o/r", H1, "USDT", 40).abort_code == Abort.ISSUE_HASH_EXISTS


def test_issue_hashes_are_keyed_by_sponsor_so_nobody_squats_another_sponsors_hash(
        ledger: LocalLedger, people: dict[str, Signer]) -> None:
    alice, bob = people["alice"], people["bob"]
    ledger.mint(bob.address, "USDT", 5)
    squat = ledger.create_bounty(bob, "o/r", H1, "USDT", 5)  # bob takes alice's hash first
    assert squat.success
    own = ledger.create_bounty(alice, "o/r", H1, "USDT", 400)
    assert own.success, "alice's publish is not blocked by bob's bounty"
    assert ledger.find_bounty_by_issue_hash(alice.address, H1).amount == 400
    assert ledger.find_bounty_by_issue_hash(bob.address, H1).amount == 5
    assert ledger.find_bounty_by_issue_hash(people["carol"].address, H1) is None


def link(ledger: LocalLedger, resolver: Signer, worker: Signer, forge_user_id: int) -> None:
    """The worker's statement, signed by its key, recorded by the resolver (who read it on the forge)."""
    receipt = ledger.link_account(resolver, forge_user_id, worker.name, worker.address,
                                  public_key_of(worker.private_key_hex), sign(worker, link_message(forge_user_id,
                                                                                                   worker.address)))
    assert receipt.success, receipt.vm_status


def test_events_since_never_cuts_a_transaction_in_half(ledger: LocalLedger, people: dict[str, Signer]) -> None:
    alice, bob = people["alice"], people["bob"]
    ledger.create_bounty(alice, "o/r", H1, "USDT", 40, repo_id=7)
    ledger.accept_bounty(bob, "1")
    ledger.submit_pr(bob, "1", "u", SHA)
    link(ledger, people["resolver"], bob, 11)
    merged = ledger.mark_merged(people["resolver"], "1", "u", 11, 7, 1)  # two events in one transaction
    assert merged.success, merged.vm_status
    before = merged.version - 1
    page = ledger.events_since(before, limit=1)
    assert [e.type for e in page] == ["BountyMerged", "CoolingStarted"]
    assert ledger.events_since(page[-1].version) == []


def test_only_the_resolver_reports_merges_and_anyone_triggers_the_payout(
        ledger: LocalLedger, people: dict[str, Signer]) -> None:
    alice, bob, carol, resolver = (people[n] for n in ("alice", "bob", "carol", "resolver"))
    ledger.create_bounty(alice, "o/r", H1, "USDT", 400, repo_id=7)
    ledger.accept_bounty(bob, "1")
    ledger.submit_pr(bob, "1", "u", SHA)
    link(ledger, resolver, carol, 12)
    assert ledger.mark_merged(alice, "1", "u", 11, 7, 1).abort_code == Abort.NOT_RESOLVER
    assert ledger.mark_merged(resolver, "1", "u", 11, 7, 1).abort_code == Abort.NOT_LINKED
    assert ledger.mark_merged(resolver, "1", "u", 12, 7, 1).abort_code == Abort.PR_NOT_SUBMITTED, "carol wrote no PR"
    assert ledger.mark_merged(resolver, "1", "u", 11, 8, 1).abort_code == Abort.WRONG_REPO
    link(ledger, resolver, bob, 11)
    assert ledger.mark_merged(resolver, "1", "u", 11, 7, 1).success
    ledger.advance(60)
    paid = ledger.claim_payout(carol, "1")
    assert paid.success and paid.events[0].data["winner"] == bob.address
    assert ledger.balance(bob.address, "USDT") == 400 and ledger.balance(carol.address, "USDT") == 0
    assert ledger.balance(ESCROW, "USDT") == 0


def test_a_submitted_pr_freezes_nothing_past_the_deadlines_grace(ledger: LocalLedger,
                                                                  people: dict[str, Signer]) -> None:
    alice, bob = people["alice"], people["bob"]
    deadline = ledger.now() + 500
    ledger.create_bounty(alice, "o/r", H1, "USDT", 400, deadline=deadline)
    ledger.accept_bounty(bob, "1")
    ledger.submit_pr(bob, "1", "https://forge/o/r/pull/1", SHA)
    assert ledger.cancel_bounty(alice, "1").abort_code == Abort.DEADLINE_NOT_REACHED
    ledger.advance(500)
    assert ledger.cancel_bounty(alice, "1").abort_code == Abort.SUBMISSION_LIVE, "no refund racing a merge"
    ledger.advance(REFUND_GRACE)
    refund = ledger.cancel_bounty(alice, "1")
    assert refund.success and ledger.balance(alice.address, "USDT") == 1_000


def test_junk_rejected_by_the_resolver_blocks_no_refund(ledger: LocalLedger, people: dict[str, Signer]) -> None:
    alice, bob, resolver = people["alice"], people["bob"], people["resolver"]
    ledger.create_bounty(alice, "o/r", H1, "USDT", 400, deadline=ledger.now() + 500)
    ledger.accept_bounty(bob, "1")
    ledger.submit_pr(bob, "1", "junk", SHA)
    assert ledger.reject_submission(bob, "1", bob.address, 1).abort_code == Abort.NOT_RESOLVER
    assert ledger.reject_submission(resolver, "1", bob.address, 1).success
    assert ledger.cancel_bounty(alice, "1").success and ledger.balance(alice.address, "USDT") == 1_000


def test_after_a_merge_the_sponsor_disputes_and_never_cancels(ledger: LocalLedger, people: dict[str, Signer]) -> None:
    alice, bob, resolver = people["alice"], people["bob"], people["resolver"]
    link(ledger, resolver, bob, 11)
    for n, issue_hash in enumerate((H1, H2), start=1):
        ledger.create_bounty(alice, "o/r", issue_hash, "USDT", 100, repo_id=7)
        ledger.accept_bounty(bob, str(n))
        ledger.submit_pr(bob, str(n), f"u{n}", SHA)
        assert ledger.mark_merged(resolver, str(n), f"u{n}", 11, 7, n).success
    assert ledger.cancel_bounty(alice, "1").abort_code == Abort.INVALID_STATE
    assert ledger.dispute(alice, "1", "the feature is missing").events[0].data["by"] == alice.address
    ledger.advance(60)
    assert ledger.dispute(alice, "2", "too late").abort_code == Abort.DISPUTE_WINDOW_CLOSED
    assert ledger.claim_payout(bob, "1").abort_code == Abort.DISPUTED
    ruled = ledger.rule(resolver, "1", 2_500)
    assert [e.type for e in ruled.events] == ["DisputeRuled", "BountyPaid", "BountyCancelled", "RefundWithdrawn"]
    assert ledger.balance(bob.address, "USDT") == 25 and ledger.balance(alice.address, "USDT") == 875
    assert ledger.claim_payout(bob, "2").success and ledger.balance(ESCROW, "USDT") == 0


def test_exclusive_hold_expiry_and_withdraw(ledger: LocalLedger, people: dict[str, Signer]) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    assert ledger.create_bounty(alice, "o/r", H1, "USDT", 100, mode="exclusive", hold_seconds=30).success
    assert ledger.accept_bounty(bob, "1").events[0].data["hold_until"] == ledger.now() + 30
    assert ledger.accept_bounty(carol, "1").abort_code == Abort.HELD_BY_OTHER
    assert ledger.withdraw_task(carol, "1").abort_code == Abort.NOT_ACCEPTED
    assert ledger.withdraw_task(bob, "1").success
    assert ledger.get_bounty("1").status is Status.OPEN
    assert ledger.accept_bounty(carol, "1").success
    ledger.advance(30)
    assert ledger.submit_pr(carol, "1", "u", SHA).abort_code == Abort.HOLD_EXPIRED
    assert ledger.accept_bounty(bob, "1").success, "an expired hold can be taken over"
    state = ledger.get_bounty("1")
    assert (state.mode, state.holder, state.entrants) == (Mode.EXCLUSIVE, bob.address, 1)


def test_create_bounty_defaults_to_a_contest_with_a_thirty_day_deadline(ledger: LocalLedger,
                                                                       people: dict[str, Signer]) -> None:
    receipt = ledger.create_bounty(people["alice"], "o/r", H1, "USDT", 10)
    data = receipt.events[0].data
    assert (data["mode"], data["hold_seconds"]) == (int(Mode.CONTEST), 0)
    assert data["deadline"] == data["created_at"] + DEFAULT_DEADLINE


# --- integers only -------------------------------------------------------------------------------------

def test_the_faucet_stores_integers_beyond_sqlite_s_signed_range(ledger: LocalLedger,
                                                                 people: dict[str, Signer]) -> None:
    bob = people["bob"]
    ledger.mint(bob.address, "BIG", 2**62)
    assert ledger.mint(bob.address, "BIG", 2**62) == 2**63  # was 9.223372036854776e+18, a float
    balance = ledger.balance(bob.address, "BIG")
    assert type(balance) is int and balance == 2**63
    ledger.mint(bob.address, "BIG", U64_MAX - 2**63)
    assert ledger.balance(bob.address, "BIG") == U64_MAX
    with pytest.raises(Code3Error) as caught:
        ledger.mint(people["carol"].address, "BIG", 1)  # the supply of an asset is a u64 too
    assert caught.value.code is Code.VALIDATION


@pytest.mark.parametrize("amount", [0, -5, U64_MAX + 1, 1.5, "7", True])
def test_the_faucet_refuses_what_is_not_a_u64_amount(ledger: LocalLedger, people: dict[str, Signer],
                                                      amount: object) -> None:
    with pytest.raises(Code3Error) as caught:
        ledger.mint(people["bob"].address, "USDT", amount)  # type: ignore[arg-type]
    assert caught.value.code is Code.VALIDATION and "amount" in caught.value.hint


@pytest.mark.parametrize(("field", "value"), [("amount", U64_MAX + 1), ("amount", -1), ("deadline", -1),
                                              ("hold_seconds", 2**64), ("mode", "solo")])
def test_arguments_a_transaction_cannot_carry_are_refused_before_signing(
        ledger: LocalLedger, people: dict[str, Signer], field: str, value: object) -> None:
    alice = people["alice"]
    args: dict[str, object] = {"amount": 10, "deadline": None, "mode": "contest", "hold_seconds": 0, field: value}
    with pytest.raises(Code3Error) as caught:
        ledger.create_bounty(alice, "o/r", H1, "USDT", **args)  # type: ignore[arg-type]
    assert caught.value.code is Code.VALIDATION
    assert ledger.sequence_number(alice.address) == 0, "nothing was signed or sent"


def test_an_amount_above_the_signed_range_goes_into_escrow_and_back_exactly(
        ledger: LocalLedger, people: dict[str, Signer]) -> None:
    bob = people["bob"]
    ledger.mint(bob.address, "BIG", U64_MAX)
    assert ledger.create_bounty(bob, "o/r", H1, "BIG", U64_MAX).success
    assert ledger.balance(ESCROW, "BIG") == U64_MAX and ledger.get_bounty("1").amount == U64_MAX
    assert ledger.cancel_bounty(bob, "1").success and ledger.balance(bob.address, "BIG") == U64_MAX


# --- time ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seconds", [-1, 1.5, "60", True])
def test_the_clock_never_moves_back(ledger: LocalLedger, seconds: object) -> None:
    before = ledger.now()
    with pytest.raises(Code3Error) as caught:
        ledger.advance(seconds)  # type: ignore[arg-type]
    assert caught.value.code is Code.VALIDATION and ledger.now() >= before


def test_the_clock_is_bounded_so_no_deadline_or_cooling_overflows(ledger: LocalLedger) -> None:
    with pytest.raises(Code3Error):
        ledger.advance(MAX_CLOCK)
    assert ledger.advance(0) >= ledger.now() - 1


def test_the_clock_never_reads_earlier_than_a_recorded_transaction(ledger: LocalLedger,
                                                                   people: dict[str, Signer]) -> None:
    ledger.advance(1_000)
    stamp = ledger.transaction(ledger.create_bounty(people["alice"], "o/r", H1, "USDT", 10).tx_hash)["timestamp"]
    with ledger.db.transaction() as db:  # as if the offset were lost or the wall clock went back
        db.execute("UPDATE meta SET value = '0' WHERE key = 'clock_offset'")
    assert ledger.now() >= stamp


# --- the registry --------------------------------------------------------------------------------------

def test_resolver_and_admin_are_recorded_at_first_initialisation(tmp_path: Path, people: dict[str, Signer]) -> None:
    path = tmp_path / "r.sqlite"
    first = LocalLedger(path)
    assert (first.config().resolver, first.config().admin) == (None, None)
    LocalLedger(path, resolver=people["resolver"].address)
    again = LocalLedger(path, resolver=people["bob"].address, admin=people["bob"].address)
    config = again.config()
    assert (config.resolver, config.admin) == (people["resolver"].address, people["resolver"].address)
    assert (config.escrow, config.asset) == (ESCROW, "USDT")


@pytest.mark.parametrize("seconds", [0, MAX_COOLING_PERIOD + 1])
def test_the_cooling_period_is_bounded_at_initialize(tmp_path: Path, seconds: int) -> None:
    with pytest.raises(Code3Error) as caught:
        LocalLedger(tmp_path / "c.sqlite", cooling_period=seconds)
    assert caught.value.code is Code.VALIDATION


def test_the_admin_sets_the_resolver_and_the_cooling_period(ledger: LocalLedger, people: dict[str, Signer]) -> None:
    admin, bob = people["resolver"], people["bob"]
    assert ledger.set_resolver(bob, bob.address).abort_code == Abort.NOT_ADMIN
    assert ledger.set_cooling_period(admin, MAX_COOLING_PERIOD + 1).abort_code == Abort.INVALID_COOLING_PERIOD
    assert ledger.set_cooling_period(admin, 90).success and ledger.cooling_period == 90
    assert ledger.set_resolver(admin, bob.address).success and ledger.config().resolver == bob.address


def test_a_ledger_file_from_before_u64_amounts_and_per_sponsor_hashes_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    old = {"bounty_id": "1", "sponsor": "0xa", "repo": "o/r", "issue_hash": "h", "asset": "USDT", "amount": 7,
           "created_at": 100, "cooling_period": 60, "status": 1, "workers": ["0xb"], "submissions": {},
           "winner": None, "merged_pr": None, "merged_at": None, "cooling_until": None}
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            INSERT INTO meta VALUES ('clock_offset', '5'), ('cooling_period', '60');
            CREATE TABLE balances (address TEXT NOT NULL, asset TEXT NOT NULL, amount INTEGER NOT NULL,
                PRIMARY KEY (address, asset));
            INSERT INTO balances VALUES ('0xa', 'USDT', 93), ('0xc0de3', 'USDT', 7);
            CREATE TABLE bounties (bounty_id INTEGER PRIMARY KEY, issue_hash TEXT NOT NULL UNIQUE, state TEXT NOT NULL);
        """)
        db.execute("INSERT INTO bounties VALUES (1, 'h', ?)", (json.dumps(old),))
    path.chmod(0o600)  # as Code3 wrote it (owner-only since issue 9; a looser one is refused)
    ledger = LocalLedger(path)
    assert ledger.balance("0xa", "USDT") == 93 and ledger.balance(ESCROW, "USDT") == 7
    state = ledger.get_bounty("1")
    assert (state.mode, state.deadline, state.entrants) == (Mode.CONTEST, 100 + DEFAULT_DEADLINE, 1)
    assert ledger.is_entrant("1", "0xb") and ledger.contribution("1", "0xa") == 7, "v1's workers and sponsor carry on"
    assert (state.resolver, state.pool, state.funders) == (None, 7, 1)
    assert ledger.find_bounty_by_issue_hash("0xa", "h") == state


def test_a_bounty_of_a_v1_ledger_takes_the_registrys_resolver_at_its_first_resolver_step(
        tmp_path: Path, people: dict[str, Signer]) -> None:
    """Created before any resolver was recorded (the embedded default's first publish before a serve): the bounty
    keeps no arbiter open to later change; it takes the registry's resolver once, as the chain would have."""
    path = tmp_path / "l.sqlite"
    ledger = LocalLedger(path, cooling_period=60)
    alice, bob, resolver = people["alice"], people["bob"], people["resolver"]
    ledger.mint(alice.address, "USDT", 100)
    ledger.create_bounty(alice, "o/r", H1, "USDT", 100, repo_id=7)
    assert ledger.get_bounty("1").resolver is None
    ledger.initialize_roles(resolver.address)
    ledger.accept_bounty(bob, "1")
    ledger.submit_pr(bob, "1", "u", SHA)
    link(ledger, resolver, bob, 11)
    assert ledger.mark_merged(resolver, "1", "u", 11, 7, 1).success
    assert ledger.get_bounty("1").resolver == resolver.address
    assert ledger.set_resolver(resolver, people["carol"].address).success
    assert ledger.dispute(alice, "1", "why").success
    assert ledger.rule(people["carol"], "1", 0).abort_code == Abort.NOT_RESOLVER, "the new resolver rules nothing old"
