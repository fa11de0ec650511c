"""One transaction's body on the embedded ledger: each public method of `Execution` is an entry function of the
Move module, run inside the transaction's savepoint. It reads the tables the rule needs (adapters.ledger_tables), runs
the contract's rule (domain.bounties.contract), then writes the state, the tables and the movements of funds the
rule's events imply."""

from __future__ import annotations

import json
from typing import Any

from adapters import ledger_tables as tables
from adapters.keystore import address_of, verify
from adapters.sql import Cursor
from domain.bounties import contract
from domain.bounties.contract import BountyState, Emitted
from domain.bounties.links import link_message


class Execution:
    """One transaction's body: each public method is an entry function of the module, run inside the transaction's
    savepoint. It reads the tables the rule needs, runs the rule, then writes the state, the tables and the
    movements of funds the rule's events imply."""

    def __init__(self, db: Cursor, sender: str, args: dict[str, Any], now: int) -> None:
        self.db, self.sender, self.args, self.now = db, sender, args, now

    # --- the registry ---

    def set_resolver(self) -> Emitted:
        config = tables.config(self.db)
        contract.set_resolver(config, self.sender, self.args["resolver"])
        tables.set_meta(self.db, "resolver", config.resolver or "")
        return []

    def set_cooling_period(self) -> Emitted:
        config = tables.config(self.db)
        contract.set_cooling_period(config, self.sender, int(self.args["cooling_period"]))
        tables.set_meta(self.db, "cooling_period", str(config.cooling_period))
        return []

    def set_dispute_period(self) -> Emitted:
        config = tables.config(self.db)
        contract.set_dispute_period(config, self.sender, int(self.args["dispute_period"]))
        tables.set_meta(self.db, "dispute_period", str(config.dispute_period))
        return []

    def link_account(self) -> Emitted:
        a = self.args
        forge_user_id, account = int(a["forge_user_id"]), str(a["account"])
        try:
            public_key, signature = bytes.fromhex(a["public_key"]), bytes.fromhex(a["signature"])
            message = link_message(forge_user_id, account) if forge_user_id > 0 else b""
        except ValueError:
            public_key, signature, message = b"", b"", b""
        proof_ok = (len(public_key) == 32 and len(signature) == 64 and address_of(public_key) == account
                    and verify(public_key, signature, message))
        emitted = contract.link(self.sender, forge_user_id, str(a["login"]), account, proof_ok)
        # one forge account per address and one address per forge account, under each resolver: a new link of
        # either replaces the old one (a key rotated, an account renamed)
        self.db.execute("DELETE FROM links WHERE resolver = ? AND (forge_user_id = ? OR account = ?)",
                        (self.sender, str(forge_user_id), account))
        self.db.execute("INSERT INTO links VALUES (?, ?, ?, ?)", (self.sender, str(forge_user_id), account,
                                                                 str(a["login"])))
        return emitted

    # --- bounties ---

    def create_bounty(self) -> Emitted:
        a, db = self.args, self.db
        taken = db.execute("SELECT 1 FROM bounty_states WHERE sponsor = ? AND issue_hash = ?",
                           (self.sender, a["issue_hash"])).fetchone() is not None
        next_id = (db.execute("SELECT MAX(bounty_id) FROM bounty_states").fetchone()[0] or 0) + 1
        config = tables.config(db)
        state = BountyState(
            bounty_id=str(next_id), sponsor=self.sender, resolver=config.resolver, repo=a["repo"],
            repo_id=int(a.get("repo_id", 0)), issue_hash=a["issue_hash"], asset=a["asset"], amount=int(a["amount"]),
            created_at=self.now, cooling_period=config.cooling_period, dispute_period=config.dispute_period,
            deadline=int(a["deadline"]), mode=a["mode"], hold_seconds=int(a["hold_seconds"]),
        )
        emitted = contract.create(state, tables.balance(db, self.sender, state.asset), self.now, taken)
        tables.move(db, self.sender, tables.ESCROW, state.asset, state.amount)
        db.execute("INSERT INTO bounty_states VALUES (?, ?, ?, ?)",
                   (next_id, self.sender, state.issue_hash, json.dumps(state.to_dict())))
        tables.add_contribution(db, next_id, self.sender, state.amount)
        return emitted

    def fund_bounty(self) -> Emitted:
        state, a = self._load(), self.args
        amount, nonce = int(a["amount"]), int(a["nonce"])
        held = tables.contribution(self.db, int(state.bounty_id), self.sender)
        emitted = contract.fund(state, self.sender, amount, tables.nonce_used(self.db, self.sender, nonce),
                                tables.balance(self.db, self.sender, state.asset), held == 0, nonce)
        tables.use_nonce(self.db, self.sender, nonce)
        tables.move(self.db, self.sender, tables.ESCROW, state.asset, amount)
        tables.add_contribution(self.db, int(state.bounty_id), self.sender, amount)
        return self._save(state, emitted)

    def accept_bounty(self, actor: str | None = None) -> Emitted:
        state = self._load()
        worker = actor or self.sender
        entered = tables.entered(self.db, int(state.bounty_id), worker)
        emitted = contract.accept(state, worker, self.now, entered)
        if emitted and state.mode is contract.Mode.CONTEST:
            self.db.execute("INSERT INTO entrants VALUES (?, ?)", (int(state.bounty_id), worker))
        return self._save(state, emitted)

    def withdraw_task(self, actor: str | None = None) -> Emitted:
        state = self._load()
        worker = actor or self.sender
        emitted = contract.withdraw(state, worker, tables.entered(self.db, int(state.bounty_id), worker))
        self.db.execute("DELETE FROM entrants WHERE bounty_id = ? AND worker = ?", (int(state.bounty_id), worker))
        return self._save(state, emitted)

    def submit_pr(self, actor: str | None = None) -> Emitted:
        state, a = self._load(), self.args
        worker = actor or self.sender
        emitted = contract.submit_pr(state, worker, a["pr_url"], a["commit_sha"], self.now,
                                     tables.entered(self.db, int(state.bounty_id), worker))
        return self._save(state, emitted)

    def reject_submission(self) -> Emitted:
        state, a = self._load(), self.args
        emitted = contract.reject_submission(state, self.sender, str(a["worker"]), int(a["reason"]), self.now)
        return self._save(state, emitted)

    def mark_merged(self) -> Emitted:
        state, a = self._load(), self.args
        repo_id, pr_number = int(a["repo_id"]), int(a["pr_number"])
        winner = tables.linked(self.db, state.resolver, int(a["author_id"])) if state.resolver else None
        emitted = contract.mark_merged(state, self.sender, a["pr_url"], int(a["author_id"]), repo_id, pr_number,
                                       self.now, winner, tables.settled(self.db, repo_id, pr_number) is not None)
        self.db.execute("INSERT INTO settled_prs VALUES (?, ?, ?)", (str(repo_id), str(pr_number),
                                                                    int(state.bounty_id)))
        return self._save(state, emitted)

    def set_split(self, actor: str | None = None) -> Emitted:
        state, a = self._load(), self.args
        recipients, shares = [str(r) for r in a["recipients"]], [int(s) for s in a["shares"]]
        linked = [state.resolver is not None and tables.linked_id(self.db, state.resolver, r) is not None
                  for r in recipients]
        emitted = contract.set_split(state, actor or self.sender, recipients, shares, linked)
        return self._save(state, emitted)

    def claim_payout(self) -> Emitted:
        state = self._load()
        return self._save(state, contract.claim_payout(state, self.now))

    def cancel_bounty(self) -> Emitted:
        state = self._load()
        held = tables.contribution(self.db, int(state.bounty_id), self.sender)
        return self._save(state, contract.cancel(state, self.sender, self.now, held))

    def withdraw_refund(self) -> Emitted:
        state = self._load()
        held = tables.contribution(self.db, int(state.bounty_id), self.sender)
        return self._save(state, contract.withdraw_refund(state, self.sender, held))

    def dispute(self, actor: str | None = None) -> Emitted:
        state = self._load()
        return self._save(state, contract.dispute(state, actor or self.sender, str(self.args["reason"]), self.now))

    def rule(self) -> Emitted:
        state = self._load()
        held = tables.contribution(self.db, int(state.bounty_id), state.sponsor)
        return self._save(state, contract.rule(state, self.sender, int(self.args["share_bps"]), self.now, held))

    def tip(self) -> Emitted:
        state, a = self._load(), self.args
        to, amount, nonce = str(a["to"]), int(a["amount"]), int(a["nonce"])
        linked = state.resolver is not None and tables.linked_id(self.db, state.resolver, to) is not None
        emitted = contract.tip(state, self.sender, to, amount, nonce, tables.nonce_used(self.db, self.sender, nonce),
                               linked, tables.balance(self.db, self.sender, state.asset))
        tables.use_nonce(self.db, self.sender, nonce)
        tables.move(self.db, self.sender, to, state.asset, amount)
        return emitted

    # --- the resolver acting for a linked account ---

    def _actor(self) -> str:
        state = self._load()
        found = tables.linked(self.db, state.resolver, int(self.args["forge_user_id"])) if state.resolver else None
        return contract.on_behalf(state, self.sender, found)

    def accept_for(self) -> Emitted:
        return self.accept_bounty(self._actor())

    def withdraw_for(self) -> Emitted:
        return self.withdraw_task(self._actor())

    def submit_pr_for(self) -> Emitted:
        return self.submit_pr(self._actor())

    def set_split_for(self) -> Emitted:
        return self.set_split(self._actor())

    def dispute_for(self) -> Emitted:
        return self.dispute(self._actor())

    # --- state and funds ---

    def _load(self) -> BountyState:
        state = tables.load(self.db, self.args["bounty_id"])
        if state.resolver is None:  # created before a resolver was recorded: it takes the registry's, once
            state.resolver = tables.config(self.db).resolver
        return state

    def _save(self, state: BountyState, emitted: Emitted) -> Emitted:
        """Write the state and move the funds the events say moved (from the escrow or back to it)."""
        bounty_id = int(state.bounty_id)
        for etype, data in emitted:
            if etype == "BountyPaid":
                for to, amount in zip(data["recipients"], data["amounts"], strict=True):
                    tables.move(self.db, tables.ESCROW, to, state.asset, int(amount))
            elif etype == "RefundWithdrawn":
                self.db.execute("DELETE FROM contributions WHERE bounty_id = ? AND funder = ?",
                                (bounty_id, data["funder"]))
                tables.move(self.db, tables.ESCROW, data["funder"], state.asset, int(data["amount"]))
        self.db.execute("UPDATE bounty_states SET state = ? WHERE bounty_id = ?",
                        (json.dumps(state.to_dict()), bounty_id))
        return emitted


# the entry functions a transaction may name: Execution's public methods (initialize is the ledger's opening);
# tests/unit/test_move_abi.py checks them against the Move module's
ENTRY_FUNCTIONS = frozenset(name for name in vars(Execution) if not name.startswith("_"))
