"""The embedded ledger: the bounty contract's exact rules, signed transactions, versions and events.

Persisted in one SQLite file so that it survives restarts and is shared by every process of a
project. It plays both parts the Aptos adapter will: the client that builds and signs a transaction
with the acting key, and the node that verifies the signature and sequence number, executes the
contract (`domain.contract`) and records the transaction and its events under a new version.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from adapters.keystore import address_of, public_key_of
from adapters.ports import Receipt, Signer
from adapters.sql import Cursor, SqlDb
from domain import contract
from domain.canonical import canonical_json
from domain.chain_events import ChainEvent
from domain.contract import BountyState, ChainConfig, ContractAbort, mode_arg, u64_arg
from domain.errors import Code, Code3Error

ESCROW = "0xc0de3"  # the contract's own account, holding escrowed funds (no key signs for it)
NO_ADDRESS = "0x" + "0" * 64
SIGNING_PREFIX = b"CODE3::RawTransaction::"
# The clock never passes this, so `now + any bounded duration` (deadline, hold, cooling) stays a u64.
MAX_CLOCK = contract.U64_MAX - contract.MAX_DEADLINE_AHEAD - contract.MAX_COOLING_PERIOD - contract.MAX_HOLD_SECONDS
# Amounts are stored as decimal TEXT: SQLite's INTEGER is a signed 64-bit and turns larger values into REAL.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts (address TEXT PRIMARY KEY, public_key TEXT NOT NULL,
    sequence_number INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS funds (address TEXT NOT NULL, asset TEXT NOT NULL, amount TEXT NOT NULL,
    PRIMARY KEY (address, asset));
CREATE TABLE IF NOT EXISTS bounty_states (bounty_id INTEGER PRIMARY KEY, sponsor TEXT NOT NULL,
    issue_hash TEXT NOT NULL, state TEXT NOT NULL, UNIQUE (sponsor, issue_hash));
CREATE TABLE IF NOT EXISTS transactions (version INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE,
    sender TEXT NOT NULL, sequence_number INTEGER NOT NULL, payload TEXT NOT NULL, success INTEGER NOT NULL,
    abort_code INTEGER, timestamp INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events (version INTEGER NOT NULL, idx INTEGER NOT NULL, type TEXT NOT NULL,
    bounty_id TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (version, idx));
CREATE INDEX IF NOT EXISTS events_by_bounty ON events (bounty_id, version, idx);
"""


class TransactionRejected(Exception):
    """The node refused the transaction before executing it (bad signature, stale sequence number)."""


