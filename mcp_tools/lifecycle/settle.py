"""Settlement: the merge (reported by the webhook) starts cooling; the winner claims after it."""

from __future__ import annotations

from typing import Any

from domain import contract
from domain.amounts import display
from domain.bounty import Bounty
from domain.contract import Status
from domain.errors import Code, Code3Error, present
from mcp_tools.declare import tool
from mcp_tools.lifecycle.answers import ClaimAnswer
from mcp_tools.lifecycle.chain_record import chain_read, lookup, raise_for, record, refuse_doomed, require_bounty
from mcp_tools.services import Services


def mark_merged(s: Services, pr_url: str, delivery_id: str, bounty_id: str | None = None) -> dict[str, Any]:
    """Record that a submitted PR merged. Idempotent on (delivery_id, bounty_id); the first merge wins."""
    bounty_id = bounty_id or lookup(s, "pr", pr_url)
    if bounty_id is None:
        raise Code3Error(Code.NOT_FOUND, f"{pr_url} was not submitted for any bounty",
                         "only PRs submitted with server_mcp.submit_pr are settled")
    bounty = require_bounty(s, bounty_id)
    if bounty.has_delivery(delivery_id) or bounty.merged_pr is not None:
        # idempotent on the merge itself: a redelivery, a replay under new delivery ids, or the reconciliation
        # with the forge finding a merge already recorded, adds no event (the label still catches up)
        bounty, _ = record(s, bounty_id, bounty)
        return _answer(bounty, duplicate=True, pr_url=pr_url)
    if bounty.status in (Status.OPEN, Status.STARTED, Status.PR_SUBMITTED):
        pr = s.forge.get_pr(pr_url)
        if pr is None or not pr.merged:
            raise Code3Error(Code.PRECONDITION, f"{pr_url} is not merged on the forge",
                             "report a merge only after the PR merged")
        # the winner is the PR's submitter on chain (submit_pr tied the PR to its author on the forge)
        winner = next((w for w, sub in bounty.submissions.items() if sub["pr_url"] == pr_url), "")
        resolver = s.chain.config().resolver
        try:
            refuse_doomed(s, bounty_id, lambda state, now: contract.mark_merged(
                state, s.signer.address, resolver, pr_url, winner, now), f"bounty {bounty_id}")
            raise_for(s.chain.mark_merged(s.signer, bounty_id, pr_url, winner), f"bounty {bounty_id}")
        except Code3Error as refused:
            # another reporter (the worker's merge look, a second serve's webhook) merged it since the read above:
            # the chain's merge is the answer, and this delivery a duplicate of it, not a failure
            bounty, _ = record(s, bounty_id, bounty)
            if refused.code is not Code.INVALID_STATE or bounty.merged_pr is None:
                raise
            return _answer(bounty, duplicate=True, pr_url=pr_url)

    def report(current: Bounty) -> bool:
        if current.has_delivery(delivery_id):
            return False
        current.report_merge(delivery_id=delivery_id, pr_url=pr_url)
        return True

    bounty, _ = record(s, bounty_id, bounty, then=report)  # the merge, its delivery and the label: one save
    return _answer(bounty, duplicate=False, pr_url=pr_url)


def _answer(bounty: Bounty, duplicate: bool, pr_url: str | None = None) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "success": True, "bounty_id": bounty.bounty_id, "state": Status(bounty.status).name,
        "winner": bounty.winner, "merged_pr": bounty.merged_pr, "merged_at": bounty.merged_at,
        "cooling_until": bounty.cooling_until, "duplicate": duplicate,
    }
    if pr_url is not None and bounty.merged_pr not in (None, pr_url):
        answer["note"] = f"{pr_url} merged after {bounty.merged_pr}: the first merged PR won"
    return answer


def cancel_bounty(s: Services, bounty_id: str) -> dict[str, Any]:
    """The sponsor takes back an unmerged bounty (or disputes one that is cooling): the escrow is refunded.
    Every caller, a repeat or a racing one included, answers the transaction that cancelled it."""
    bounty = require_bounty(s, bounty_id)
    if bounty.sponsor != s.signer.address:
        raise Code3Error(Code.UNAUTHORIZED, f"bounty {bounty_id} belongs to another sponsor",
                         "cancel with the sponsor's identity (CODE3_IDENTITY)")
    receipt = None
    refused: Code3Error | None = None
    if bounty.status is not Status.CANCELLED:
        try:
            refuse_doomed(s, bounty_id, lambda state, now: contract.cancel(state, s.signer.address, now),
                          f"bounty {bounty_id}")
            receipt = s.chain.cancel_bounty(s.signer, bounty_id)
        except Code3Error as exc:  # a racing cancel may have won since the read above: the record below tells
            refused = exc
    bounty, _ = record(s, bounty_id, bounty)  # also after a crash: the events and the label catch up
    if bounty.status is not Status.CANCELLED:
        if refused is not None:
            raise refused
        if receipt is not None:
            raise_for(receipt, f"bounty {bounty_id}")
    # a racing cancel that lost is answered below, with the winner's transaction
    with chain_read():
        cancelled = [ev for ev in s.chain.bounty_events(bounty_id) if ev.type == "BountyCancelled"]
    return {"success": True, "bounty_id": bounty_id, "state": Status(bounty.status).name,
            "tx_hash": present(cancelled[0] if cancelled else None, "the cancelling transaction").tx_hash,
            "refunded": str(bounty.amount), "asset": bounty.asset,
            "refunded_display": display(bounty.amount, bounty.asset)}


@tool("server_mcp.claim_payout", profiles=("server",))
def claim_payout(s: Services, bounty_id: str) -> ClaimAnswer:
    """Claim the bounty after its cooling period (winner only)."""
    bounty = require_bounty(s, bounty_id)
    receipt, context = None, ""
    if bounty.status is not Status.PAID:
        context = _refuse_unclaimable(s, bounty)
        receipt = s.chain.claim_payout(s.signer, bounty_id)
    bounty, _ = record(s, bounty_id, bounty)  # also after a crash or a race: the events and the label catch up
    if receipt is not None and not receipt.success and bounty.status is not Status.PAID:
        raise_for(receipt, context)  # a racing claim that lost is answered below, with the winner's tx
    if bounty.winner != s.signer.address:
        raise Code3Error(Code.UNAUTHORIZED, f"bounty {bounty_id} was paid to its winner, not to you",
                         "only the winner can claim")
    return {"success": True, "bounty_id": bounty_id, "tx_hash": present(bounty.paid_tx, "the payout's transaction"),
            "amount": str(bounty.amount), "asset": bounty.asset, "amount_display": display(bounty.amount, bounty.asset)}


def _refuse_unclaimable(s: Services, bounty: Bounty) -> str:
    """Refuse what the chain would refuse, on the state just synced from it, without spending a transaction."""
    if bounty.status is not Status.COOLING_DOWN or bounty.cooling_until is None:
        raise Code3Error(Code.INVALID_STATE, f"bounty {bounty.bounty_id} is {Status(bounty.status).name.lower()}, "
                         "not cooling down after a merge", "claim after the winning PR merged and cooling ended")
    if bounty.winner != s.signer.address:
        raise Code3Error(Code.UNAUTHORIZED, f"bounty {bounty.bounty_id} was won by another worker",
                         "only the winner (the worker whose PR merged first) can claim")
    remaining = bounty.cooling_until - s.chain.now()
    if remaining > 0:
        raise Code3Error(Code.COOLING, f"bounty {bounty.bounty_id} is cooling down for {remaining} more seconds",
                         f"claim again after cooling_until={bounty.cooling_until}")
    return f"cooling_until={bounty.cooling_until}"
