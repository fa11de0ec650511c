"""Settlement: a merge the resolver verified on the forge starts cooling; the winner is paid after it; a dispute goes
to the bounty's resolver, who rules; a refunded bounty is withdrawn by each funder."""

from __future__ import annotations

from typing import Any

from domain.bounties import contract
from domain.bounties.amounts import display
from domain.bounties.bounty import Bounty
from domain.bounties.contract import BPS, Status
from domain.errors import Code, Code3Error, present
from mcp_tools.declare import tool
from mcp_tools.lifecycle import resolver
from mcp_tools.lifecycle.answers import ClaimAnswer
from mcp_tools.lifecycle.chain_record import chain_read, raise_for, record, refuse_doomed, require_bounty
from mcp_tools.services import Services
from projections.bounties import board
from projections.bounties.board import BountyBoard
from projections.runner import follow


def mark_merged(s: Services, pr_url: str, delivery_id: str, bounty_id: str | None = None) -> dict[str, Any]:
    """A PR submitted for `bounty_id` (None: for any bounty, as a webhook knows only the PR) closed on the forge: the
    resolver judges its submissions of that PR from the forge and reports the merge, or rejects them. Idempotent on
    the merge itself (a redelivery, a replay under new delivery ids, a second reporter add no second event)."""
    if bounty_id is None:
        return settle_pr(s, pr_url, delivery_id)
    bounty = require_bounty(s, bounty_id)
    if bounty.has_delivery(delivery_id) or bounty.merged_pr is not None:
        bounty, _ = record(s, bounty_id, bounty)  # the label catches up
        return _answer(bounty, duplicate=True, pr_url=pr_url)
    verdicts = resolver.review(s, bounty_id, only_pr=pr_url)
    bounty = require_bounty(s, bounty_id)
    merged = bounty.merged_pr is not None
    if not merged:
        waiting = next((v for v in verdicts if v.action == "wait"), None)
        if waiting is not None:
            raise Code3Error(Code.PRECONDITION, f"bounty {bounty_id} is not settled by {pr_url}: {waiting.note}",
                             "the resolver looks again each round; a link statement or a merge settles it")
        rejected = [v for v in verdicts if v.action == "reject"]
        if not rejected and not verdicts:
            raise Code3Error(Code.NOT_FOUND, f"{pr_url} has no live submission for bounty {bounty_id}",
                             "only PRs submitted with server_mcp.submit_pr are settled")
        answer = _answer(bounty, duplicate=False, pr_url=pr_url)
        answer["rejected"] = [{"worker": v.worker, "reason": v.reason.label if v.reason else "", "why": v.note}
                              for v in rejected]
        return answer

    def report(current: Bounty) -> bool:
        if current.has_delivery(delivery_id):
            return False
        current.report_merge(delivery_id=delivery_id, pr_url=pr_url)
        return True

    bounty, _ = record(s, bounty_id, bounty, then=report)  # the merge, its delivery and the label: one save
    return _answer(bounty, duplicate=not any(v.action == "merge" for v in verdicts), pr_url=pr_url)


