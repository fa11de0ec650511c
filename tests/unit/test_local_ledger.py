import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from adapters.keystore import Keystore
from adapters.local_ledger import ESCROW, SIGNING_PREFIX, LocalLedger, TransactionRejected
from domain.canonical import canonical_json


@pytest.fixture
def keys(tmp_path: Path) -> Keystore:
    return Keystore(tmp_path / "keys")


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
    receipt = ledger.create_bounty(alice, "o/r", "h1", "USDT", 40)
    assert receipt.success and receipt.events[0].type == "BountyCreated"
    ledger.advance(3600)
    again = LocalLedger(tmp_path / "l.sqlite")
    assert again.balance(alice.address, "USDT") == 60 and again.balance(ESCROW, "USDT") == 40
    assert again.get_bounty("1").cooling_period == 60
    assert again.now() >= ledger.now() - 1 >= receipt.version
    assert again.sequence_number(alice.address) == 1
    assert again.transaction(receipt.tx_hash)["success"] is True


def test_an_aborted_transaction_is_recorded_without_effects(tmp_path: Path, keys: Keystore) -> None:
    ledger = LocalLedger(tmp_path / "l.sqlite")
    alice = keys.new("alice")
    receipt = ledger.create_bounty(alice, "o/r", "h1", "USDT", 40)  # no funds
    assert not receipt.success and receipt.abort_code == 8 and receipt.events == []
    assert ledger.list_bounties() == [] and ledger.sequence_number(alice.address) == 1
    ledger.mint(alice.address, "USDT", 100)
    assert ledger.create_bounty(alice, "o/r", "h1", "USDT", 40).success
    assert ledger.create_bounty(alice, "o/r", "h1", "USDT", 40).abort_code == 7, "issue_hash is unique on chain"


def test_events_since_never_cuts_a_transaction_in_half(tmp_path: Path, keys: Keystore) -> None:
    ledger = LocalLedger(tmp_path / "l.sqlite")
    alice, bob = keys.new("alice"), keys.new("bob")
    ledger.mint(alice.address, "USDT", 100)
    ledger.create_bounty(alice, "o/r", "h1", "USDT", 40)
    ledger.accept_bounty(bob, "1")
    ledger.submit_pr(bob, "1", "u", "abcdef1")
    merged = ledger.mark_merged(alice, "1", "u")  # two events in one transaction
    before = merged.version - 1
    page = ledger.events_since(before, limit=1)
    assert [e.type for e in page] == ["BountyMerged", "CoolingStarted"]
    assert ledger.events_since(page[-1].version) == []
