"""A publish's terms, checked once and kept as their types from the tool's arguments to the Issue and the chain.

The terms split in two: those hashed into `issue_hash` (repository, feature, spec, amount, asset, network), which
name the publish, and those compared on a repeat (mode, hold time), which a bounty keeps on chain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from adapters.paths import PathRefused, ProjectPaths
from adapters.redact import redact
from domain.bounties.amounts import display, with_units
from domain.bounties.contract import MAX_HOLD_SECONDS, Mode
from domain.bounties.spec import count_tasks
from domain.canonical import issue_hash, sha256_hex
from domain.errors import Code, Code3Error
from domain.values import Amount, FeatureId, Repo, parse_amount, parse_duration, parse_feature_id, parse_repo
from mcp_tools.lifecycle.chain_record import chain_read
from mcp_tools.services import Services

ASSET = re.compile(r"[A-Z][A-Z0-9]{1,15}")
SEED_NETWORK = "testnet"  # seed 001's publish example names it
LOCAL_CHAIN = "code3-local"  # the embedded ledger: no real money
DEFAULT_HOLD = 3 * 24 * 3600  # exclusive: the accepting worker holds the task three days unless publish says
DEFAULT_LABELS = ("code3", "open")


@dataclass(frozen=True)
class PublishTerms:
    repo: Repo
    feature_id: FeatureId
    spec_path: str
    amount: Amount
    asset: str
    network: str
    mode: Mode
    hold_seconds: int
    deadline_seconds: int | None
    labels: list[str]
    assignees: list[str]

    @classmethod
    def parse(cls, s: Services, *, repo: object, feature_id: object, spec_path: str, amount: object, asset: object,
              network: str | None, labels: list[str] | None, assignees: list[str] | None,
              deadline_seconds: int | None, mode: str, hold_seconds: int | None) -> PublishTerms:
        """Every argument checked before anything is read or written; a refusal names the argument."""
        parsed_repo, parsed_feature = parse_repo(repo), parse_feature_id(feature_id)
        parsed_amount = parse_amount(amount)  # digits within u64: "7\n", "007" and 2^64 are refused
        if not isinstance(asset, str) or not ASSET.fullmatch(asset):
            raise Code3Error(Code.VALIDATION, f"invalid asset {asset!r}", "use the asset's symbol, e.g. USDT")
        network = network or s.chain.network
        if network not in accepted_networks(s):
            names = " or ".join(repr(n) for n in accepted_networks(s))
            raise Code3Error(Code.VALIDATION, f"this server's chain ({chain_name(s)}) answers to network {names}, "
                             f"not {network!r}",
                             f"pass network={s.chain.network!r} (or omit it), or configure CODE3_CHAIN")
        if deadline_seconds is not None:
            parse_duration(deadline_seconds, "deadline_seconds")  # bounded: 10**30 never reaches the log
        chosen = _mode(mode)
        return cls(repo=parsed_repo, feature_id=parsed_feature, spec_path=spec_path, amount=parsed_amount,
                   asset=asset, network=network, mode=chosen, hold_seconds=_hold_time(chosen, hold_seconds),
                   deadline_seconds=deadline_seconds, labels=sorted({*(labels or DEFAULT_LABELS), *DEFAULT_LABELS}),
                   assignees=list(assignees or []))

    def issue_hash(self, spec_digest: str) -> str:
        """The publish's idempotency key (DESIGN.md): the amount hashed as its decimal string, as seed 001 says."""
        return issue_hash(repo=self.repo, feature_id=self.feature_id, spec_digest=spec_digest,
                          amount=str(self.amount), asset=self.asset, network=self.network)


@dataclass(frozen=True)
class SpecText:
    """The spec as publish posts it: its text, digest and effort (the number of tasks beside it, at least 1)."""

    text: str
    digest: str
    effort: int

    @classmethod
    def read(cls, s: Services, spec_path: str) -> SpecText:
        paths = ProjectPaths(s.project)  # never a key, the state directory or a symlink out of the project
        try:
            spec_file = paths.resolve(spec_path)
            text = paths.read_text(spec_path)
        except PathRefused as refused:
            if refused.reason == "not_found":
                raise Code3Error(Code.NOT_FOUND, f"{spec_path} does not exist", "run spec_mcp.specify first") from None
            raise
        if redact(text).total:  # the issue is public to whoever can read the repository
            raise Code3Error(Code.VALIDATION, f"{spec_path} holds a credential (a token, key or password)",
                             "remove it from the spec: publish posts the spec on the issue, for anyone to read")
        tasks_md = spec_file.parent / "tasks.md"
        effort = max(1, count_tasks(paths.read_text(paths.relative(tasks_md)))) if tasks_md.exists() else 1
        return cls(text=text, digest=sha256_hex(text), effort=effort)


