"""The Chain port on Aptos: the `code3::bounty` Move module through a fullnode, with aptos-sdk.

Writes build an entry-function transaction from the ABI (adapters/aptos_abi.json), sign it with the signer's
ed25519 key, submit it as BCS and wait for it; the receipt carries the transaction's bounty events with
their chain coordinates. Transient node failures are retried (RetryPolicy); a transaction whose answer
was lost is looked up by its hash (computed locally) before anything is sent again, and a sequence
number taken by another process is re-read and the transaction re-signed. A Move abort is a receipt
with `abort_code`, never retried. Keys are used to sign and are never logged or put in errors.
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

from adapters.aptos_abi import MoveAbi, load_abi, normalize_address
from adapters.aptos_events import EventFollower
from adapters.aptos_rest import FullnodeClient, NodeRejected, NodeUnavailable, rejection
from adapters.ports import Receipt, Signer
from adapters.retry import RetryBudgetSpent, RetryPolicy
from domain.chain_events import ChainEvent
from domain.contract import (
    DEFAULT_DEADLINE,
    BountyState,
    ChainConfig,
    Mode,
    Status,
    mode_arg,
    submitter_of,
    u64_arg,
)
from domain.errors import Code, Code3Error

log = logging.getLogger(__name__)
U64_MAX = 2**64 - 1
NO_ADDRESS = "0x" + "0" * 64
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
                      deadline: int | None = None, mode: str | int = "contest", hold_seconds: int = 0) -> Receipt:
        """`deadline`: absolute unix seconds (None: the node's now + 30 days); `mode`: exclusive or contest."""
        amount, mode_u8 = u64_arg("amount", amount), mode_arg(mode)
        hold_seconds = u64_arg("hold_seconds", hold_seconds)
        deadline = u64_arg("deadline", self.now() + DEFAULT_DEADLINE if deadline is None else deadline)
        return self._transact(signer, "create_bounty", {
            "repo": repo, "issue_hash": issue_hash, "asset": asset, "amount": amount, "deadline": deadline,
            "mode": mode_u8, "hold_seconds": hold_seconds})

    def accept_bounty(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._transact(signer, "accept_bounty", {"bounty_id": _u64_id(bounty_id)})

    def withdraw_task(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._transact(signer, "withdraw_task", {"bounty_id": _u64_id(bounty_id)})

    def submit_pr(self, signer: Signer, bounty_id: str, pr_url: str, commit_sha: str) -> Receipt:
        return self._transact(signer, "submit_pr", {"bounty_id": _u64_id(bounty_id), "pr_url": pr_url,
                                                    "commit_sha": commit_sha})

    def mark_merged(self, signer: Signer, bounty_id: str, pr_url: str, winner: str | None = None) -> Receipt:
        """`winner` None: the PR's submitter as the chain has it now."""
        if winner is None:
            state = self.get_bounty(bounty_id)
            winner = (submitter_of(state, pr_url) if state else None) or NO_ADDRESS
        return self._transact(signer, "mark_merged", {"bounty_id": _u64_id(bounty_id), "pr_url": pr_url,
                                                      "winner": _address(winner)})

    def claim_payout(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._transact(signer, "claim_payout", {"bounty_id": _u64_id(bounty_id)})

    def cancel_bounty(self, signer: Signer, bounty_id: str) -> Receipt:
        return self._transact(signer, "cancel_bounty", {"bounty_id": _u64_id(bounty_id)})

    def set_resolver(self, signer: Signer, resolver: str) -> Receipt:
        return self._transact(signer, "set_resolver", {"resolver": _address(resolver)})

    def set_cooling_period(self, signer: Signer, cooling_period: int) -> Receipt:
        return self._transact(signer, "set_cooling_period",
                              {"cooling_period": u64_arg("cooling_period", cooling_period)})

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
        return await self._settle(rest, outbox.hash)

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

    def get_bounty(self, bounty_id: str) -> BountyState | None:
        if not str(bounty_id).isdigit() or int(bounty_id) > U64_MAX:
            return None
        return self._bounty_view("get_bounty", str(int(bounty_id)))

    def find_bounty_by_issue_hash(self, sponsor: str, issue_hash: str) -> BountyState | None:
        return self._bounty_view("get_bounty_by_issue_hash", _address(sponsor), issue_hash)

    def _bounty_view(self, view: str, *args: str) -> BountyState | None:
        result = self._read(f"read {view}", lambda rest: self._view(rest, f"{self.module}::{view}", list(args)))
        return self._bounty(result[0])

    def config(self) -> ChainConfig:
        result = self._read("read the contract's config",
                            lambda rest: self._view(rest, f"{self.module}::get_config", []))
        return ChainConfig(**self.abi.decode("Config", result[0]))

    def list_bounties(self) -> list[BountyState]:
        async def work(rest: Any) -> list[Any]:
            ids = (await self._view(rest, f"{self.module}::list_bounty_ids", []))[0]
            views = [self._view(rest, f"{self.module}::get_bounty", [str(i)]) for i in ids]
            return [r[0] for r in await asyncio.gather(*views)]

        found = [self._bounty(raw) for raw in self._read("list bounties", work)]
        return [b for b in found if b is not None]

    def _bounty(self, raw: Any) -> BountyState | None:
        data = self.abi.decode(self.abi.views["get_bounty"]["returns"], raw)
        if data is None:
            return None
        subs = data.pop("submissions")
        return BountyState(**{**data, "bounty_id": str(data["bounty_id"]), "status": Status(data["status"]),
                              "mode": Mode(data["mode"]),
                              "submissions": {s["worker"]: {"pr_url": s["pr_url"], "commit_sha": s["commit_sha"]}
                                              for s in subs}})

    def bounty_events(self, bounty_id: str) -> list[ChainEvent]:
        if not str(bounty_id).isdigit() or int(bounty_id) > U64_MAX:
            return []
        return self._read("read bounty events", lambda rest: self._events.of_bounty(rest, str(bounty_id)))

    def events_since(self, version: int, limit: int = 1000) -> list[ChainEvent]:
        """Ends on a whole transaction, so a follower that resumes after the last version misses nothing."""
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


def _u64_id(bounty_id: str) -> int:
    if not str(bounty_id).isdigit() or int(bounty_id) > U64_MAX:
        raise Code3Error(Code.NOT_FOUND, f"no bounty with id {bounty_id!r} on chain",
                         "check the bounty_id (publish returns it; accept_task reports it)")
    return int(bounty_id)