class LocalLedger:
    """`cooling_period`, `resolver`, `admin` and `asset` are the registry's settings, recorded when the
    ledger file is first initialised (as the Move module's `initialize`); a later opening with other
    values keeps the recorded ones (the chain's state wins), except that a resolver (and admin) not yet
    recorded is recorded by the first opening that names one. `admin` defaults to the resolver."""

    network = "local"

    def __init__(self, path: Path, cooling_period: int = contract.DEFAULT_COOLING_PERIOD,
                 resolver: str | None = None, admin: str | None = None, asset: str = "USDT") -> None:
        self.path = path
        self.db = SqlDb.sqlite(path, _SCHEMA)
        with self.db.transaction() as db:
            _migrate(db)
            if _meta(db, "cooling_period") is None:
                try:
                    contract.initialize(cooling_period)
                except ContractAbort:
                    raise Code3Error(Code.VALIDATION, f"cooling period {cooling_period} s is out of bounds",
                                     f"use 1 to {contract.MAX_COOLING_PERIOD} seconds") from None
                _set_meta(db, "cooling_period", str(cooling_period))
                _set_meta(db, "asset", asset)
            if _meta(db, "clock_offset") is None:
                _set_meta(db, "clock_offset", "0")
        self.initialize_roles(resolver, admin)

    def initialize_roles(self, resolver: str | None, admin: str | None = None) -> None:
        """Record the resolver (and the admin, by default the resolver) unless the ledger has them already."""
        with self.db.transaction() as db:
            if resolver is not None and _meta(db, "resolver") is None:
                _set_meta(db, "resolver", resolver)
            if (admin or resolver) is not None and _meta(db, "admin") is None:
                _set_meta(db, "admin", admin or resolver or "")

    def close(self) -> None:
        self.db.close()

    # --- the clock -------------------------------------------------------------------------

    def now(self) -> int:
        with self.db.statement() as db:
            return _now(db)

    def advance(self, seconds: int) -> int:
        """Move the ledger's clock forward (tests and the demo pass the cooling period). Never backwards."""
        if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 0:
            raise Code3Error(Code.VALIDATION, f"cannot move the ledger's clock by {seconds!r} seconds",
                             "pass a whole number of seconds, zero or more: the clock never moves back")
        with self.db.transaction() as db:
            if _now(db) + seconds > MAX_CLOCK:
                raise Code3Error(Code.VALIDATION, f"moving the clock {seconds} s ahead passes its bound",
                                 "advance by a realistic duration")
            _set_meta(db, "clock_offset", str(int(_meta(db, "clock_offset") or 0) + seconds))
        return self.now()

    @property
    def cooling_period(self) -> int:
        return self.config().cooling_period

    def config(self) -> ChainConfig:
        with self.db.statement() as db:
            return _config(db)

    # --- funds -----------------------------------------------------------------------------

    def mint(self, address: str, asset: str, amount: int) -> int:
        """The local faucet: credit an account (there is no real money on the embedded ledger). As for a
        real asset, the total supply of an asset stays a u64, so no balance (escrow included) can overflow."""
        if isinstance(amount, bool) or not isinstance(amount, int) or not 0 < amount <= contract.U64_MAX:
            raise Code3Error(Code.VALIDATION, f"cannot mint {amount!r}: amounts are whole numbers from 1 to "
                             f"{contract.U64_MAX}", "pass a positive integer amount in the asset's smallest unit")
        with self.db.transaction() as db:
            supply = sum(int(r[0]) for r in db.execute("SELECT amount FROM funds WHERE asset = ?", (asset,)))
            if supply + amount > contract.U64_MAX:
                raise Code3Error(Code.VALIDATION, f"minting {amount} would take the supply of {asset} past "
                                 f"{contract.U64_MAX}", "mint less: balances are u64 on chain")
            _credit(db, address, asset, amount)
        return self.balance(address, asset)

    def balance(self, address: str, asset: str) -> int:
        with self.db.statement() as db:
            return _balance(db, address, asset)

    # --- the client side: build, sign, submit -----------------------------------------------

    def create_bounty(self, signer: Signer, repo: str, issue_hash: str, asset: str, amount: int,
                      deadline: int | None = None, mode: str | int = "contest", hold_seconds: int = 0) -> Receipt:
        """`deadline`: absolute unix seconds (None: now + 30 days); `mode`: exclusive or contest."""
        if deadline is None:
            deadline = self.now() + contract.DEFAULT_DEADLINE
        return self._call(signer, "create_bounty", {
            "repo": repo, "issue_hash": issue_hash, "asset": asset, "amount": u64_arg("amount", amount),
            "deadline": u64_arg("deadline", deadline), "mode": mode_arg(mode),
            "hold_seconds": u64_arg("hold_seconds", hold_seconds)})

    def accept_bounty(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._call(signer, "accept_bounty", {"bounty_id": bounty_id})

    def withdraw_task(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._call(signer, "withdraw_task", {"bounty_id": bounty_id})

    def submit_pr(self, signer: Signer, bounty_id: str, pr_url: str, commit_sha: str) -> Receipt:
        return self._call(signer, "submit_pr", {"bounty_id": bounty_id, "pr_url": pr_url, "commit_sha": commit_sha})

    def mark_merged(self, signer: Signer, bounty_id: str, pr_url: str, winner: str | None = None) -> Receipt:
        """`winner` None: the submitter of `pr_url` as the chain has it now (the resolver should name the
        PR's author as the forge shows it)."""
        if winner is None:
            state = self.get_bounty(bounty_id)
            winner = (contract.submitter_of(state, pr_url) if state else None) or NO_ADDRESS
        return self._call(signer, "mark_merged", {"bounty_id": bounty_id, "pr_url": pr_url, "winner": winner})

    def claim_payout(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._call(signer, "claim_payout", {"bounty_id": bounty_id})

    def cancel_bounty(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._call(signer, "cancel_bounty", {"bounty_id": bounty_id})

    def set_resolver(self, signer: Signer, resolver: str) -> Receipt:
        return self._call(signer, "set_resolver", {"resolver": resolver})

    def set_cooling_period(self, signer: Signer, cooling_period: int) -> Receipt:
        return self._call(signer, "set_cooling_period", {"cooling_period": u64_arg("cooling_period",
                                                                                   cooling_period)})

    def _call(self, signer: Signer, function: str, args: dict[str, Any]) -> Receipt:
        """Sign and submit; on a sequence-number race with another process, re-read and re-sign."""
        public = public_key_of(signer.private_key_hex)
        for attempt in range(5):
            raw = canonical_json({
                "sender": signer.address, "sequence_number": self.sequence_number(signer.address),
                "function": f"code3::bounty::{function}", "args": args,
            }).encode()
            signature = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(signer.private_key_hex)).sign(
                SIGNING_PREFIX + raw)
            try:
                return self.submit(raw, signature, public)
            except TransactionRejected as exc:
                if "SEQUENCE_NUMBER" not in str(exc) or attempt == 4:
                    raise
        raise AssertionError("unreachable")

    def sequence_number(self, address: str) -> int:
        with self.db.statement() as db:
            row = db.execute("SELECT sequence_number FROM accounts WHERE address = ?", (address,)).fetchone()
            return row[0] if row else 0

    # --- the node side: verify, execute, record --------------------------------------------

    def submit(self, raw: bytes, signature: bytes, public_key: bytes) -> Receipt:
        try:
            Ed25519PublicKey.from_public_bytes(public_key).verify(signature, SIGNING_PREFIX + raw)
        except InvalidSignature:
            raise TransactionRejected("INVALID_SIGNATURE") from None
        tx = json.loads(raw)
        sender = tx["sender"]
        if address_of(public_key) != sender:
            raise TransactionRejected("INVALID_AUTH_KEY: the key does not own the sender account")
        tx_hash = "0x" + hashlib.sha3_256(raw + signature).hexdigest()
        with self.db.transaction() as db:
            return self._execute(db, tx, tx_hash, public_key)

    def execute(self, tx: dict[str, Any], tx_hash: str, public_key: bytes) -> Receipt:
        """Execute a transaction whose signature was verified elsewhere (a node fronting this ledger)."""
        with self.db.transaction() as db:
            return self._execute(db, tx, tx_hash, public_key)

    def _execute(self, db: Cursor, tx: dict[str, Any], tx_hash: str, public_key: bytes) -> Receipt:
        sender = tx["sender"]
        row = db.execute("SELECT sequence_number FROM accounts WHERE address = ?", (sender,)).fetchone()
        expected = row[0] if row else 0
        if tx["sequence_number"] != expected:
            raise TransactionRejected(f"SEQUENCE_NUMBER_MISMATCH: expected {expected}, got {tx['sequence_number']}")
        if row is None:
            db.execute("INSERT INTO accounts VALUES (?, ?, 0)", (sender, public_key.hex()))
        db.execute("UPDATE accounts SET sequence_number = sequence_number + 1 WHERE address = ?", (sender,))
        now = _now(db)
        _set_meta(db, "high_water", str(now))  # the clock never reads earlier than a recorded transaction
        version = (db.execute("SELECT MAX(version) FROM transactions").fetchone()[0] or 0) + 1
        function = tx["function"].rsplit("::", 1)[1]
        savepoint_ok = True
        db.execute("SAVEPOINT body")
        try:
            emitted = self._run(db, function, sender, tx["args"], now)
            abort_code = None
        except ContractAbort as abort:
            db.execute("ROLLBACK TO body")  # an aborted transaction is committed, its effects are not
            emitted, abort_code, savepoint_ok = [], int(abort.abort), False
        db.execute("RELEASE body")
        db.execute(
            "INSERT INTO transactions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (version, tx_hash, sender, tx["sequence_number"], canonical_json(tx), int(savepoint_ok), abort_code, now),
        )
        events = []
        for idx, (etype, data) in enumerate(emitted):
            db.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?)",
                       (version, idx, etype, str(data["bounty_id"]), canonical_json(data)))
            events.append(ChainEvent(type=etype, data=data, tx_hash=tx_hash, version=version, index=idx))
        status = "Executed successfully" if savepoint_ok else f"Move abort in code3::bounty: {abort_code}"
        return Receipt(tx_hash=tx_hash, version=version, success=savepoint_ok, events=events,
                       abort_code=abort_code, vm_status=status)

    def _run(self, db: Cursor, function: str, sender: str, args: dict[str, Any], now: int
             ) -> contract.Emitted:
        if function == "create_bounty":
            return self._create(db, sender, args, now)
        if function in ("set_resolver", "set_cooling_period"):
            config = _config(db)
            if function == "set_resolver":
                contract.set_resolver(config, sender, args["resolver"])
                _set_meta(db, "resolver", config.resolver or "")
            else:
                contract.set_cooling_period(config, sender, int(args["cooling_period"]))
                _set_meta(db, "cooling_period", str(config.cooling_period))
            return []
        state = _load(db, args["bounty_id"])
        rules: dict[str, Callable[[], contract.Emitted]] = {
            "accept_bounty": lambda: contract.accept(state, sender, now),
            "withdraw_task": lambda: contract.withdraw(state, sender),
            "submit_pr": lambda: contract.submit_pr(state, sender, args["pr_url"], args["commit_sha"], now),
            "mark_merged": lambda: contract.mark_merged(state, sender, _config(db).resolver, args["pr_url"],
                                                        args["winner"], now),
            "claim_payout": lambda: contract.claim_payout(state, now),
            "cancel_bounty": lambda: contract.cancel(state, sender, now),
        }
        if function not in rules:
            raise TransactionRejected(f"FUNCTION_NOT_FOUND: code3::bounty::{function}")
        emitted = rules[function]()
        for etype, data in emitted:
            if etype == "BountyPaid":
                _debit(db, ESCROW, state.asset, state.amount)
                _credit(db, data["winner"], state.asset, state.amount)
            elif etype == "BountyCancelled":
                _debit(db, ESCROW, state.asset, state.amount)
                _credit(db, data["refund_to"], state.asset, state.amount)
        db.execute("UPDATE bounty_states SET state = ? WHERE bounty_id = ?",
                   (json.dumps(state.to_dict()), int(state.bounty_id)))
        return emitted

    def _create(self, db: Cursor, sender: str, args: dict[str, Any], now: int) -> contract.Emitted:
        taken = db.execute("SELECT 1 FROM bounty_states WHERE sponsor = ? AND issue_hash = ?",
                           (sender, args["issue_hash"])).fetchone() is not None
        next_id = (db.execute("SELECT MAX(bounty_id) FROM bounty_states").fetchone()[0] or 0) + 1
        state = BountyState(
            bounty_id=str(next_id), sponsor=sender, repo=args["repo"], issue_hash=args["issue_hash"],
            asset=args["asset"], amount=int(args["amount"]), created_at=now, cooling_period=_config(db).cooling_period,
            deadline=int(args["deadline"]), mode=args["mode"], hold_seconds=int(args["hold_seconds"]),
        )
        emitted = contract.create(state, _balance(db, sender, state.asset), now, taken)
        _debit(db, sender, state.asset, state.amount)
        _credit(db, ESCROW, state.asset, state.amount)
        db.execute("INSERT INTO bounty_states VALUES (?, ?, ?, ?)",
                   (next_id, sender, state.issue_hash, json.dumps(state.to_dict())))
        return emitted

    # --- views -----------------------------------------------------------------------------

    def get_bounty(self, bounty_id: str) -> BountyState | None:
        if not str(bounty_id).isdigit() or int(bounty_id) > contract.U64_MAX:
            return None
        with self.db.statement() as db:
            row = db.execute("SELECT state FROM bounty_states WHERE bounty_id = ?", (int(bounty_id),)).fetchone()
        return BountyState.from_dict(json.loads(row[0])) if row else None

    def find_bounty_by_issue_hash(self, sponsor: str, issue_hash: str) -> BountyState | None:
        """The sponsor's bounty for this issue hash (hashes are keyed by sponsor on chain)."""
        with self.db.statement() as db:
            row = db.execute("SELECT state FROM bounty_states WHERE sponsor = ? AND issue_hash = ?",
                             (sponsor, issue_hash)).fetchone()
        return BountyState.from_dict(json.loads(row[0])) if row else None

    def list_bounties(self) -> list[BountyState]:
        with self.db.statement() as db:
            rows = db.execute("SELECT state FROM bounty_states ORDER BY bounty_id").fetchall()
        return [BountyState.from_dict(json.loads(r[0])) for r in rows]

    def bounty_events(self, bounty_id: str) -> list[ChainEvent]:
        return self._events("e.bounty_id = ?", (str(bounty_id),))

    def events_since(self, version: int, limit: int = 1000) -> list[ChainEvent]:
        """At most about `limit` events, never cutting a transaction in half (a cursor moves by versions)."""
        events = self._events("e.version > ?", (version,), limit)
        if limit > 0 and len(events) == limit:
            last = events[-1]
            events += [e for e in self._events("e.version = ?", (last.version,)) if e.index > last.index]
        return events

    def _events(self, where: str, params: tuple[Any, ...], limit: int = -1) -> list[ChainEvent]:
        with self.db.statement() as db:
            rows = db.execute(
                "SELECT e.type, e.data, t.hash, e.version, e.idx FROM events e JOIN transactions t "
                f"ON t.version = e.version WHERE {where} ORDER BY e.version, e.idx LIMIT ?", (*params, limit),
            ).fetchall()
        return [ChainEvent(type=r[0], data=json.loads(r[1]), tx_hash=r[2], version=r[3], index=r[4]) for r in rows]

    def latest_version(self) -> int:
        with self.db.statement() as db:
            return int(db.execute("SELECT COALESCE(MAX(version), 0) FROM transactions").fetchone()[0])

    def hash_at(self, version: int) -> str | None:
        with self.db.statement() as db:
            row = db.execute("SELECT hash FROM transactions WHERE version = ?", (version,)).fetchone()
        return row[0] if row else None

    def transaction(self, tx_hash: str) -> dict[str, Any] | None:
        with self.db.statement() as db:
            row = db.execute("SELECT version, sender, success, abort_code, timestamp FROM transactions "
                             "WHERE hash = ?", (tx_hash,)).fetchone()
        if not row:
            return None
        return {"hash": tx_hash, "version": row[0], "sender": row[1], "success": bool(row[2]),
                "abort_code": row[3], "timestamp": row[4]}


def _meta(db: Cursor, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def _set_meta(db: Cursor, key: str, value: str) -> None:
    db.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))


