"""The embedded ledger's file: its tables (the Move module's registry, bounties and tables, accounts, funds,
transactions and events) and the reads and writes every entry function makes of them, and the migration of a file an
older contract wrote. One SQLite file per project, shared by its processes (adapters.local_ledger)."""

from __future__ import annotations

import json
import time

from adapters.sql import Cursor
from domain.bounties import contract
from domain.bounties.contract import BountyState, ChainConfig, ContractAbort

ESCROW = "0xc0de3"  # the contract's own account, holding escrowed funds (no key signs for it)
CONTRACT_VERSION = "2"
# Amounts are stored as decimal TEXT: SQLite's INTEGER is a signed 64-bit and turns larger values into REAL.
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts (address TEXT PRIMARY KEY, public_key TEXT NOT NULL,
    sequence_number INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS funds (address TEXT NOT NULL, asset TEXT NOT NULL, amount TEXT NOT NULL,
    PRIMARY KEY (address, asset));
CREATE TABLE IF NOT EXISTS bounty_states (bounty_id INTEGER PRIMARY KEY, sponsor TEXT NOT NULL,
    issue_hash TEXT NOT NULL, state TEXT NOT NULL, UNIQUE (sponsor, issue_hash));
CREATE TABLE IF NOT EXISTS entrants (bounty_id INTEGER NOT NULL, worker TEXT NOT NULL, PRIMARY KEY (bounty_id, worker));
CREATE TABLE IF NOT EXISTS contributions (bounty_id INTEGER NOT NULL, funder TEXT NOT NULL, amount TEXT NOT NULL,
    PRIMARY KEY (bounty_id, funder));
CREATE TABLE IF NOT EXISTS nonces (account TEXT NOT NULL, nonce TEXT NOT NULL, PRIMARY KEY (account, nonce));
CREATE TABLE IF NOT EXISTS links (resolver TEXT NOT NULL, forge_user_id TEXT NOT NULL, account TEXT NOT NULL,
    login TEXT NOT NULL, PRIMARY KEY (resolver, forge_user_id), UNIQUE (resolver, account));
CREATE TABLE IF NOT EXISTS settled_prs (repo_id TEXT NOT NULL, pr_number TEXT NOT NULL, bounty_id INTEGER NOT NULL,
    PRIMARY KEY (repo_id, pr_number));
CREATE TABLE IF NOT EXISTS transactions (version INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE,
    sender TEXT NOT NULL, sequence_number INTEGER NOT NULL, payload TEXT NOT NULL, success INTEGER NOT NULL,
    abort_code INTEGER, timestamp INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events (version INTEGER NOT NULL, idx INTEGER NOT NULL, type TEXT NOT NULL,
    bounty_id TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (version, idx));
CREATE INDEX IF NOT EXISTS events_by_bounty ON events (bounty_id, version, idx);
"""

def meta(db: Cursor, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(db: Cursor, key: str, value: str) -> None:
    db.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))


def now(db: Cursor) -> int:
    """Wall clock plus the tests' offset, never earlier than the last recorded transaction."""
    return max(int(time.time()) + int(meta(db, "clock_offset") or 0), int(meta(db, "high_water") or 0))


def config(db: Cursor) -> ChainConfig:
    return ChainConfig(admin=meta(db, "admin") or None, resolver=meta(db, "resolver") or None,
                       asset=meta(db, "asset") or "USDT", escrow=ESCROW,
                       cooling_period=int(meta(db, "cooling_period") or contract.DEFAULT_COOLING_PERIOD),
                       dispute_period=int(meta(db, "dispute_period") or contract.DEFAULT_DISPUTE_PERIOD))


def balance(db: Cursor, address: str, asset: str) -> int:
    row = db.execute("SELECT amount FROM funds WHERE address = ? AND asset = ?", (address, asset)).fetchone()
    return int(row[0]) if row else 0


def credit(db: Cursor, address: str, asset: str, amount: int) -> None:
    total = balance(db, address, asset) + amount
    assert 0 <= total <= contract.U64_MAX, "the supply cap keeps every balance a u64"
    db.execute("INSERT INTO funds VALUES (?, ?, ?) ON CONFLICT (address, asset) DO UPDATE SET amount = excluded.amount",
               (address, asset, str(total)))


def move(db: Cursor, source: str, to: str, asset: str, amount: int) -> None:
    """A transfer; the rules checked the payer's balance, so a shortfall here is the contract's bug."""
    held = balance(db, source, asset)
    if held < amount:
        raise ContractAbort(contract.Abort.INSUFFICIENT_BALANCE)
    db.execute("UPDATE funds SET amount = ? WHERE address = ? AND asset = ?", (str(held - amount), source, asset))
    credit(db, to, asset, amount)


def load(db: Cursor, bounty_id: str) -> BountyState:
    if not str(bounty_id).isdigit() or int(bounty_id) > contract.U64_MAX:
        raise ContractAbort(contract.Abort.BOUNTY_NOT_FOUND)
    row = db.execute("SELECT state FROM bounty_states WHERE bounty_id = ?", (int(bounty_id),)).fetchone()
    if not row:
        raise ContractAbort(contract.Abort.BOUNTY_NOT_FOUND)
    return BountyState.from_dict(json.loads(row[0]))


def entered(db: Cursor, bounty_id: int, worker: str) -> bool:
    return db.execute("SELECT 1 FROM entrants WHERE bounty_id = ? AND worker = ?",
                      (bounty_id, worker)).fetchone() is not None


def contribution(db: Cursor, bounty_id: int, funder: str) -> int:
    row = db.execute("SELECT amount FROM contributions WHERE bounty_id = ? AND funder = ?",
                     (bounty_id, funder)).fetchone()
    return int(row[0]) if row else 0


def add_contribution(db: Cursor, bounty_id: int, funder: str, amount: int) -> None:
    total = contribution(db, bounty_id, funder) + amount
    db.execute("INSERT INTO contributions VALUES (?, ?, ?) ON CONFLICT (bounty_id, funder) "
               "DO UPDATE SET amount = excluded.amount", (bounty_id, funder, str(total)))


def nonce_used(db: Cursor, account: str, nonce: int) -> bool:
    return db.execute("SELECT 1 FROM nonces WHERE account = ? AND nonce = ?", (account, str(nonce))).fetchone() \
        is not None


def use_nonce(db: Cursor, account: str, nonce: int) -> None:
    db.execute("INSERT INTO nonces VALUES (?, ?)", (account, str(nonce)))


def linked(db: Cursor, resolver: str | None, forge_user_id: int) -> str | None:
    row = db.execute("SELECT account FROM links WHERE resolver = ? AND forge_user_id = ?",
                     (resolver, str(forge_user_id))).fetchone()
    return row[0] if row else None


def linked_id(db: Cursor, resolver: str, account: str) -> int | None:
    row = db.execute("SELECT forge_user_id FROM links WHERE resolver = ? AND account = ?",
                     (resolver, account)).fetchone()
    return int(row[0]) if row else None


def settled(db: Cursor, repo_id: int, pr_number: int) -> str | None:
    row = db.execute("SELECT bounty_id FROM settled_prs WHERE repo_id = ? AND pr_number = ?",
                     (str(repo_id), str(pr_number))).fetchone()
    return str(row[0]) if row else None


def migrate(db: Cursor) -> None:
    """A ledger file of an older contract: v1's tables and states become v2's (the embedded ledger is one file per
    project, so it moves in place; a Move deployment is a new package instead: docs/aptos.md, "Moving from the v1
    module"). A v1 bounty keeps its terms; its sponsor is its one funder, its accepted contest workers its
    entrants, and it takes the registry's resolver at its first resolver-only step."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
    if "balances" in tables:  # before u64 amounts
        for address, asset, amount in db.execute("SELECT address, asset, amount FROM balances").fetchall():
            db.execute("INSERT INTO funds VALUES (?, ?, ?) ON CONFLICT DO NOTHING", (address, asset, str(int(amount))))
        db.execute("DROP TABLE balances")
    if "bounties" in tables:  # before per-sponsor issue hashes
        for bounty_id, stored in db.execute("SELECT bounty_id, state FROM bounties").fetchall():
            raw = json.loads(stored)
            db.execute("INSERT INTO bounty_states VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       (bounty_id, raw["sponsor"], raw["issue_hash"], stored))
        db.execute("DROP TABLE bounties")
    if meta(db, "contract_version") == CONTRACT_VERSION:
        return
    for bounty_id, stored in db.execute("SELECT bounty_id, state FROM bounty_states").fetchall():
        raw = json.loads(stored)
        if "workers" not in raw:
            continue
        state = BountyState.from_dict(raw)
        if state.mode is contract.Mode.CONTEST:
            for worker in raw["workers"]:
                db.execute("INSERT INTO entrants VALUES (?, ?) ON CONFLICT DO NOTHING", (bounty_id, worker))
        if state.status in contract.LIVE_STATES or state.status is contract.Status.COOLING_DOWN:
            add_contribution(db, bounty_id, state.sponsor, state.amount)
        else:
            state.funders = 0  # settled under v1: nothing to withdraw
        db.execute("UPDATE bounty_states SET state = ? WHERE bounty_id = ?", (json.dumps(state.to_dict()), bounty_id))
    if meta(db, "dispute_period") is None:
        set_meta(db, "dispute_period", str(contract.DEFAULT_DISPUTE_PERIOD))
    set_meta(db, "contract_version", CONTRACT_VERSION)
