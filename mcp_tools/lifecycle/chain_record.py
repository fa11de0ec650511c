"""Recording chain facts: the Bounty aggregate follows the chain, never the other way round."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from adapters.event_store import Change, EventStore
from adapters.ports import Forge, Receipt
from domain.bounties.bounty import Bounty
from domain.bounties.chain_events import ChainEvent
from domain.bounties.contract import ABORT_CODES, STATUS_LABELS, Abort, BountyState, ContractAbort, Status, state_label
from domain.bounties.index import Index
from domain.bounties.issue import Issue
from domain.errors import Code, Code3Error
from mcp_tools.services import Services

HINTS: dict[Abort, str] = {
    Abort.BOUNTY_NOT_FOUND: "check the bounty_id (publish returns it; accept_task reports it)",
    Abort.INVALID_STATE: "read the bounty's state first: this step is not allowed in it",
    Abort.NOT_SPONSOR: "run this with the sponsor's identity (CODE3_IDENTITY)",
    Abort.NOT_RESOLVER: "this is the bounty's resolver's to do (on the embedded default the serve identity, "
                        "CODE3_RESOLVER); let `code3 serve` or the worker do it",
    Abort.COOLING: "wait until cooling_until, then claim again",
    Abort.NOT_ACCEPTED: "accept the task first (server_mcp.accept_task)",
    Abort.ISSUE_HASH_EXISTS: "re-run publish with the same arguments to resume it",
    Abort.INSUFFICIENT_BALANCE: "fund the account (`code3 account fund NAME --amount N` on the embedded ledger), "
                                "then retry",
    Abort.INVALID_AMOUNT: "pass a positive integer amount in the asset's smallest unit",
    Abort.PR_NOT_SUBMITTED: "the PR must have been submitted on chain (server_mcp.submit_pr) by that worker",
    Abort.SPONSOR_CANNOT_ACCEPT: "accept with a worker identity, not the sponsor's",
    Abort.PR_ALREADY_SUBMITTED: "a worker submits one PR per bounty; reuse the PR already submitted",
    Abort.NOT_ADMIN: "run this with the contract admin's identity",
    Abort.NOT_LINKED: "the forge account must be linked to its chain address first (`code3 account link`)",
    Abort.HELD_BY_OTHER: "choose another task (server_mcp.accept_best_task), or accept again after the hold ends",
    Abort.HOLD_EXPIRED: "accept the task again (server_mcp.accept_task) to renew the hold if nobody else took it",
    Abort.PR_ALREADY_SETTLED: "a merged PR settles one bounty: open another PR for this one",
    Abort.DEADLINE_NOT_REACHED: "wait for the bounty's deadline, or for the submitted PR to be merged or closed",
    Abort.DISPUTE_WINDOW_CLOSED: "the time for this is over: a payout is due to the winner, or a refund to the "
                                 "funders",
    Abort.TOO_MANY_SUBMISSIONS: "choose another task (server_mcp.accept_best_task)",
    Abort.INVALID_DEADLINE: "pass a deadline after now and at most 365 days ahead",
    Abort.INVALID_MODE: "use mode exclusive or contest",
    Abort.INVALID_HOLD: "exclusive: a hold time of 1 s to 30 days; contest: no hold time",
    Abort.INVALID_COOLING_PERIOD: "use a cooling period of 1 s to 90 days",
    Abort.INVALID_REPO: "pass the repository as owner/name (at most 140 bytes)",
    Abort.INVALID_ISSUE_HASH: "the issue hash is the sha256 of the publish terms, 64 lowercase hex digits",
    Abort.INVALID_PR_URL: "pass the PR's URL (at most 300 bytes)",
    Abort.INVALID_COMMIT_SHA: "pass the PR head's full commit id (40 or 64 lowercase hex digits)",
    Abort.SUBMISSION_LIVE: "wait until the resolver has seen the submitted PR closed (close it on the forge), or "
                           "until 7 days after the deadline",
    Abort.DISPUTED: "wait for the resolver's ruling (`code3 bounty rule`), or for the dispute's time to end",
    Abort.NO_DISPUTE: "open a dispute first (`code3 bounty dispute ID --reason ...`)",
    Abort.INVALID_REASON: "give a reason of 1 to 500 bytes",
    Abort.INVALID_SHARE: "a ruling's share is 0 (refund) to 10000 (pay) basis points",
    Abort.NONCE_USED: "this action was done already under this nonce; use a new nonce for a new one",
    Abort.NO_REFUND: "nothing is due to this funder: the bounty was not refunded, or the share was withdrawn",
    Abort.INVALID_SPLIT: "name 1 to 10 different linked recipients, each with a share of 1 to 1000000",
    Abort.INVALID_SIGNATURE: "the statement must be signed by the key of the account it names (`code3 account link`)",
    Abort.INVALID_LINK: "a link names a forge user id above 0 and a login of 1 to 39 bytes",
    Abort.WRONG_REPO: "only a PR of the bounty's repository can settle it",
    Abort.CLOSED_RECENTLY: "a submitted PR was closed unmerged: its worker may dispute for 7 days after; cancel then",
    Abort.NOT_WINNER: "run this with the winner's identity",
    Abort.INVALID_DISPUTE_PERIOD: "use a dispute period of 1 s to 90 days",
}


READ_HINT = ("the chain node did not answer a read (no transaction was sent): retry in a moment; check the "
             "node's URL (CODE3_APTOS_NODE_URL) and that the network is reachable")


@contextmanager
def chain_read() -> Iterator[None]:
    """A read of the chain that fails answers E_CHAIN_TX_FAILED with a hint about reads, not transactions."""
    try:
        yield
    except Code3Error as exc:
        if exc.code is not Code.CHAIN_TX_FAILED:
            raise
        raise Code3Error(exc.code, exc.message, READ_HINT) from None


def raise_for(receipt: Receipt, context: str = "") -> Receipt:
    """A Move abort is final: map it to its error code at once."""
    if receipt.success:
        return receipt
    try:
        abort = Abort(receipt.abort_code or 0)
    except ValueError:
        raise Code3Error(Code.CHAIN_TX_FAILED, f"transaction {receipt.tx_hash} failed: {receipt.vm_status}",
                         "check the bounty's state and the account's balance, then retry") from None
    raise _abort_error(abort, context, f"tx {receipt.tx_hash}")


def _abort_error(abort: Abort, context: str, where: str) -> Code3Error:
    code, message = ABORT_CODES[abort]
    if abort is Abort.INSUFFICIENT_BALANCE:
        code = Code.CHAIN_TX_FAILED  # seed 001: E_CHAIN_TX_FAILED, "重试/检查 Gas/余额/网络"
    hint = HINTS[abort]
    if context:
        hint = f"{hint} ({context})"
    return Code3Error(code, f"{message} ({where}, abort {int(abort)})", hint)


def refuse_doomed(s: Services, bounty_id: str, rule: Callable[[BountyState, int], object], context: str = "") -> None:
    """Run the contract's own rule on a fresh read of the chain before sending a transaction: what the chain
    would refuse is refused here, with the same code and hint, and no gas is spent on it (the chain stays
    the final judge of what it is then sent)."""
    with chain_read():
        state, now = s.chain.get_bounty(bounty_id), s.chain.now()
        if state is not None and state.resolver is None:  # as the chain: it takes the registry's, once
            state.resolver = s.chain.config().resolver
    if state is None:
        raise Code3Error(Code.NOT_FOUND, f"no bounty {bounty_id} on chain", "check the bounty_id")
    try:
        rule(copy.deepcopy(state), now)
    except ContractAbort as exc:
        raise _abort_error(exc.abort, context, "refused before sending a transaction") from None


def sync_bounty(s: Services, bounty_id: str, known: Bounty | None = None,
                then: Callable[[Bounty], bool] | None = None) -> Bounty | None:
    """Record every chain event of a bounty not yet recorded, in chain order.

    Called after each transaction and before each decision, so events of a transaction whose
    recording was lost (a crash, another machine) are recorded exactly once, by whoever looks next.
    """
    with chain_read():
        events = s.chain.bounty_events(bounty_id)
    if not events:
        return None
    return s.store.update_all(_follow(bounty_id, events, known, then, new=False))[0]


def bounty_change(s: Services, bounty_id: str, known: Bounty | None = None,
                  then: Callable[[Bounty], bool] | None = None, new: bool = False) -> Change[Bounty] | None:
    """The sync as part of a unit of work; `then` may record one more event on the synced bounty;
    `new` when the bounty was just created on chain (most likely not recorded yet)."""
    with chain_read():
        events = s.chain.bounty_events(bounty_id)
    return _follow(bounty_id, events, known, then, new) if events else None


def _follow(bounty_id: str, events: list[ChainEvent], known: Bounty | None,
            then: Callable[[Bounty], bool] | None, new: bool) -> Change[Bounty]:
    def apply(current: Bounty | None) -> Bounty | None:
        bounty = current or Bounty.from_chain(events[0])
        changed = [bounty.observe(ev) for ev in events[1:]]
        if then is not None:
            changed.append(then(bounty))
        return bounty if current is None or any(changed) else None

    return Change(Bounty, Bounty.create_id(bounty_id), apply, known, new=new)


def record(s: Services, bounty_id: str, known: Bounty | None = None, then: Callable[[Bounty], bool] | None = None,
           issue: Issue | None = None, extra: tuple[Change[Any], ...] = ()) -> tuple[Bounty, list[str]]:
    """After a transaction: the bounty's new chain events, its issue's state label and `extra` changes,
    saved in one transaction. Returns the bounty and the issue's labels.

    The label is set on the forge first, once, from the state the chain's events lead to (the forge
    write is idempotent); the unit of work itself is pure, so a conflict retry repeats no I/O.
    """
    with chain_read():
        events = s.chain.bounty_events(bounty_id)
    if not events:
        raise Code3Error(Code.NOT_FOUND, f"no bounty {bounty_id} on chain", "check the bounty_id")
    issue = issue or s.store.get(Issue, Issue.create_id(str(events[0].data["issue_hash"])))
    labels = mirror_state_label(s.forge, issue, *_status_after(events))
    changes = [_follow(bounty_id, events, known, then, new=False), *extra]
    if issue is not None and labels is not None:
        changes.insert(1, labels_recorded(issue.id, labels, issue))
    return s.store.update_all(*changes)[0], labels or []


def _status_after(events: list[ChainEvent]) -> tuple[Status, bool]:
    """The state the chain's events lead to, and whether a dispute is open then, folded by the aggregate's own
    rules (nothing is saved)."""
    preview = Bounty.from_chain(events[0])
    for ev in events[1:]:
        preview.observe(ev)
    return Status(preview.status), preview.dispute is not None


def require_bounty(s: Services, bounty_id: str) -> Bounty:
    """The bounty, synced with the chain first; E_NOT_FOUND when the chain has no such bounty."""
    bounty = sync_bounty(s, str(bounty_id))
    if bounty is None:
        raise Code3Error(Code.NOT_FOUND, f"no bounty {bounty_id} on chain",
                         "check the bounty_id (accept_task returns it)")
    return bounty


def reflect_labels(store: EventStore, forge: Forge, issue_id: UUID, status: Status, disputed: bool = False
                   ) -> list[str]:
    """Set the issue's state label for `status`, keeping other labels; idempotent, so safe to repeat."""
    issue = store.get(Issue, issue_id)
    labels = mirror_state_label(forge, issue, status, disputed)
    if issue is None or labels is None:
        return []
    store.update_all(labels_recorded(issue_id, labels, issue))
    return labels