def settle_pr(s: Services, pr_url: str, delivery_id: str) -> dict[str, Any]:
    """Each bounty the PR has a live submission for, judged on its own (a failure on one keeps none of the others
    from being settled; one merged PR settles one of them): the answer of the merge, else the first one; the first
    failure when every one failed."""
    follow(s.store, s.views, BountyBoard())
    bounty_ids = board.bounties_with_pr(s.views, pr_url)
    if not bounty_ids:
        raise Code3Error(Code.NOT_FOUND, f"{pr_url} has no live submission for any bounty",
                         "only PRs submitted with server_mcp.submit_pr are settled")
    results, failures = [], []
    for bounty_id in bounty_ids:
        try:
            results.append(mark_merged(s, pr_url, delivery_id=delivery_id, bounty_id=bounty_id))
        except Code3Error as exc:
            failures.append(exc)
    if failures and not results:
        raise failures[0]
    return next((r for r in results if r.get("merged_pr") and not r.get("duplicate")), results[0])


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
    """The sponsor ends an unmerged bounty and takes their share of the pool back (each other funder withdraws
    theirs). Every caller, a repeat or a racing one included, answers the transaction that cancelled it."""
    bounty = require_bounty(s, bounty_id)
    if bounty.sponsor != s.signer.address:
        raise Code3Error(Code.UNAUTHORIZED, f"bounty {bounty_id} belongs to another sponsor",
                         "cancel with the sponsor's identity (CODE3_IDENTITY)")
    if bounty.status is Status.COOLING_DOWN:
        raise Code3Error(Code.INVALID_STATE, f"bounty {bounty_id} merged and is cooling: it can no longer be "
                         "cancelled", f"dispute it before cooling_until={bounty.cooling_until} with a reason "
                         f"(`code3 bounty dispute {bounty_id} --reason ...`); the resolver rules")
    receipt = None
    refused: Code3Error | None = None
    if bounty.status is not Status.CANCELLED:
        try:
            held = s.chain.contribution(bounty_id, s.signer.address)
            refuse_doomed(s, bounty_id, lambda state, now: contract.cancel(state, s.signer.address, now, held),
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
    mine = bounty.refunds.get(s.signer.address, 0)
    return {"success": True, "bounty_id": bounty_id, "state": Status(bounty.status).name,
            "tx_hash": present(cancelled[0] if cancelled else None, "the cancelling transaction").tx_hash,
            "refunded": str(mine), "asset": bounty.asset, "refunded_display": display(mine, bounty.asset),
            "refund_total": str(bounty.refund_total)}


def withdraw_refund(s: Services, bounty_id: str) -> dict[str, Any]:
    """A funder of a refunded bounty takes their share (the sponsor's came back with the cancel)."""
    bounty = require_bounty(s, bounty_id)
    if s.signer.address not in bounty.refunds:
        held = s.chain.contribution(bounty_id, s.signer.address)
        refuse_doomed(s, bounty_id, lambda state, _now: contract.withdraw_refund(state, s.signer.address, held),
                      f"bounty {bounty_id}")
        raise_for(s.chain.withdraw_refund(s.signer, bounty_id), f"bounty {bounty_id}")
        bounty, _ = record(s, bounty_id, bounty)
    got = present(bounty.refunds.get(s.signer.address), "the funder's refund")
    return {"success": True, "bounty_id": bounty_id, "refunded": str(got), "asset": bounty.asset,
            "refunded_display": display(got, bounty.asset)}


def dispute(s: Services, bounty_id: str, reason: str) -> dict[str, Any]:
    """Open a dispute with a reason: the sponsor during cooling (the payout then waits for the resolver's ruling, at
    most `dispute_period`), or a worker with a submitted PR before a merge (the refund waits for the ruling, never
    past the deadline's grace)."""
    bounty = require_bounty(s, bounty_id)
    if bounty.dispute is None or bounty.dispute["by"] != s.signer.address:
        refuse_doomed(s, bounty_id, lambda state, now: contract.dispute(state, s.signer.address, reason, now),
                      f"bounty {bounty_id}")
        raise_for(s.chain.dispute(s.signer, bounty_id, reason), f"bounty {bounty_id}")
        bounty, _ = record(s, bounty_id, bounty)
    opened = present(bounty.dispute, "the open dispute")
    return {"success": True, "bounty_id": bounty_id, "disputed_by": opened["by"], "reason": opened["reason"],
            "rule_by": opened["rule_by"], "resolver": bounty.resolver}


def rule(s: Services, bounty_id: str, share_bps: int) -> dict[str, Any]:
    """The bounty's resolver rules its open dispute: `share_bps` of the pool to the claimant (the winner during
    cooling, the disputing worker before a merge), the rest refunded to the funders."""
    if isinstance(share_bps, bool) or not isinstance(share_bps, int) or not 0 <= share_bps <= BPS:
        raise Code3Error(Code.VALIDATION, f"share {share_bps!r} is not 0 to {BPS} basis points",
                         "pass --pay (10000), --refund (0) or --share N")
    bounty = require_bounty(s, bounty_id)
    rulings_before = len(bounty.rulings)
    held = s.chain.contribution(bounty_id, bounty.sponsor)
    refuse_doomed(s, bounty_id, lambda state, now: contract.rule(state, s.signer.address, share_bps, now, held),
                  f"bounty {bounty_id}")
    raise_for(s.chain.rule(s.signer, bounty_id, share_bps), f"bounty {bounty_id}")
    bounty, _ = record(s, bounty_id, bounty)
    ruled = present(bounty.rulings[rulings_before] if len(bounty.rulings) > rulings_before else None, "the ruling")
    return {"success": True, "bounty_id": bounty_id, "state": Status(bounty.status).name,
            "claimant": ruled["claimant"], "share_bps": ruled["share_bps"], "paid": str(ruled["paid"]),
            "refunded": str(ruled["refunded"]), "asset": bounty.asset,
            "paid_display": display(ruled["paid"], bounty.asset),
            "refunded_display": display(ruled["refunded"], bounty.asset)}


@tool("server_mcp.claim_payout", profiles=("server",))
def claim_payout(s: Services, bounty_id: str) -> ClaimAnswer:
    """Claim the bounty's payout once cooling (and any dispute's time) has ended, as its winner: the tool refuses
    anyone else. The contract lets anyone trigger the payout, which always goes to the winner; `code3 worker`
    claims it for the winners whose keys it holds."""
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
    paid = sum(p["amount"] for p in bounty.payouts) or bounty.pool
    return {"success": True, "bounty_id": bounty_id, "tx_hash": present(bounty.paid_tx, "the payout's transaction"),
            "amount": str(paid), "asset": bounty.asset, "amount_display": display(paid, bounty.asset)}


def _refuse_unclaimable(s: Services, bounty: Bounty) -> str:
    """Refuse what the chain would refuse, on the state just synced from it, without spending a transaction."""
    if bounty.status is not Status.COOLING_DOWN or bounty.cooling_until is None:
        raise Code3Error(Code.INVALID_STATE, f"bounty {bounty.bounty_id} is {Status(bounty.status).name.lower()}, "
                         "not cooling down after a merge", "claim after the winning PR merged and cooling ended")
    if bounty.winner != s.signer.address:
        raise Code3Error(Code.UNAUTHORIZED, f"bounty {bounty.bounty_id} was won by another worker",
                         "only the winner (the linked author of the PR that merged first) can claim")
    now = s.chain.now()
    remaining = bounty.cooling_until - now
    if remaining > 0:
        raise Code3Error(Code.COOLING, f"bounty {bounty.bounty_id} is cooling down for {remaining} more seconds",
                         f"claim again after cooling_until={bounty.cooling_until}")
    if bounty.dispute is not None and bounty.dispute.get("rule_by") and now < bounty.dispute["rule_by"]:
        raise Code3Error(Code.PRECONDITION, f"bounty {bounty.bounty_id} is disputed by its sponsor: "
                         f"\"{bounty.dispute['reason']}\"", "the resolver rules by rule_by="
                         f"{bounty.dispute['rule_by']}; unruled by then, the payout is yours: claim again then")
    return f"cooling_until={bounty.cooling_until}"
