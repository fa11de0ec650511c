"""A loopback Aptos fullnode for tests: the real REST shapes, the bounty contract behind them.

It speaks what aptos-sdk's RestClient and the Aptos adapter use (base path /v1): ledger info,
accounts, BCS-signed transactions decoded and verified with aptos-sdk's own types (the v2 module's
argument types: u8, u64, String, address, vector<u8>, vector<u64>, vector<address>), transactions by
hash and by version, view functions and event-handle listings. The contract is executed by the
embedded ledger (`LocalLedger`, the same rules as the Move module; its node side `execute` is called
once the BCS transaction is verified), so nothing is re-implemented here, and what the API shows is
rendered from the ledger's records and views: transactions committed on `node.ledger` directly are seen too.
Knobs make it fail the next requests, lose the answer to a committed transaction, abort with a given
Move code, or let another client act just before a submission; `requests` logs every request.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from adapters import ledger_execution
from adapters.aptos_abi import load_abi, normalize_address
from adapters.local_ledger import LocalLedger, TransactionRejected
from domain.bounties.chain_events import ChainEvent
from domain.bounties.contract import ABORT_CODES, DEFAULT_DISPUTE_PERIOD, Abort, BountyState, ContractAbort
from tests.fakes.aptos_http import Drop, Handler, Reply, error, vm_rejection

BCS_TX = "application/x.aptos.signed_transaction+bcs"
FA_METADATA = "0x1::fungible_asset::Metadata"
_GENERIC = re.compile(r"^(Option|vector)<(.+)>$")
_TX_SALT = hashlib.sha3_256(b"APTOS::Transaction").digest()
_MOVES_FUNDS = {"BountyCreated", "BountyFunded", "BountyPaid", "RefundWithdrawn", "Tipped"}
_SQLITE_MAX = 2**63 - 1  # the ledger's SQLite keys: a larger id is simply not there
ZERO = "0x0"  # how the node prints the zero address: a ledger opened without a resolver or admin
# Where the stand-in "publishes" the module and the USDT metadata object (leading zeros on purpose:
# the node prints addresses short, the adapter must read them long).
MODULE_ADDRESS = "0x" + hashlib.sha3_256(b"code3::bounty stand-in").hexdigest()
USDT_METADATA = "0x" + "aa01".rjust(64, "0")
# The escrow resource account (on Aptos: sha3-256 of the publisher, the seed and the scheme byte 0xFF).
ESCROW_ADDRESS = "0x" + hashlib.sha3_256(bytes.fromhex(MODULE_ADDRESS[2:]) + b"code3::bounty::escrow"
                                          + b"\xff").hexdigest()


def short(address: str) -> str:
    """How the node prints an address: 0x and the hex without leading zeros."""
    return "0x" + (normalize_address(address)[2:].lstrip("0") or "0")


class AptosNode:
    def __init__(self, path: Path, module_address: str, assets: dict[str, str], chain_id: int = 2,
                 cooling_period: int = 100, resolver: str | None = None, admin: str | None = None,
                 dispute_period: int = DEFAULT_DISPUTE_PERIOD) -> None:
        """`assets` maps a fungible-asset metadata address to the symbol the ledger books it under;
        `resolver`, `admin` and the periods are what `initialize` was given (admin: the resolver when not
        named)."""
        self.ledger = LocalLedger(path, cooling_period=cooling_period,
                                  resolver=normalize_address(resolver) if resolver else None,
                                  admin=normalize_address(admin) if admin else None, dispute_period=dispute_period)
        self.abi = load_abi()
        self.module_address = normalize_address(module_address)
        self.assets = {normalize_address(a): symbol for a, symbol in assets.items()}
        self.chain_id = chain_id
        self.requests: list[str] = []
        self.committed: list[str] = []
        self.errors: list[str] = []  # the stand-in's own failures (tests assert there are none)
        self.pending_lookups = 0
        self._lock = threading.RLock()
        self._followed_lock = threading.Lock()
        self._followed: list[ChainEvent] = []  # the bounty events so far, in chain order (see `_events`)
        self._streams: dict[str, list[ChainEvent]] = {}  # per event handle field: its events, index = sequence
        self._events_at: dict[int, list[tuple[ChainEvent, int]]] = {}  # version -> (event, its handle sequence)
        self._funded: set[str] = set()
        self._submitted: dict[str, dict[str, Any]] = {}
        self._pending_left: dict[str, int] = {}
        self._fields = list(self.abi.handle_fields.values())
        self._failures: list[tuple[int, str | None, str | None, float | None]] = []
        self._drops: list[float | None] = []
        self._aborts: list[tuple[int, str | None]] = []
        self._before_submit: list[Callable[[], None]] = []
        handler = type("Handler", (Handler,), {"node": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="aptos-node",
                                        daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self.ledger.close()

    # --- knobs -----------------------------------------------------------------------------

    def fail_next(self, n: int, status: int = 503, method: str | None = None, path: str | None = None,
                  retry_after: float | None = None) -> None:
        """Answer the next `n` matching requests (path prefix after /v1) with `status` instead."""
        with self._lock:
            self._failures.extend([(status, method, path, retry_after)] * n)

    def drop_after_commit(self, n: int = 1, hang_s: float | None = None) -> None:
        """Commit the next `n` submitted transactions, then close the connection without an answer."""
        with self._lock:
            self._drops.extend([hang_s] * n)

    def abort_next(self, code: int, location: str | None = None) -> None:
        """The next transaction aborts with this Move code (in our module, or at `location`, e.g. 0x1::coin)."""
        with self._lock:
            self._aborts.append((code, location))

    def before_next_submit(self, action: Callable[[], None]) -> None:
        """Run `action` (e.g. another client's transaction) when the next submission arrives."""
        with self._lock:
            self._before_submit.append(action)

    def mint(self, address: str, amount: int, asset: str = "USDT") -> int:
        self._funded.add(normalize_address(address))
        return self.ledger.mint(normalize_address(address), asset, amount)

    def advance(self, seconds: int) -> int:
        return self.ledger.advance(seconds)

    def count(self, method: str, path_prefix: str = "") -> int:
        return sum(1 for r in self.requests if r.startswith(f"{method} /v1{path_prefix}"))

    # --- requests --------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: dict[str, str], headers: Any, body: bytes) -> Reply:
        self.requests.append(f"{method} {path}")
        with self._lock:
            failure = next((f for f in self._failures if (f[1] in (None, method))
                            and (f[2] is None or path.startswith("/v1" + f[2]))), None)
            if failure is not None:
                self._failures.remove(failure)
        if failure is not None:
            extra = {"Retry-After": str(failure[3])} if failure[3] is not None else {}
            return Reply(failure[0], {"message": "injected failure", "error_code": "internal_error"}, extra)
        for verb, pattern, name in _ROUTES:
            match = re.match(pattern, path)
            if verb == method and match:
                try:
                    return getattr(self, name)(*[unquote(g) for g in match.groups()], query=query,
                                               headers=headers, body=body)
                except Reply as reply:
                    return reply
                except Drop:
                    raise
                except Exception as exc:
                    self.errors.append(f"{method} {path}: {type(exc).__name__}: {exc}")
                    return error(500, f"stand-in error: {exc}", "internal_error")
        return error(404, f"no route {method} {path}", "web_framework_error")

    def _info(self, **_: Any) -> Reply:
        version = self._ledger_version()
        return Reply(200, {"chain_id": self.chain_id, "epoch": "1", "ledger_version": str(version),
                            "oldest_ledger_version": "0", "ledger_timestamp": str(self.ledger.now() * 1_000_000),
                            "node_role": "full_node", "oldest_block_height": "0", "block_height": str(version),
                            "git_hash": "stand-in"})

    def _account(self, address: str, **_: Any) -> Reply:
        addr = normalize_address(address)
        sequence = self.ledger.sequence_number(addr)
        if sequence == 0 and addr not in self._funded:
            raise error(404, f"Account not found by Address({address})", "account_not_found")
        return Reply(200, {"sequence_number": str(sequence), "authentication_key": addr})

    def _submit(self, query: dict[str, str], headers: Any, body: bytes, **_: Any) -> Reply:
        from aptos_sdk.account_address import AccountAddress
        from aptos_sdk.authenticator import Ed25519Authenticator
        from aptos_sdk.bcs import Deserializer
        from aptos_sdk.transactions import SignedTransaction, TransactionPayload

        if headers.get("Content-Type") != BCS_TX:
            raise error(415, f"expected Content-Type {BCS_TX}", "invalid_input")
        with self._lock:
            hooks, self._before_submit = self._before_submit, []
        for hook in hooks:
            hook()
        try:
            signed = SignedTransaction.deserialize(Deserializer(body))
        except Exception as exc:
            raise error(400, f"Failed to deserialize input into SignedTransaction: {exc}", "invalid_input") from None
        auth = signed.authenticator.authenticator
        if not isinstance(auth, Ed25519Authenticator) or not signed.verify():
            raise vm_rejection("INVALID_SIGNATURE")
        raw = signed.transaction
        sender = normalize_address(str(raw.sender))
        if normalize_address(str(AccountAddress.from_key(auth.public_key))) != sender:
            raise vm_rejection("INVALID_AUTH_KEY")
        if raw.chain_id != self.chain_id:
            raise vm_rejection("BAD_CHAIN_ID")
        if raw.payload.variant != TransactionPayload.SCRIPT_FUNCTION:
            raise error(400, "only entry function payloads are served here", "invalid_input")
        function, args = self._decode_call(raw.payload.value)
        tx_hash = "0x" + hashlib.sha3_256(_TX_SALT + b"\x00" + body).hexdigest()
        with self._lock:
            expected = self.ledger.sequence_number(sender)
            if raw.sequence_number < expected:
                raise vm_rejection("SEQUENCE_NUMBER_TOO_OLD")
            if raw.sequence_number > expected:  # a real mempool parks it; nothing here would ever fill the gap
                raise vm_rejection("SEQUENCE_NUMBER_TOO_NEW")
            if raw.expiration_timestamps_secs <= self.ledger.now():
                raise vm_rejection("TRANSACTION_EXPIRED")
            vm_status = self._execute(sender, raw.sequence_number, function, args, tx_hash,
                                      auth.public_key.to_crypto_bytes())
            self._submitted[tx_hash] = self._signed_fields(raw, auth, function, args, vm_status)
            self._pending_left[tx_hash] = self.pending_lookups
            self.committed.append(tx_hash)
            drop = self._drops.pop(0) if self._drops else False
        if drop is not False:
            raise Drop(drop)
        return Reply(202, {"hash": tx_hash, **self._submitted[tx_hash], "type": "pending_transaction"})

    def _decode_call(self, entry: Any) -> tuple[str, dict[str, Any]]:
        from aptos_sdk.account_address import AccountAddress
        from aptos_sdk.bcs import Deserializer

        module_ok = (normalize_address(str(entry.module.address)) == self.module_address
                     and entry.module.name == self.abi.module)
        if not module_ok or entry.function not in self.abi.entry_functions or entry.function == "initialize":
            raise error(400, f"FUNCTION_NOT_FOUND: {entry.module}::{entry.function}", "invalid_input")
        def address(d: Deserializer) -> str:
            return normalize_address(str(AccountAddress.deserialize(d)))

        decoders: dict[str, Callable[[Deserializer], Any]] = {
            "u8": lambda d: d.u8(), "u64": lambda d: d.u64(), "bool": lambda d: d.bool(), "String": lambda d: d.str(),
            "address": address, "vector<u8>": lambda d: d.to_bytes(),
            "vector<u64>": lambda d: d.sequence(Deserializer.u64), "vector<address>": lambda d: d.sequence(address),
        }
        params = self.abi.arguments(entry.function)
        if len(params) != len(entry.args):
            raise error(400, "NUMBER_OF_ARGUMENTS_MISMATCH", "invalid_input")
        args = {name: _decode_exactly(decoders[kind], value) for (name, kind), value in zip(params, entry.args,
                                                                                              strict=True)}
        if "bounty_id" in args:
            args["bounty_id"] = str(args["bounty_id"])  # the ledger's ids are strings
        for name, kind in params:
            if kind == "vector<u8>":
                args[name] = args[name].hex()  # the ledger's link_account takes the key and signature as hex
        return entry.function, args

    def _execute(self, sender: str, sequence: int, function: str, args: dict[str, Any], tx_hash: str,
                 public_key: bytes) -> str | None:
        """The ledger executes (and versions) the transaction; a forced abort replaces the contract's run.

        Returns the vm_status of a forced abort that the ledger's record cannot express (another module's).
        """
        forced = self._aborts.pop(0) if self._aborts else None
        body = getattr(ledger_execution.Execution, function)
        if forced is not None:
            code, location = forced
            ours = location is None and code in Abort._value2member_map_

            def abort(*_: Any) -> Any:
                raise ContractAbort(Abort(code) if ours else Abort.INVALID_STATE)

            # the entry function's body, replaced for this one transaction (under the node's lock; a test's
            # other ledgers are not executing meanwhile)
            setattr(ledger_execution.Execution, function, abort)
        tx = {"sender": sender, "sequence_number": sequence, "function": f"code3::bounty::{function}", "args": args}
        try:
            self.ledger.execute(tx, tx_hash, public_key)
        except TransactionRejected as exc:
            raise error(400, str(exc), "invalid_input") from None
        finally:
            if forced is not None:
                setattr(ledger_execution.Execution, function, body)
        if forced is None or ours:
            return None
        return f"Move abort in {location or f'{short(self.module_address)}::{self.abi.module}'}: {code:#x}"

    def _vm_status(self, abort_code: int | None) -> str:
        if abort_code is None:
            return "Executed successfully"
        abort = Abort(abort_code)
        return (f"Move abort in {short(self.module_address)}::{self.abi.module}: E_{abort.name}({abort_code:#x}): "
                f"{ABORT_CODES[abort][1]}")

    def _signed_fields(self, raw: Any, auth: Any, function: str, args: dict[str, Any],
                       vm_status: str | None) -> dict[str, Any]:
        """What only the signed transaction tells (the ledger records the rest)."""
        params = self.abi.arguments(function)
        return {
            "sender": short(str(raw.sender)), "sequence_number": str(raw.sequence_number),
            "max_gas_amount": str(raw.max_gas_amount), "gas_unit_price": str(raw.gas_unit_price),
            "expiration_timestamp_secs": str(raw.expiration_timestamps_secs),
            "payload": {"type": "entry_function_payload",
                        "function": f"{short(self.module_address)}::{self.abi.module}::{function}",
                        "type_arguments": [], "arguments": [self._json(kind, args[name]) for name, kind in params]},
            "signature": {"type": "ed25519_signature", "public_key": "0x" + auth.public_key.to_crypto_bytes().hex(),
                          "signature": "0x" + auth.signature.data().hex()},
            **({"vm_status": vm_status} if vm_status else {}),
        }

    # --- the ledger as the REST API shows it: built from the ledger's records on every read, so that
    # transactions committed on the ledger directly (not through HTTP) are seen too.

    def _events(self) -> list[ChainEvent]:
        """Every event of the module (the bounties' and the links'), followed incrementally (the ledger only
        appends): a node answers a page of a handle or a transaction without reading the whole chain again, as a
        real one does."""
        with self._followed_lock:
            after = self._followed[-1].version if self._followed else 0
            for ev in self.ledger.events_since(after, limit=-1):
                field = self.abi.handle_fields[ev.type]
                self._events_at.setdefault(ev.version, []).append((ev, len(self._streams.setdefault(field, []))))
                self._streams[field].append(ev)
                self._followed.append(ev)
            return self._followed

    def _ledger_version(self) -> int:
        return self.ledger.latest_version()

    def transaction(self, tx_hash: str) -> dict[str, Any] | None:
        """A committed transaction as GET /transactions/by_hash shows it."""
        record = self.ledger.transaction(tx_hash.lower())
        if record is None:
            return None
        version, events = record["version"], []
        self._events()
        for ev, sequence in self._events_at.get(version, []):
            if ev.type in _MOVES_FUNDS:
                amount = str(ev.data["amount"])
                events += [_framework_event("0x1::fungible_asset::Withdraw", {"store": "0xa", "amount": amount}),
                           _framework_event("0x1::fungible_asset::Deposit", {"store": "0xb", "amount": amount})]
            events.append(self._handle_event(ev, sequence))
        events.append(_framework_event("0x1::transaction_fee::FeeStatement", {"total_charge_gas_units": "7"}))
        zero = "0x" + "00" * 32
        return {"version": str(version), "hash": record["hash"], "state_change_hash": zero, "event_root_hash": zero,
                "state_checkpoint_hash": None, "gas_used": "7", "success": record["success"],
                "vm_status": self._vm_status(record["abort_code"]), "accumulator_root_hash": zero, "changes": [],
                "sender": short(record["sender"]), **self._submitted.get(record["hash"], {}), "events": events,
                "timestamp": str(record["timestamp"] * 1_000_000), "type": "user_transaction"}

    def _handle_event(self, ev: ChainEvent, sequence: int) -> dict[str, Any]:
        field = self.abi.handle_fields[ev.type]
        return {"guid": {"creation_number": str(4 + self._fields.index(field)),
                         "account_address": short(self.module_address)},
                "sequence_number": str(sequence),
                "type": f"{short(self.module_address)}::{self.abi.module}::{ev.type}",
                "data": {name: self._json(kind, ev.data[name]) for name, kind in self.abi.events[ev.type]}}

    def _by_hash(self, tx_hash: str, **_: Any) -> Reply:
        tx = self.transaction(tx_hash)
        if tx is None:
            raise error(404, f"Transaction not found by Transaction hash({tx_hash})", "transaction_not_found")
        with self._lock:
            if self._pending_left.get(tx["hash"], 0) > 0:
                self._pending_left[tx["hash"]] -= 1
                return Reply(200, {**tx, "type": "pending_transaction"})
        return Reply(200, tx)

    def _by_version(self, version: str, **_: Any) -> Reply:
        tx_hash = self.ledger.hash_at(int(version))
        if tx_hash is None:
            raise error(404, f"Transaction not found by Ledger version({version})", "transaction_not_found")
        return Reply(200, self.transaction(tx_hash))

    def _handle_events(self, address: str, handle: str, field: str, query: dict[str, str], **_: Any) -> Reply:
        parts = handle.split("::")
        ours = (normalize_address(address) == self.module_address and len(parts) == 3
                and normalize_address(parts[0]) == self.module_address
                and parts[1:] == [self.abi.module, self.abi.handle_resource] and field in self._fields)
        if not ours:
            raise error(404, f"Resource not found by Address({address}), Struct tag({handle})", "resource_not_found")
        start, limit = int(query.get("start", 0)), min(int(query.get("limit", 25)), 100)
        self._events()
        stream = self._streams.get(field, [])[start:start + limit]
        return Reply(200, [{"version": str(ev.version), **self._handle_event(ev, seq)}
                           for seq, ev in enumerate(stream, start)])

    def _view(self, body: bytes, **_: Any) -> Reply:
        request = json.loads(body)
        address, module, function = request["function"].split("::")
        args = request.get("arguments", [])
        if module == "primary_fungible_store" and function == "balance" and normalize_address(address) == "0x" + \
                "0" * 63 + "1" and request.get("type_arguments") == [FA_METADATA]:
            symbol = self.assets.get(normalize_address(args[1]))
            return Reply(200, [str(self.ledger.balance(normalize_address(args[0]), symbol) if symbol else 0)])
        if normalize_address(address) != self.module_address or module != self.abi.module \
                or function not in self.abi.views:
            raise error(400, f"FUNCTION_NOT_FOUND: {request['function']}", "invalid_input")
        params, returns = self.abi.views[function]["params"], self.abi.views[function]["returns"]
        if len(args) != len(params):
            raise error(400, "NUMBER_OF_ARGUMENTS_MISMATCH", "invalid_input")
        try:
            values = {name: _view_arg(kind, arg) for (name, kind), arg in zip(params, args, strict=True)}
        except (TypeError, ValueError) as exc:
            raise error(400, f"FAILED_TO_PARSE_ARGUMENT: {exc}", "invalid_input") from None
        return Reply(200, [self._json(returns, self._view_value(function, values))])

    def _view_value(self, function: str, v: dict[str, Any]) -> Any:
        """What the module's view returns, read from the ledger (the same tables the module reads)."""
        ledger = self.ledger
        if function == "get_config":
            config = ledger.config()
            return {"admin": config.admin or ZERO, "resolver": config.resolver or ZERO, "asset": config.asset,
                    "escrow": ESCROW_ADDRESS, "cooling_period": config.cooling_period,
                    "dispute_period": config.dispute_period}
        if function == "get_bounty_by_issue_hash":
            return _bounty_value(ledger.find_bounty_by_issue_hash(v["sponsor"], v["issue_hash"]))
        if function in ("list_bounty_ids", "get_bounties"):
            ids = ledger.list_bounty_ids(min(v["start"], _SQLITE_MAX), min(v["limit"], _SQLITE_MAX))
            if function == "list_bounty_ids":
                return [int(i) for i in ids]
            return [_bounty_value(ledger.get_bounty(i)) for i in ids]
        if function == "linked_account":
            return ledger.linked_account(v["resolver"], v["forge_user_id"])
        if function == "linked_forge_id":
            return ledger.linked_forge_id(v["resolver"], v["account"])
        if function == "settled_by":
            found = ledger.settled_by(v["repo_id"], v["pr_number"])
            return None if found is None else int(found)
        if function == "nonce_used":
            return ledger.nonce_used(v["account"], v["nonce"])
        there = v["bounty_id"] <= _SQLITE_MAX
        if function == "get_bounty":
            return _bounty_value(ledger.get_bounty(str(v["bounty_id"])) if there else None)
        if function == "contribution":
            return ledger.contribution(str(v["bounty_id"]), v["funder"]) if there else 0
        if function == "is_entrant":
            return there and ledger.is_entrant(str(v["bounty_id"]), v["worker"])
        raise AssertionError(f"the stand-in renders no view {function}")

    def _json(self, move_type: str, value: Any) -> Any:
        """A Move value as the REST API prints it."""
        if move_type == "vector<u8>":
            return "0x" + (value.hex() if isinstance(value, bytes) else str(value))
        generic = _GENERIC.match(move_type)
        if generic and generic.group(1) == "Option":
            return {"vec": [] if value is None else [self._json(generic.group(2), value)]}
        if generic:
            return [self._json(generic.group(2), item) for item in value]
        if move_type in ("u8", "u16", "u32"):
            return int(value)
        if move_type in ("u64", "u128", "u256"):
            return str(int(value))
        if move_type == "address":
            return short(value) if value else ZERO  # "": an embedded ledger's bounty with no resolver yet
        if move_type in ("bool", "String"):
            return value
        return {name: self._json(kind, value[name]) for name, kind in self.abi.structs[move_type]}


def _view_arg(kind: str, value: Any) -> Any:
    """A view's argument as the REST API takes it (u64 as a decimal string, addresses in any form)."""
    if kind == "u64":
        number = int(str(value))
        if not 0 <= number < 2**64:
            raise ValueError(f"{value!r} is not a u64")
        return number
    if kind == "address":
        return normalize_address(str(value))
    if kind == "String":
        return str(value)
    raise ValueError(f"no view argument of type {kind}")


def _bounty_value(state: BountyState | None) -> dict[str, Any] | None:
    """A ledger's bounty as the module's `Bounty` struct (submissions as a vector, in submission order)."""
    if state is None:
        return None
    return {**state.to_dict(), "bounty_id": int(state.bounty_id), "resolver": state.resolver or "",
            "submissions": [{"worker": w, **s} for w, s in state.submissions.items()]}


def _decode_exactly(decode: Callable[[Any], Any], value: bytes) -> Any:
    """A BCS argument must be consumed whole, as the VM requires."""
    from aptos_sdk.bcs import Deserializer

    reader = Deserializer(value)
    decoded = decode(reader)
    if reader.remaining() != 0:
        raise error(400, "FAILED_TO_DESERIALIZE_ARGUMENT", "invalid_input")
    return decoded


def _framework_event(type_tag: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"guid": {"creation_number": "0", "account_address": "0x0"}, "sequence_number": "0", "type": type_tag,
            "data": data}


_ROUTES = [
    ("GET", r"^/v1/?$", "_info"),
    ("GET", r"^/v1/accounts/([^/]+)$", "_account"),
    ("GET", r"^/v1/accounts/([^/]+)/events/([^/]+)/([^/]+)$", "_handle_events"),
    ("POST", r"^/v1/transactions$", "_submit"),
    ("GET", r"^/v1/transactions/by_hash/([^/]+)$", "_by_hash"),
    ("GET", r"^/v1/transactions/by_version/(\d+)$", "_by_version"),
    ("POST", r"^/v1/view$", "_view"),
]


def aptos_chain(tmp_path: Path) -> Iterator[tuple[Any, Callable[[str, int], None]]]:
    """The contract-test factory: the Aptos adapter against this stand-in; `fund` mints USDT."""
    from adapters.aptos import AptosChain

    node = AptosNode(tmp_path / "aptos-node.sqlite", MODULE_ADDRESS, {USDT_METADATA: "USDT"}, cooling_period=100)
    chain = AptosChain(node.url, MODULE_ADDRESS, network="testnet", asset_metadata=USDT_METADATA)
    yield chain, lambda address, amount: node.mint(address, amount)
    chain.close()
    assert node.errors == [], node.errors
    node.close()