def _now(db: Cursor) -> int:
    """Wall clock plus the tests' offset, never earlier than the last recorded transaction."""
    return max(int(time.time()) + int(_meta(db, "clock_offset") or 0), int(_meta(db, "high_water") or 0))


def _config(db: Cursor) -> ChainConfig:
    return ChainConfig(admin=_meta(db, "admin") or None, resolver=_meta(db, "resolver") or None,
                       asset=_meta(db, "asset") or "USDT", escrow=ESCROW,
                       cooling_period=int(_meta(db, "cooling_period") or contract.DEFAULT_COOLING_PERIOD))


def _balance(db: Cursor, address: str, asset: str) -> int:
    row = db.execute("SELECT amount FROM funds WHERE address = ? AND asset = ?", (address, asset)).fetchone()
    return int(row[0]) if row else 0


def _credit(db: Cursor, address: str, asset: str, amount: int) -> None:
    total = _balance(db, address, asset) + amount
    assert 0 <= total <= contract.U64_MAX, "the supply cap keeps every balance a u64"
    db.execute("INSERT INTO funds VALUES (?, ?, ?) ON CONFLICT (address, asset) DO UPDATE SET amount = excluded.amount",
               (address, asset, str(total)))


def _debit(db: Cursor, address: str, asset: str, amount: int) -> None:
    balance = _balance(db, address, asset)
    if balance < amount:
        raise ContractAbort(contract.Abort.INSUFFICIENT_BALANCE)
    db.execute("UPDATE funds SET amount = ? WHERE address = ? AND asset = ?", (str(balance - amount), address, asset))


