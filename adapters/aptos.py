"""The Chain port on Aptos: the `code3::bounty` Move module (v2) through a fullnode, with aptos-sdk.

Writes build an entry-function transaction from the ABI (adapters/aptos_abi.json), sign it with the signer's
ed25519 key, submit it as BCS and wait for it; the receipt carries the transaction's events (the bounty's, and
the links') with their chain coordinates. Each write takes the entry function's parameters after the signer, by
name and in order, and refuses before signing what its Move type cannot carry. Transient node failures are
retried (RetryPolicy); a transaction whose answer was lost is looked up by its hash (computed locally) before
anything is sent again, and a sequence number taken by another process is re-read and the transaction
re-signed. A Move abort is a receipt with `abort_code`, never retried. Keys are used to sign and are never
logged or put in errors.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from adapters.aptos_abi import NO_ACCOUNT, MoveAbi, load_abi, normalize_address
from adapters.aptos_events import EventFollower
from adapters.aptos_rest import FullnodeClient, NodeRejected, NodeUnavailable, rejection
from adapters.ports import Receipt, Signer
from adapters.retry import RetryBudgetSpent, RetryPolicy
from domain.bounties.chain_events import ChainEvent
from domain.bounties.contract import (
    DEFAULT_DEADLINE,
    MAX_PAGE,
    BountyState,
    ChainConfig,
    Mode,
    Status,
)
from domain.bounties.contract_args import mode_arg, u64_arg
from domain.errors import Code, Code3Error, present

log = logging.getLogger(__name__)
U64_MAX = 2**64 - 1
_CONCURRENT_PAGES = 4  # get_bounties pages read at once by list_bounties
_TX_SALT = hashlib.sha3_256(b"APTOS::Transaction").digest()
_ABORT = re.compile(r"^Move abort in (0x[0-9a-fA-F]+)::(\w+): (?:\w+\()?(0x[0-9a-fA-F]+|\d+)")
FA_METADATA = "0x1::fungible_asset::Metadata"


class MustResign(Exception):
    """The signed transaction can never commit (its sequence number was taken, or it expired): sign anew."""

    wait = 0.0


def aptos_policy(**overrides: Any) -> RetryPolicy:
    """Transient: the node unavailable, or a sequence-number race (re-sign); anything else is final."""
    settings: dict[str, Any] = {"attempts": 6, "budget_s": 60.0, "base_wait_s": 0.5, "max_wait_s": 8.0}
    settings.update(overrides)
    return RetryPolicy("aptos", is_transient=lambda e: isinstance(e, NodeUnavailable | MustResign),
                       wait_hint=lambda e: getattr(e, "wait", None), **settings)


def signed_transaction_hash(signed: Any) -> str:
    """The hash the node will give a signed user transaction: sha3-256 of the salted Transaction::User."""
    return "0x" + hashlib.sha3_256(_TX_SALT + b"\x00" + signed.bytes()).hexdigest()


class _Outbox:
    """One transaction on its way: the signed transaction, and whether an earlier send may have landed."""

    def __init__(self, account: Any, payload: Any) -> None:
        self.account, self.payload = account, payload
        self.signed: Any = None
        self.hash: str | None = None
        self.maybe_sent = False

    def sign(self, raw: Any) -> None:
        from aptos_sdk.transactions import SignedTransaction

        self.signed = SignedTransaction(raw, self.account.sign_transaction(raw))
        self.hash, self.maybe_sent = signed_transaction_hash(self.signed), False

    def discard(self) -> None:
        self.signed, self.hash, self.maybe_sent = None, None, False


class AptosChain:
    """`node_url` includes /v1; `module_address` is where code3::bounty is published; `asset_metadata` is
    the USDT fungible-asset metadata object (or a symbol → object mapping), used for balances. `sleep` is
    what retries wait with (tests pass a recorder); aptos-sdk is imported on first use only.
    """

    def __init__(self, node_url: str, module_address: str, network: str = "testnet",
                 asset_metadata: str | Mapping[str, str] = "", *, policy: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep, timeout_s: float = 10.0, wait_s: float = 30.0,
                 expiration_ttl: int = 600, abi: MoveAbi | None = None) -> None:
        self.network = network
        self.node_url = node_url
        self.module_address = normalize_address(module_address)
        self.abi = abi or load_abi()
        self.module = f"{self.module_address}::{self.abi.module}"
        metadata = {"USDT": asset_metadata} if isinstance(asset_metadata, str) else dict(asset_metadata)
        self.assets = {symbol: normalize_address(addr) for symbol, addr in metadata.items() if addr}
        self.policy = policy or aptos_policy()
        self.wait_s, self.expiration_ttl = wait_s, expiration_ttl
        self._sleep = sleep
        self._node = FullnodeClient(node_url, timeout_s)
        self._events = EventFollower(self.abi, self.module_address)
        self._turns: dict[str, threading.Lock] = {}  # address -> the lock its transactions are sent under
        self._turns_guard = threading.Lock()

    def _account_turn(self, address: str) -> threading.Lock:
        """The lock one account's transactions take through this client: concurrent calls acting as one identity
        (a serve's handlers share its chain client) would read the same sequence number and sign two transactions
        with it. Another client or process racing for the same account is met by re-signing (MustResign)."""
        with self._turns_guard:
            return self._turns.setdefault(address, threading.Lock())

    def __repr__(self) -> str:
        return f"AptosChain(node_url={self.node_url!r}, module={self.module!r}, network={self.network!r})"

    def close(self) -> None:
        self._node.close()

    # --- writes ----------------------------------------------------------------------------

    def create_bounty(self, signer: Signer, repo: str, issue_hash: str, asset: str, amount: int,
                      deadline: int | None = None, mode: str | int = "contest", hold_seconds: int = 0,
                      repo_id: int = 0) -> Receipt:
        """`deadline`: absolute unix seconds (None: the node's now + 30 days); `mode`: exclusive or contest;
        `repo_id`: the forge's id of `repo` (0: compared by the id the forge gives its name at merge time)."""
        amount, mode_u8 = u64_arg("amount", amount), mode_arg(mode)
        hold_seconds, repo_id = u64_arg("hold_seconds", hold_seconds), u64_arg("repo_id", repo_id)
        deadline = u64_arg("deadline", self.now() + DEFAULT_DEADLINE if deadline is None else deadline)
        return self._transact(signer, "create_bounty", {
            "repo": repo, "issue_hash": issue_hash, "asset": asset, "amount": amount, "deadline": deadline,
            "mode": mode_u8, "hold_seconds": hold_seconds, "repo_id": repo_id})

    def fund_bounty(self, signer: Signer, bounty_id: str, amount: int, nonce: int) -> Receipt:
        return self._transact(signer, "fund_bounty", {"bounty_id": _u64_id(bounty_id),
                                                      "amount": u64_arg("amount", amount),
                                                      "nonce": u64_arg("nonce", nonce)})

    def accept_bounty(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._transact(signer, "accept_bounty", {"bounty_id": _u64_id(bounty_id)})

    def accept_for(self, signer: Signer, bounty_id: str, forge_user_id: int) -> Receipt:
        return self._transact(signer, "accept_for", {"bounty_id": _u64_id(bounty_id),
                                                     "forge_user_id": u64_arg("forge_user_id", forge_user_id)})

    def withdraw_task(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._transact(signer, "withdraw_task", {"bounty_id": _u64_id(bounty_id)})

    def withdraw_for(self, signer: Signer, bounty_id: str, forge_user_id: int) -> Receipt:
        return self._transact(signer, "withdraw_for", {"bounty_id": _u64_id(bounty_id),
                                                       "forge_user_id": u64_arg("forge_user_id", forge_user_id)})

    def submit_pr(self, signer: Signer, bounty_id: str, pr_url: str, commit_sha: str) -> Receipt:
        return self._transact(signer, "submit_pr", {"bounty_id": _u64_id(bounty_id), "pr_url": pr_url,
                                                    "commit_sha": commit_sha})

    def submit_pr_for(self, signer: Signer, bounty_id: str, forge_user_id: int, pr_url: str,
                      commit_sha: str) -> Receipt:
        return self._transact(signer, "submit_pr_for", {
            "bounty_id": _u64_id(bounty_id), "forge_user_id": u64_arg("forge_user_id", forge_user_id),
            "pr_url": pr_url, "commit_sha": commit_sha})

    def reject_submission(self, signer: Signer, bounty_id: str, worker: str, reason: int) -> Receipt:
        """`reason`: a `domain.bounties.contract.Rejection` (any other u8 aborts INVALID_REASON on chain)."""
        return self._transact(signer, "reject_submission", {
            "bounty_id": _u64_id(bounty_id), "worker": _address(worker), "reason": _u8("reason", reason)})

    def mark_merged(self, signer: Signer, bounty_id: str, pr_url: str, author_id: int, repo_id: int,
                    pr_number: int) -> Receipt:
        """Resolver only: PR `pr_number` of repository `repo_id`, written by forge user `author_id`, merged; the
        winner is the address linked to `author_id` under the bounty's resolver."""
        return self._transact(signer, "mark_merged", {
            "bounty_id": _u64_id(bounty_id), "pr_url": pr_url, "author_id": u64_arg("author_id", author_id),
            "repo_id": u64_arg("repo_id", repo_id), "pr_number": u64_arg("pr_number", pr_number)})

    def set_split(self, signer: Signer, bounty_id: str, recipients: list[str], shares: list[int]) -> Receipt:
        return self._transact(signer, "set_split", {"bounty_id": _u64_id(bounty_id),
                                                    "recipients": [_address(r) for r in recipients],
                                                    "shares": [u64_arg("share", s) for s in shares]})

    def set_split_for(self, signer: Signer, bounty_id: str, forge_user_id: int, recipients: list[str],
                      shares: list[int]) -> Receipt:
        return self._transact(signer, "set_split_for", {
            "bounty_id": _u64_id(bounty_id), "forge_user_id": u64_arg("forge_user_id", forge_user_id),
            "recipients": [_address(r) for r in recipients], "shares": [u64_arg("share", s) for s in shares]})

    def claim_payout(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._transact(signer, "claim_payout", {"bounty_id": _u64_id(bounty_id)})

    def cancel_bounty(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._transact(signer, "cancel_bounty", {"bounty_id": _u64_id(bounty_id)})

    def withdraw_refund(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._transact(signer, "withdraw_refund", {"bounty_id": _u64_id(bounty_id)})

    def dispute(self, signer: Signer, bounty_id: str, reason: str) -> Receipt:
        return self._transact(signer, "dispute", {"bounty_id": _u64_id(bounty_id), "reason": reason})

    def dispute_for(self, signer: Signer, bounty_id: str, forge_user_id: int, reason: str) -> Receipt:
        return self._transact(signer, "dispute_for", {"bounty_id": _u64_id(bounty_id),
                                                      "forge_user_id": u64_arg("forge_user_id", forge_user_id),
                                                      "reason": reason})

    def rule(self, signer: Signer, bounty_id: str, share_bps: int) -> Receipt:
        return self._transact(signer, "rule", {"bounty_id": _u64_id(bounty_id),
                                               "share_bps": u64_arg("share_bps", share_bps)})

    def tip(self, signer: Signer, bounty_id: str, to: str, amount: int, nonce: int) -> Receipt:
        return self._transact(signer, "tip", {"bounty_id": _u64_id(bounty_id), "to": _address(to),
                                              "amount": u64_arg("amount", amount), "nonce": u64_arg("nonce", nonce)})

    def link_account(self, signer: Signer, forge_user_id: int, login: str, account: str, public_key: bytes,
                     signature: bytes) -> Receipt:
        """`public_key` / `signature`: the ed25519 key of `account` and its signature of
        `domain.bounties.links.link_message(forge_user_id, account)` (checked on chain)."""
        return self._transact(signer, "link_account", {
            "forge_user_id": u64_arg("forge_user_id", forge_user_id), "login": login, "account": _address(account),
            "public_key": bytes(public_key), "signature": bytes(signature)})

    def set_resolver(self, signer: Signer, resolver: str) -> Receipt:
        return self._transact(signer, "set_resolver", {"resolver": _address(resolver)})

    def set_cooling_period(self, signer: Signer, cooling_period: int) -> Receipt:
        return self._transact(signer, "set_cooling_period",
                              {"cooling_period": u64_arg("cooling_period", cooling_period)})

    def set_dispute_period(self, signer: Signer, dispute_period: int) -> Receipt:
        return self._transact(signer, "set_dispute_period",
                              {"dispute_period": u64_arg("dispute_period", dispute_period)})

    def _transact(self, signer: Signer, function: str, values: dict[str, Any]) -> Receipt:
        outbox = _Outbox(_account(signer), self._payload(function, values))
        log.debug("aptos: %s by %s", function, signer.address)
        try:
            with self._account_turn(signer.address):  # one account's transactions at a time (sequence numbers)
                return self.policy.call(lambda: self._node.run(lambda rest: self._attempt(rest, outbox)),
                                        sleep=self._sleep)
        except RetryBudgetSpent as spent:
            in_doubt = f"transaction {outbox.hash} may still commit" if outbox.maybe_sent else ""
            raise self._spent(spent, f"commit {function}", in_doubt) from None
        except NodeRejected as rejected:
            raise Code3Error(Code.CHAIN_TX_FAILED, f"the Aptos node refused {function}: {rejected.message}",
                             "check the account's key, balance for gas and the network, then retry") from None

    def _payload(self, function: str, values: dict[str, Any]) -> Any:
        from aptos_sdk.account_address import AccountAddress
        from aptos_sdk.bcs import Serializer
        from aptos_sdk.transactions import EntryFunction, TransactionArgument, TransactionPayload

        encoders: dict[str, Callable[[Any], Any]] = {
            "u8": lambda v: TransactionArgument(int(v), Serializer.u8),
            "u64": lambda v: TransactionArgument(int(v), Serializer.u64),
            "bool": lambda v: TransactionArgument(bool(v), Serializer.bool),
            "String": lambda v: TransactionArgument(str(v), Serializer.str),
            "address": lambda v: TransactionArgument(AccountAddress.from_str_relaxed(v), Serializer.struct),
            "vector<u8>": lambda v: TransactionArgument(bytes(v), Serializer.to_bytes),
            "vector<u64>": lambda v: TransactionArgument([int(x) for x in v],
                                                         Serializer.sequence_serializer(Serializer.u64)),
            "vector<address>": lambda v: TransactionArgument([AccountAddress.from_str_relaxed(x) for x in v],
                                                             Serializer.sequence_serializer(Serializer.struct)),
        }
        args = [encoders[kind](values[name]) for name, kind in self.abi.arguments(function)]
        return TransactionPayload(EntryFunction.natural(self.module, function, [], args))

    async def _attempt(self, rest: Any, outbox: _Outbox) -> Receipt:
        """One try. Never sends a second transaction while the fate of the first is unknown."""
        from aptos_sdk.async_client import ApiError
        from aptos_sdk.transactions import RawTransaction

        if outbox.signed is not None and outbox.maybe_sent:
            found = await _lookup(rest, outbox.hash)
            if found is not None:
                log.debug("aptos: %s found by hash after a lost answer", outbox.hash)
                return await self._settle(rest, found["hash"], found)
            info = await rest.info()
            if int(info["ledger_timestamp"]) // 1_000_000 > outbox.signed.transaction.expiration_timestamps_secs:
                outbox.discard()  # expired unseen: it can never commit
        if outbox.signed is None:
            info = await rest.info()
            sequence = await rest.account_sequence_number(outbox.account.address())
            cfg = rest.client_config
            expires = int(info["ledger_timestamp"]) // 1_000_000 + self.expiration_ttl
            outbox.sign(RawTransaction(outbox.account.address(), sequence, outbox.payload, cfg.max_gas_amount,
                                       cfg.gas_unit_price, expires, int(info["chain_id"])))
        earlier = outbox.maybe_sent
        outbox.maybe_sent = True
        log.debug("aptos: submitting %s (sequence %s)", outbox.hash, outbox.signed.transaction.sequence_number)
        try:
            await rest.submit_bcs_transaction(outbox.signed)
        except ApiError as exc:
            rejected = rejection(exc.status_code, str(exc))
            if rejected.vm_error in ("SEQUENCE_NUMBER_TOO_OLD", "TRANSACTION_EXPIRED"):
                found = await _lookup(rest, outbox.hash) if earlier else None
                if found is not None:
                    return await self._settle(rest, found["hash"], found)
                outbox.discard()
                raise MustResign(f"{rejected.vm_error}: re-reading the sequence number") from None
            outbox.maybe_sent = earlier
            raise rejected from None
        return await self._settle(rest, present(outbox.hash, "the signed transaction's hash"))

    async def _settle(self, rest: Any, tx_hash: str, tx: dict[str, Any] | None = None) -> Receipt:
        """Wait until the transaction leaves the mempool, then read its outcome and events."""
        deadline, pause, first = time.monotonic() + self.wait_s, 0.02, True
        while tx is None or tx.get("type") == "pending_transaction":
            if not first:
                if time.monotonic() > deadline:
                    raise NodeUnavailable(f"transaction {tx_hash} not committed after {self.wait_s} s")
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)
            first = False
            tx = await _lookup(rest, tx_hash)
        return self._receipt(tx)

    def _receipt(self, tx: dict[str, Any]) -> Receipt:
        success = bool(tx["success"])
        vm_status = str(tx.get("vm_status", ""))
        return Receipt(tx_hash=tx["hash"], version=int(tx["version"]), success=success,
                       events=self._events.of_transaction(tx), vm_status=vm_status,
                       abort_code=None if success else self._abort_code(vm_status))

    def _abort_code(self, vm_status: str) -> int | None:
        """Only an abort raised by our module is an `Abort`; a framework abort stays a plain failure."""
        match = _ABORT.match(vm_status)
        if not match or match.group(2) != self.abi.module or normalize_address(match.group(1)) != self.module_address:
            return None
        return int(match.group(3), 0) & 0xFFFF  # the reason, without a std::error category if one was added

    # --- reads -----------------------------------------------------------------------------

    def _read(self, what: str, work: Callable[[Any], Any]) -> Any:
        try:
            return self.policy.call(lambda: self._node.run(work), sleep=self._sleep)
        except RetryBudgetSpent as spent:
            raise self._spent(spent, what) from None
        except NodeRejected as rejected:
            raise Code3Error(Code.CHAIN_TX_FAILED, f"the Aptos node refused to {what}: {rejected.message}",
                             "check CODE3_APTOS_MODULE_ADDRESS and the network of the node") from None

    async def _view(self, rest: Any, function: str, args: list[str], type_args: list[str] | None = None) -> Any:
        return json.loads(await rest.view(function, type_args or [], args))

    def _call_view(self, what: str, view: str, *args: str) -> Any:
        """The first value a view of the module returns (u64 and address arguments travel as strings)."""
        result = self._read(what, lambda rest: self._view(rest, f"{self.module}::{view}", list(args)))
        return self.abi.decode(self.abi.views[view]["returns"], result[0])

    def get_bounty(self, bounty_id: str) -> BountyState | None:
        if not _is_u64(bounty_id):
            return None
        found = self._call_view("read get_bounty", "get_bounty", str(int(bounty_id)))
        return None if found is None else _state(found)

    def find_bounty_by_issue_hash(self, sponsor: str, issue_hash: str) -> BountyState | None:
        found = self._call_view("read get_bounty_by_issue_hash", "get_bounty_by_issue_hash", _address(sponsor),
                                issue_hash)
        return None if found is None else _state(found)

    def config(self) -> ChainConfig:
        found = self._call_view("read the contract's config", "get_config")
        return ChainConfig(**{**found, "admin": _account_or_none(found["admin"]),
                              "resolver": _account_or_none(found["resolver"])})

    def list_bounty_ids(self, start: int = 1, limit: int = MAX_PAGE) -> list[str]:
        """A page of at most `limit` (capped at 100, the view's bound) ids from `start` on."""
        ids = self._call_view("list bounty ids", "list_bounty_ids", str(_clamp_u64(start)), str(_clamp_u64(limit)))
        return [str(i) for i in ids]

    def list_bounties(self) -> list[BountyState]:
        """Every bounty, through the paged `get_bounties` view: pages of 100 from id 1 on, a few read at once
        (ids are 1, 2, 3... on chain, so page k starts at 1 + 100 k; a page that is not full is the last)."""
        returns = self.abi.views["get_bounties"]["returns"]

        async def work(rest: Any) -> list[Any]:
            found: dict[int, Any] = {}
            start = 1
            while True:
                starts = [start + k * MAX_PAGE for k in range(_CONCURRENT_PAGES) if start + k * MAX_PAGE <= U64_MAX]
                pages = await asyncio.gather(*(self._view(rest, f"{self.module}::get_bounties",
                                                          [str(s), str(MAX_PAGE)]) for s in starts))
                for page in pages:
                    for raw in page[0]:
                        found.setdefault(int(raw["bounty_id"]), raw)
                full = [len(page[0]) == MAX_PAGE for page in pages]
                if not all(full) or not found or max(found) >= U64_MAX:
                    return [found[i] for i in sorted(found)]
                start = max(found) + 1

        return [_state(self.abi.decode(returns, [raw])[0]) for raw in self._read("list bounties", work)]

    def is_entrant(self, bounty_id: str, worker: str) -> bool:
        if not _is_u64(bounty_id):
            return False
        return bool(self._call_view("read is_entrant", "is_entrant", str(int(bounty_id)), _address(worker)))

    def contribution(self, bounty_id: str, funder: str) -> int:
        """What `funder` put into the bounty and has not withdrawn."""
        if not _is_u64(bounty_id):
            return 0
        return int(self._call_view("read a contribution", "contribution", str(int(bounty_id)), _address(funder)))

    def nonce_used(self, account: str, nonce: int) -> bool:
        return bool(self._call_view("read nonce_used", "nonce_used", _address(account),
                                    str(u64_arg("nonce", nonce))))

    def linked_account(self, resolver: str, forge_user_id: int) -> str | None:
        """The address linked to a forge account under `resolver` (links are kept per resolver)."""
        if not _is_u64(forge_user_id):
            return None
        found = self._call_view("read a link", "linked_account", _address(resolver), str(int(forge_user_id)))
        return None if found is None else str(found)

    def linked_forge_id(self, resolver: str, account: str) -> int | None:
        found = self._call_view("read a link", "linked_forge_id", _address(resolver), _address(account))
        return None if found is None else int(found)

    def settled_by(self, repo_id: int, pr_number: int) -> str | None:
        """The bounty a merged PR settled, if any (one merged PR settles one bounty)."""
        if not (_is_u64(repo_id) and _is_u64(pr_number)):
            return None
        found = self._call_view("read settled_by", "settled_by", str(int(repo_id)), str(int(pr_number)))
        return None if found is None else str(found)

    def bounty_events(self, bounty_id: str) -> list[ChainEvent]:
        if not str(bounty_id).isdigit() or int(bounty_id) > U64_MAX:
            return []
        return self._read("read bounty events", lambda rest: self._events.of_bounty(rest, str(bounty_id)))

    def events_since(self, version: int, limit: int = 1000) -> list[ChainEvent]:
        """Every event after `version` (the bounties' and the links'), ending on a whole transaction, so a
        follower that resumes after the last version misses nothing."""
        later = self._read("read bounty events", lambda rest: self._events.since(rest, version))
        if len(later) > limit > 0:
            last = later[limit - 1].version
            later = [e for e in later if e.version <= last]
        return later

    def balance(self, address: str, asset: str) -> int:
        metadata = self.assets.get(asset)
        if metadata is None:
            return 0
        result = self._read("read a balance", lambda rest: self._view(
            rest, "0x1::primary_fungible_store::balance", [normalize_address(address), metadata], [FA_METADATA]))
        return int(result[0])

    def now(self) -> int:
        async def work(rest: Any) -> int:
            return int((await rest.info())["ledger_timestamp"]) // 1_000_000

        return int(self._read("read the ledger clock", work))

    def _spent(self, spent: RetryBudgetSpent, what: str, in_doubt: str = "") -> Code3Error:
        when = datetime.fromtimestamp(spent.retry_at, UTC).isoformat(timespec="seconds")
        wait = max(0, round(spent.retry_at - time.time()))
        return Code3Error(Code.CHAIN_TX_FAILED,
                          f"the Aptos node at {self.node_url} did not {what} after {spent.attempts} attempt(s): "
                          f"{spent.last}" + (f"; {in_doubt}" if in_doubt else ""),
                          f"retry after {when} (in about {wait} s); a retry looks the transaction up before "
                          "sending it again")


async def _lookup(rest: Any, tx_hash: str | None) -> dict[str, Any] | None:
    """The transaction by hash (committed or pending), or None when the node has never seen it."""
    from aptos_sdk.async_client import ApiError

    try:
        return dict(await rest.transaction_by_hash(tx_hash))
    except ApiError as exc:
        if exc.status_code == 404:
            return None
        raise


def _account(signer: Signer) -> Any:
    """The aptos-sdk account for a signer. Errors name the account, never the key."""
    from aptos_sdk.account import Account

    try:
        # The AIP-80 prefix keeps aptos-sdk from printing a notice on stdout (the MCP channel).
        account = Account.load_key(f"ed25519-priv-0x{signer.private_key_hex}")
    except Exception:
        raise Code3Error(Code.VALIDATION, f"the key of account {signer.name!r} is not an ed25519 private key",
                         "recreate the account (`code3 account new NAME`)") from None
    if normalize_address(str(account.address())) != normalize_address(signer.address):
        raise Code3Error(Code.VALIDATION, f"the key of account {signer.name!r} does not own {signer.address}",
                         "the keystore entry is inconsistent: recreate the account")
    return account


def _address(value: str) -> str:
    try:
        return normalize_address(value)
    except ValueError:
        raise Code3Error(Code.VALIDATION, f"{value!r} is not an account address",
                         "pass 0x followed by up to 64 hex digits") from None


def _state(data: dict[str, Any]) -> BountyState:
    """A decoded `Bounty` struct as the domain has it: ids as strings, submissions by worker (in order)."""
    submissions = {s["worker"]: {"pr_url": s["pr_url"], "commit_sha": s["commit_sha"],
                                 "submitted_at": s["submitted_at"], "state": s["state"]}
                   for s in data["submissions"]}
    return BountyState(**{**data, "bounty_id": str(data["bounty_id"]), "status": Status(data["status"]),
                          "mode": Mode(data["mode"]), "submissions": submissions,
                          "resolver": _account_or_none(data["resolver"])})


def _account_or_none(address: str) -> str | None:
    """The zero address, for which no key can sign, is no account: what the domain writes None for."""
    return None if address == NO_ACCOUNT else address


def _is_u64(value: Any) -> bool:
    return not isinstance(value, bool) and str(value).isdigit() and int(value) <= U64_MAX


def _clamp_u64(value: int) -> int:
    """A paging argument as the view's u64 (the ledger clamps the same way)."""
    return min(max(int(value), 0), U64_MAX)


def _u8(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        raise Code3Error(Code.VALIDATION, f"{name} {value!r} does not fit the contract's u8 (0 to 255)",
                         f"pass {name} as a whole number in that range")
    return value


def _u64_id(bounty_id: str) -> int:
    if not _is_u64(bounty_id):
        raise Code3Error(Code.NOT_FOUND, f"no bounty with id {bounty_id!r} on chain",
                         "check the bounty_id (publish returns it; accept_task reports it)")
    return int(bounty_id)
