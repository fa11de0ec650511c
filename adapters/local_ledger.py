"""The embedded ledger: the bounty contract's exact rules (v2), signed transactions, versions and events.

Persisted in one SQLite file so that it survives restarts and is shared by every process of a project. It
plays both parts the Aptos adapter does: the client that builds and signs a transaction with the acting key,
and the node that verifies the signature and sequence number, executes the contract (`domain.bounties.contract`) and
records the transaction and its events under a new version. The Move module's tables (contest entrants,
contributions, nonces, links, settled PRs) are tables here; the rules get from them what the module reads.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from adapters import ledger_tables as tables
from adapters.keystore import address_of, public_key_of
from adapters.ledger_execution import ENTRY_FUNCTIONS, Execution
from adapters.ports import Receipt, Signer
from adapters.sql import Cursor, SqlDb
from domain.bounties import contract
from domain.bounties.chain_events import ChainEvent
from domain.bounties.contract import BountyState, ChainConfig, ContractAbort
from domain.bounties.contract_args import mode_arg, u64_arg
from domain.canonical import canonical_json
from domain.errors import Code, Code3Error

NO_ADDRESS = "0x" + "0" * 64
SIGNING_PREFIX = b"CODE3::RawTransaction::"
# The clock never passes this, so `now + any bounded duration` (deadline, hold, cooling, grace) stays a u64.
MAX_CLOCK = (contract.U64_MAX - contract.MAX_DEADLINE_AHEAD - contract.MAX_COOLING_PERIOD - contract.MAX_HOLD_SECONDS
             - contract.MAX_DISPUTE_PERIOD - contract.REFUND_GRACE)
# functions the resolver calls for the account linked to a forge user (a command in a comment)
ON_BEHALF = {"accept_for": "accept_bounty", "withdraw_for": "withdraw_task", "submit_pr_for": "submit_pr",
             "set_split_for": "set_split", "dispute_for": "dispute"}


class TransactionRejected(Exception):
    """The node refused the transaction before executing it (bad signature, stale sequence number)."""


class LocalLedger:
    """`cooling_period`, `resolver`, `admin` and `asset` are the registry's settings, recorded when the ledger
    file is first initialised (as the Move module's `initialize`); a later opening with other values keeps the
    recorded ones (the chain's state wins), except that a resolver (and admin) not yet recorded is recorded by the
    first opening that names one. `admin` defaults to the resolver."""

    network = "local"

    def __init__(self, path: Path, cooling_period: int = contract.DEFAULT_COOLING_PERIOD,
                 resolver: str | None = None, admin: str | None = None, asset: str = "USDT",
                 dispute_period: int = contract.DEFAULT_DISPUTE_PERIOD) -> None:
        self.path = path
        self.db = SqlDb.sqlite(path, tables.SCHEMA)
        with self.db.transaction() as db:
            if tables.meta(db, "cooling_period") is None:
                try:
                    contract.initialize(cooling_period, dispute_period)
                except ContractAbort as abort:
                    raise Code3Error(Code.VALIDATION, f"cooling period {cooling_period} s or dispute period "
                                     f"{dispute_period} s is out of bounds ({abort.abort.name})",
                                     f"use 1 to {contract.MAX_COOLING_PERIOD} seconds") from None
                tables.set_meta(db, "cooling_period", str(cooling_period))
                tables.set_meta(db, "dispute_period", str(dispute_period))
                tables.set_meta(db, "asset", asset)
                tables.set_meta(db, "contract_version", tables.CONTRACT_VERSION)
            tables.migrate(db)
            if tables.meta(db, "clock_offset") is None:
                tables.set_meta(db, "clock_offset", "0")
        self.initialize_roles(resolver, admin)

    def initialize_roles(self, resolver: str | None, admin: str | None = None) -> None:
        """Record the resolver (and the admin, by default the resolver) unless the ledger has them already."""
        with self.db.transaction() as db:
            if resolver is not None and tables.meta(db, "resolver") is None:
                tables.set_meta(db, "resolver", resolver)
            if (admin or resolver) is not None and tables.meta(db, "admin") is None:
                tables.set_meta(db, "admin", admin or resolver or "")

    def close(self) -> None:
        self.db.close()

    # --- the clock -------------------------------------------------------------------------

    def now(self) -> int:
        with self.db.statement() as db:
            return tables.now(db)

    def advance(self, seconds: int) -> int:
        """Move the ledger's clock forward (tests and the demo pass the cooling period). Never backwards."""
        if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 0:
            raise Code3Error(Code.VALIDATION, f"cannot move the ledger's clock by {seconds!r} seconds",
                             "pass a whole number of seconds, zero or more: the clock never moves back")
        with self.db.transaction() as db:
            if tables.now(db) + seconds > MAX_CLOCK:
                raise Code3Error(Code.VALIDATION, f"moving the clock {seconds} s ahead passes its bound",
                                 "advance by a realistic duration")
            tables.set_meta(db, "clock_offset", str(int(tables.meta(db, "clock_offset") or 0) + seconds))
        return self.now()

    @property
    def cooling_period(self) -> int:
        return self.config().cooling_period

    def config(self) -> ChainConfig:
        with self.db.statement() as db:
            return tables.config(db)

    # --- funds -----------------------------------------------------------------------------

    def mint(self, address: str, asset: str, amount: int) -> int:
        """The local faucet: credit an account (there is no real money on the embedded ledger). As for a
        real asset, the total supply of an asset stays a u64, so no balance (escrow included) can overflow."""
        if isinstance(amount, bool) or not isinstance(amount, int) or not 0 < amount <= contract.U64_MAX:
            raise Code3Error(Code.VALIDATION, f"cannot mint {amount!r}: amounts are whole numbers from 1 to "
                             f"{contract.U64_MAX}", "pass a positive integer amount in the asset's smallest unit")
        with self.db.transaction() as db:
            supply = sum(int(r[0]) for r in db.execute("SELECT amount FROM funds WHERE asset = ?", (asset,)).fetchall())
            if supply + amount > contract.U64_MAX:
                raise Code3Error(Code.VALIDATION, f"minting {amount} would take the supply of {asset} past "
                                 f"{contract.U64_MAX}", "mint less: balances are u64 on chain")
            tables.credit(db, address, asset, amount)
        return self.balance(address, asset)

    def balance(self, address: str, asset: str) -> int:
        with self.db.statement() as db:
            return tables.balance(db, address, asset)

    # --- the client side: build, sign, submit -----------------------------------------------

    def create_bounty(self, signer: Signer, repo: str, issue_hash: str, asset: str, amount: int,
                      deadline: int | None = None, mode: str | int = "contest", hold_seconds: int = 0,
                      repo_id: int = 0) -> Receipt:
        """`deadline`: absolute unix seconds (None: now + 30 days); `mode`: exclusive or contest; `repo_id`: the
        forge's id of `repo` (0: the resolver compares by the id the forge gives the name at merge time)."""
        if deadline is None:
            deadline = self.now() + contract.DEFAULT_DEADLINE
        return self._call(signer, "create_bounty", {
            "repo": repo, "issue_hash": issue_hash, "asset": asset, "amount": u64_arg("amount", amount),
            "deadline": u64_arg("deadline", deadline), "mode": mode_arg(mode),
            "hold_seconds": u64_arg("hold_seconds", hold_seconds), "repo_id": u64_arg("repo_id", repo_id)})

    def fund_bounty(self, signer: Signer, bounty_id: str, amount: int, nonce: int) -> Receipt:
        return self._call(signer, "fund_bounty", {"bounty_id": bounty_id, "amount": u64_arg("amount", amount),
                                                  "nonce": u64_arg("nonce", nonce)})

    def accept_bounty(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._call(signer, "accept_bounty", {"bounty_id": bounty_id})

    def accept_for(self, signer: Signer, bounty_id: str, forge_user_id: int) -> Receipt:
        return self._call(signer, "accept_for", {"bounty_id": bounty_id,
                                                 "forge_user_id": u64_arg("forge_user_id", forge_user_id)})

    def withdraw_task(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._call(signer, "withdraw_task", {"bounty_id": bounty_id})

    def withdraw_for(self, signer: Signer, bounty_id: str, forge_user_id: int) -> Receipt:
        return self._call(signer, "withdraw_for", {"bounty_id": bounty_id,
                                                   "forge_user_id": u64_arg("forge_user_id", forge_user_id)})

    def submit_pr(self, signer: Signer, bounty_id: str, pr_url: str, commit_sha: str) -> Receipt:
        return self._call(signer, "submit_pr", {"bounty_id": bounty_id, "pr_url": pr_url, "commit_sha": commit_sha})

    def submit_pr_for(self, signer: Signer, bounty_id: str, forge_user_id: int, pr_url: str,
                      commit_sha: str) -> Receipt:
        return self._call(signer, "submit_pr_for", {
            "bounty_id": bounty_id, "forge_user_id": u64_arg("forge_user_id", forge_user_id), "pr_url": pr_url,
            "commit_sha": commit_sha})

    def reject_submission(self, signer: Signer, bounty_id: str, worker: str, reason: int) -> Receipt:
        return self._call(signer, "reject_submission", {"bounty_id": bounty_id, "worker": worker,
                                                        "reason": int(reason)})

    def mark_merged(self, signer: Signer, bounty_id: str, pr_url: str, author_id: int, repo_id: int,
                    pr_number: int) -> Receipt:
        """Resolver only: PR `pr_number` of repository `repo_id`, written by forge user `author_id`, merged; the
        winner is the address linked to `author_id`, who must have submitted `pr_url`."""
        return self._call(signer, "mark_merged", {
            "bounty_id": bounty_id, "pr_url": pr_url, "author_id": u64_arg("author_id", author_id),
            "repo_id": u64_arg("repo_id", repo_id), "pr_number": u64_arg("pr_number", pr_number)})

    def set_split(self, signer: Signer, bounty_id: str, recipients: list[str], shares: list[int]) -> Receipt:
        return self._call(signer, "set_split", {"bounty_id": bounty_id, "recipients": list(recipients),
                                                "shares": [u64_arg("share", s) for s in shares]})

    def set_split_for(self, signer: Signer, bounty_id: str, forge_user_id: int, recipients: list[str],
                      shares: list[int]) -> Receipt:
        return self._call(signer, "set_split_for", {
            "bounty_id": bounty_id, "forge_user_id": u64_arg("forge_user_id", forge_user_id),
            "recipients": list(recipients), "shares": [u64_arg("share", s) for s in shares]})

    def claim_payout(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._call(signer, "claim_payout", {"bounty_id": bounty_id})

    def cancel_bounty(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._call(signer, "cancel_bounty", {"bounty_id": bounty_id})

    def withdraw_refund(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._call(signer, "withdraw_refund", {"bounty_id": bounty_id})

    def dispute(self, signer: Signer, bounty_id: str, reason: str) -> Receipt:
        return self._call(signer, "dispute", {"bounty_id": bounty_id, "reason": reason})

    def dispute_for(self, signer: Signer, bounty_id: str, forge_user_id: int, reason: str) -> Receipt:
        return self._call(signer, "dispute_for", {
            "bounty_id": bounty_id, "forge_user_id": u64_arg("forge_user_id", forge_user_id), "reason": reason})

    def rule(self, signer: Signer, bounty_id: str, share_bps: int) -> Receipt:
        return self._call(signer, "rule", {"bounty_id": bounty_id, "share_bps": u64_arg("share_bps", share_bps)})

    def tip(self, signer: Signer, bounty_id: str, to: str, amount: int, nonce: int) -> Receipt:
        return self._call(signer, "tip", {"bounty_id": bounty_id, "to": to, "amount": u64_arg("amount", amount),
                                          "nonce": u64_arg("nonce", nonce)})

    def link_account(self, signer: Signer, forge_user_id: int, login: str, account: str, public_key: bytes,
                     signature: bytes) -> Receipt:
        return self._call(signer, "link_account", {
            "forge_user_id": u64_arg("forge_user_id", forge_user_id), "login": login, "account": account,
            "public_key": bytes(public_key).hex(), "signature": bytes(signature).hex()})

    def set_resolver(self, signer: Signer, resolver: str) -> Receipt:
        return self._call(signer, "set_resolver", {"resolver": resolver})

    def set_cooling_period(self, signer: Signer, cooling_period: int) -> Receipt:
        return self._call(signer, "set_cooling_period", {"cooling_period": u64_arg("cooling_period",
                                                                                   cooling_period)})

    def set_dispute_period(self, signer: Signer, dispute_period: int) -> Receipt:
        return self._call(signer, "set_dispute_period", {"dispute_period": u64_arg("dispute_period",
                                                                                   dispute_period)})

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
        now = tables.now(db)
        tables.set_meta(db, "high_water", str(now))  # the clock never reads earlier than a recorded transaction
        version = (db.execute("SELECT MAX(version) FROM transactions").fetchone()[0] or 0) + 1
        function = tx["function"].rsplit("::", 1)[1]
        if function not in ENTRY_FUNCTIONS:
            raise TransactionRejected(f"FUNCTION_NOT_FOUND: code3::bounty::{function}")
        executor = Execution(db, sender, tx["args"], now)
        savepoint_ok = True
        db.execute("SAVEPOINT body")
        try:
            emitted = getattr(executor, function)()
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
                       (version, idx, etype, str(data.get("bounty_id", "")), canonical_json(data)))
            events.append(ChainEvent(type=etype, data=data, tx_hash=tx_hash, version=version, index=idx))
        status = "Executed successfully" if savepoint_ok else f"Move abort in code3::bounty: {abort_code}"
        return Receipt(tx_hash=tx_hash, version=version, success=savepoint_ok, events=events,
                       abort_code=abort_code, vm_status=status)

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

    def list_bounty_ids(self, start: int = 1, limit: int = contract.MAX_PAGE) -> list[str]:
        """At most `limit` (capped at MAX_PAGE) bounty ids from `start` on, as the module's paged view."""
        with self.db.statement() as db:
            rows = db.execute("SELECT bounty_id FROM bounty_states WHERE bounty_id >= ? ORDER BY bounty_id LIMIT ?",
                              (max(1, start), max(0, min(limit, contract.MAX_PAGE)))).fetchall()
        return [str(r[0]) for r in rows]

    def list_bounties(self) -> list[BountyState]:
        with self.db.statement() as db:
            rows = db.execute("SELECT state FROM bounty_states ORDER BY bounty_id").fetchall()
        return [BountyState.from_dict(json.loads(r[0])) for r in rows]

    def is_entrant(self, bounty_id: str, worker: str) -> bool:
        with self.db.statement() as db:
            return tables.entered(db, int(bounty_id), worker)

    def contribution(self, bounty_id: str, funder: str) -> int:
        with self.db.statement() as db:
            return tables.contribution(db, int(bounty_id), funder)

    def nonce_used(self, account: str, nonce: int) -> bool:
        with self.db.statement() as db:
            return tables.nonce_used(db, account, nonce)

    def linked_account(self, resolver: str, forge_user_id: int) -> str | None:
        with self.db.statement() as db:
            return tables.linked(db, resolver, forge_user_id)

    def linked_forge_id(self, resolver: str, account: str) -> int | None:
        with self.db.statement() as db:
            row = db.execute("SELECT forge_user_id FROM links WHERE resolver = ? AND account = ?",
                             (resolver, account)).fetchone()
        return int(row[0]) if row else None

    def settled_by(self, repo_id: int, pr_number: int) -> str | None:
        with self.db.statement() as db:
            return tables.settled(db, repo_id, pr_number)

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