def mirror_state_label(forge: Forge, issue: Issue | None, status: Status, disputed: bool = False
                       ) -> list[str] | None:
    """Put `status`'s label on the issue (other labels kept; `disputed` while a dispute is open); the labels it now
    has, or None when the issue is not open on the forge yet."""
    if issue is None or issue.number is None:
        return None
    current = forge.get_issue(issue.repo, issue.number).labels
    wanted = sorted({label for label in current if label not in STATUS_LABELS} | {state_label(status, disputed)})
    if wanted != sorted(current):
        forge.set_labels(issue.repo, issue.number, wanted)
    return wanted


def labels_recorded(issue_id: UUID, labels: list[str], known: Issue | None = None) -> Change[Issue]:
    """Record the labels the forge now shows (no event when they are already recorded)."""
    return Change.step(Issue, issue_id, lambda issue: issue.mirror_labels_once(labels), known, if_present=True)


def register(s: Services, kind: str, key: str, target: str) -> None:
    """Point a natural key at a target; registering the same pair again is a no-op."""
    s.store.update_all(index_change(kind, key, target))


def index_change(kind: str, key: str, target: str, first_wins: bool = False) -> Change[Index]:
    """Point `key` at `target`. A fresh registration is nearly always new, so its first attempt does not
    load (see `Change.new`); with `first_wins` (a lookup re-derived from the chain, usually present already)
    it loads, and a key that points elsewhere is left as it is instead of refused."""

    def apply(current: Index | None) -> Index | None:
        if current is not None:
            if current.target != target and not first_wins:
                raise Code3Error(Code.IDEMPOTENT_REJECTED, f"{kind} {key} already belongs to {current.target}",
                                 "reuse the existing one")
            return None
        return Index(kind=kind, key=key, target=target)

    return Change(Index, Index.create_id(kind, key), apply, new=not first_wins)


def lookup(s: Services, kind: str, key: str) -> str | None:
    found = s.store.get(Index, Index.create_id(kind, key))
    return found.target if found else None
