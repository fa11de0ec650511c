"""Recording chain facts: the Bounty aggregate follows the chain, never the other way round."""

from __future__ import annotations

from collections.abc import Callable
from uuid import UUID

from adapters.event_store import EventStore
from adapters.ports import Forge, Receipt
from domain.bounty import Bounty
from domain.contract import ABORT_CODES, STATUS_LABELS, Abort, Status
from domain.errors import Code, Code3Error
from domain.index import Index
from domain.issue import Issue
from mcp_tools.context import Services

HINTS: dict[Abort, str] = {
    Abort.BOUNTY_NOT_FOUND: "check the bounty_id (publish returns it; accept_task reports it)",
    Abort.INVALID_STATE: "read the bounty's state first: this step is not allowed in it",
    Abort.NOT_SPONSOR: "run this with the sponsor's identity (CODE3_IDENTITY)",
    Abort.NOT_WINNER: "only the worker whose PR merged first can claim this bounty",
    Abort.COOLING: "wait until cooling_until, then claim again",
    Abort.NOT_ACCEPTED: "accept the task first (server_mcp.accept_task)",
    Abort.ISSUE_HASH_EXISTS: "re-run publish with the same arguments to resume it",
    Abort.INSUFFICIENT_BALANCE: "fund the sponsor's account (`code3 account fund NAME --amount N`)",
    Abort.INVALID_AMOUNT: "pass a positive integer amount in the asset's smallest unit",
    Abort.PR_NOT_SUBMITTED: "the PR must have been submitted on chain (server_mcp.submit_pr) before it merges",
    Abort.SPONSOR_CANNOT_ACCEPT: "accept with a worker identity, not the sponsor's",
    Abort.PR_ALREADY_SUBMITTED: "a worker submits one PR per bounty; reuse the PR already submitted",
}


def raise_for(receipt: Receipt, context: str = "") -> Receipt:
    """A Move abort is final: map it to its error code at once."""
    if receipt.success:
        return receipt
    try:
        abort = Abort(receipt.abort_code or 0)
    except ValueError:
        raise Code3Error(Code.CHAIN_TX_FAILED, f"transaction {receipt.tx_hash} failed: {receipt.vm_status}",
                         "check the bounty's state and the account's balance, then retry") from None
    code, message = ABORT_CODES[abort]
    hint = HINTS[abort]
    if context:
        hint = f"{hint} ({context})"
    raise Code3Error(code, f"{message} (tx {receipt.tx_hash}, abort {int(abort)})", hint)


def sync_bounty(s: Services, bounty_id: str, known: Bounty | None = None,
                then: Callable[[Bounty], bool] | None = None) -> Bounty | None:
    """Record every chain event of a bounty not yet recorded, in chain order.

    Called after each transaction and before each decision, so events of a transaction whose
    recording was lost (a crash, another machine) are recorded exactly once, by whoever looks next.
    `known` is the aggregate as the caller last loaded it (saves a reload when it is still current);
    `then` may record one more event on the synced aggregate in the same save (True when it did).
    """
    events = s.chain.bounty_events(bounty_id)
    if not events:
        return None

    def change(current: Bounty | None) -> Bounty | None:
        bounty = current or Bounty.from_chain(events[0])
        changed = [bounty.observe(ev) for ev in events[1:]]
        if then is not None:
            changed.append(then(bounty))
        return bounty if current is None or any(changed) else None

    return s.store.update(Bounty, Bounty.create_id(bounty_id), change, known=known)


def mirror_labels(s: Services, bounty: Bounty, issue: Issue | None = None) -> list[str]:
    """Put the bounty's state label on its issue (the forge reflects the chain; it never drives it)."""
    return reflect_labels(s.store, s.forge, Issue.create_id(bounty.issue_hash), Status(bounty.status), issue)


def reflect_labels(store: EventStore, forge: Forge, issue_id: UUID, status: Status,
                   known: Issue | None = None) -> list[str]:
    """Set the issue's state label for `status`, keeping other labels; idempotent, so safe to repeat."""
    labels: list[str] = []

    def change(issue: Issue | None) -> Issue | None:
        if issue is None or issue.number is None:
            return None
        current = forge.get_issue(issue.repo, issue.number).labels
        wanted = sorted({label for label in current if label not in STATUS_LABELS} | {status.label})
        if wanted != sorted(current):
            forge.set_labels(issue.repo, issue.number, wanted)
        labels[:] = wanted
        if issue.mirrored_labels == wanted:
            return None
        issue.mirror_labels(labels=wanted)
        return issue

    store.update(Issue, issue_id, change, known=known)
    return labels


def register(s: Services, kind: str, key: str, target: str) -> None:
    """Point a natural key at a target; registering the same pair again is a no-op."""

    def change(current: Index | None) -> Index | None:
        if current is not None:
            if current.target != target:
                raise Code3Error(Code.IDEMPOTENT_REJECTED, f"{kind} {key} already belongs to {current.target}",
                                 "reuse the existing one")
            return None
        return Index(kind=kind, key=key, target=target)

    s.store.update(Index, Index.create_id(kind, key), change)


def lookup(s: Services, kind: str, key: str) -> str | None:
    found = s.store.get(Index, Index.create_id(kind, key))
    return found.target if found else None
