"""What one round of the worker did, in lines a person reads (`code3 worker --once` prints them).

A payout names the bounty, its issue, who got what (the key's name when this installation holds it, else the
address) and the human amount beside the smallest units; a refund, the pool returned to its funders; a merge reported,
until when the bounty cools (the embedded ledger: how far `code3 ledger advance` moves its clock past that).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from domain.bounties.amounts import with_units
from domain.bounties.bounty import Bounty
from domain.bounties.issue import Issue
from mcp_tools.services import Services

NOTHING = "nothing to do"


def _who(address: str, services_for: Callable[[str], Services | None]) -> str:
    found = services_for(address)
    return f"{found.signer.name} ({address})" if found is not None else address


def _bounty(s: Services, bounty_id: str) -> tuple[Bounty | None, str]:
    """The bounty as the log has it now, and where its issue is (`repo#N`, or its repository)."""
    bounty = s.store.get(Bounty, Bounty.create_id(bounty_id))
    if bounty is None:
        return None, ""
    issue = s.store.get(Issue, Issue.create_id(bounty.issue_hash))
    return bounty, (issue.task_id or issue.repo) if issue is not None else bounty.repo


def paid_line(s: Services, bounty_id: str, services_for: Callable[[str], Services | None]) -> str:
    bounty, where = _bounty(s, bounty_id)
    if bounty is None or not bounty.payouts:
        return f"paid bounty {bounty_id}"
    paid = ", ".join(f"{_who(p['to'], services_for)} {with_units(p['amount'], bounty.asset)}" for p in bounty.payouts)
    return f"paid bounty {bounty_id} ({where}) to {paid}"


def claimable_line(s: Services, bounty_id: str) -> str:
    bounty, where = _bounty(s, bounty_id)
    winner = bounty.winner if bounty is not None else None
    return (f"bounty {bounty_id} ({where}) is claimable by its winner {winner}: their key is not here, so they "
            "claim it themselves (server_mcp.claim_payout)")


def refund_line(s: Services, bounty_id: str, services_for: Callable[[str], Services | None]) -> str:
    bounty, where = _bounty(s, bounty_id)
    if bounty is None:
        return f"refunded bounty {bounty_id} past its deadline"
    return (f"refunded bounty {bounty_id} ({where}) past its deadline: {with_units(bounty.pool, bounty.asset)} back to "
            f"its funders (sponsor {_who(bounty.sponsor, services_for)})")


def merged_line(s: Services, bounty_id: str) -> str:
    """A merge this round reported (cooling starts at the report, not at the merge): until when the bounty cools,
    in the chain's time, and on the embedded ledger how far to move its clock so the next round pays."""
    bounty, where = _bounty(s, bounty_id)
    if bounty is None or bounty.cooling_until is None:
        return f"reported the merge for bounty {bounty_id}"
    until = datetime.fromtimestamp(bounty.cooling_until, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    line = f"reported the merge of PR {bounty.merged_pr} for bounty {bounty_id} ({where}): cooling until {until}"
    if s.chain.network != "local":
        return line
    left = max(bounty.cooling_until - s.chain.now(), 0)
    return (f"{line}; on the embedded ledger `code3 ledger advance --seconds {left}` moves the clock past it (the "
            "next round pays)")


def mirrored_line(transitions: int) -> str:
    return f"mirrored {transitions} transition(s) to the forge (labels, comments, issue metadata)"


def failed_line(step: str) -> str:
    return f"step {step} failed; it runs again next round (the log on stderr says why)"