def _load(db: Cursor, bounty_id: str) -> BountyState:
    if not str(bounty_id).isdigit() or int(bounty_id) > contract.U64_MAX:
        raise ContractAbort(contract.Abort.BOUNTY_NOT_FOUND)
    row = db.execute("SELECT state FROM bounty_states WHERE bounty_id = ?", (int(bounty_id),)).fetchone()
    if not row:
        raise ContractAbort(contract.Abort.BOUNTY_NOT_FOUND)
    return BountyState.from_dict(json.loads(row[0]))


def _migrate(db: Cursor) -> None:
    """A ledger file from before u64 amounts and per-sponsor issue hashes: move its rows to the new tables."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
    if "balances" in tables:
        for address, asset, amount in db.execute("SELECT address, asset, amount FROM balances").fetchall():
            db.execute("INSERT INTO funds VALUES (?, ?, ?) ON CONFLICT DO NOTHING", (address, asset, str(int(amount))))
        db.execute("DROP TABLE balances")
    if "bounties" in tables:
        for bounty_id, stored in db.execute("SELECT bounty_id, state FROM bounties").fetchall():
            state = BountyState.from_dict(json.loads(stored))
            db.execute("INSERT INTO bounty_states VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       (bounty_id, state.sponsor, state.issue_hash, json.dumps(state.to_dict())))
        db.execute("DROP TABLE bounties")