def check_funding(s: Services, terms: PublishTerms, key: str) -> None:
    """What the chain would refuse, checked before the issue is opened or anything recorded: the asset must be the
    one the contract escrows (the Move module aborts on any other) and the sponsor must hold the amount. A bounty
    already created under `key` (a resumed publish) has spent the balance already and needs neither. The chain
    stays the final judge: a balance spent between this read and the create leaves the issue marked unfunded."""
    with chain_read():
        if s.chain.find_bounty_by_issue_hash(s.signer.address, key) is not None:
            return
        escrowed = s.chain.config().asset
        if terms.asset != escrowed:
            raise Code3Error(Code.VALIDATION, f"this server's chain ({chain_name(s)}) escrows {escrowed}, not "
                             f"{terms.asset}", f"pass asset={escrowed!r}")
        balance = s.chain.balance(s.signer.address, terms.asset)
    if balance < terms.amount:
        fund = (f"top it up with `code3 account fund {s.signer.name} --amount {terms.amount - balance}` (embedded "
                "ledger)" if s.chain.network == "local" else f"send {terms.asset} to {s.signer.address}")
        raise Code3Error(Code.CHAIN_TX_FAILED,
                         f"sponsor {s.signer.name} ({s.signer.address}) holds {with_units(balance, terms.asset)}, "
                         f"less than the bounty's {with_units(terms.amount, terms.asset)}; nothing was published",
                         f"{fund}, then retry; or publish a smaller amount (in the asset's smallest unit: "
                         "\"1000000\" is 1 USDT)")


def amount_warnings(s: Services, amount: int, asset: str) -> list[str]:
    """A warning, not a refusal (seed 001's own example publishes "1"), when the amount is below the project's floor
    (CODE3_AMOUNT_WARN_BELOW, in the asset's smallest unit): amounts count smallest units, so "1" USDT is 0.000001."""
    floor = s.amount_warn_below
    if floor <= 0 or amount >= floor:
        return []
    return [f"the bounty escrows {display(amount, asset)} ({amount} smallest unit{'' if amount == 1 else 's'}), "
            f"below {display(floor, asset)} (CODE3_AMOUNT_WARN_BELOW): amounts are in the asset's smallest unit, "
            f"\"1000000\" is 1 USDT; if you meant more, publish the feature again with the intended amount"]


def chain_name(s: Services) -> str:
    """Which ledger really holds the escrow, as the issue's metadata says (`bounty.chain`)."""
    return LOCAL_CHAIN if s.chain.network == "local" else "aptos"


def accepted_networks(s: Services) -> tuple[str, ...]:
    """The embedded ledger also answers to the seed's network name, so the seed's examples run verbatim."""
    return (s.chain.network, SEED_NETWORK) if s.chain.network == "local" else (s.chain.network,)


def _mode(mode: object) -> Mode:
    if mode not in ("exclusive", "contest"):
        raise Code3Error(Code.VALIDATION, f"unknown mode {mode!r}", "use exclusive (the default) or contest")
    return Mode.EXCLUSIVE if mode == "exclusive" else Mode.CONTEST


def _hold_time(mode: Mode, hold_seconds: int | None) -> int:
    """The publish's hold time: a term of the bounty (compared on a repeat like the amount, not hashed)."""
    if mode is Mode.CONTEST:
        if hold_seconds not in (None, 0):
            raise Code3Error(Code.VALIDATION, "a contest takes no hold_seconds",
                             "omit hold_seconds, or publish with mode exclusive")
        return 0
    hold = DEFAULT_HOLD if hold_seconds is None else parse_duration(hold_seconds, "hold_seconds")
    if hold > MAX_HOLD_SECONDS:
        raise Code3Error(Code.VALIDATION, f"hold_seconds {hold} is more than {MAX_HOLD_SECONDS} (30 days)",
                         f"pass 1 to {MAX_HOLD_SECONDS} seconds, or omit it for {DEFAULT_HOLD} (3 days)")
    return hold
