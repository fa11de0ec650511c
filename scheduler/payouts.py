"""Cooling-period payouts: at `cooling_until`, claim for the winner when this installation holds the
winner's key (auto-claim), otherwise record that the bounty is claimable.

The schedule is not trusted to survive: it is rebuilt from the bounty board (itself rebuilt from the
event log) at every start and re-checked on every tick, so a restart or a missed run loses nothing.
Claiming is idempotent on chain state, so a job that runs twice never pays twice; and the payout step of a
bounty is claimed (a claim timed by the database's clock, adapters/tracking.py) so one worker runs it and
logs it while another worker, or this worker's own date job, skips it silently.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from adapters.event_store import Change
from adapters.tracking import Leases, default_owner
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from domain.errors import Code, Code3Error
from mcp_tools.lifecycle import settle
from mcp_tools.services import Services
from projections.bounties import board

log = logging.getLogger("code3.scheduler")
SCHEDULE_HORIZON_S = 600.0  # cooling periods ending within this are scheduled as date jobs (re-read every tick)


class Payouts:
    def __init__(self, s: Services, services_for: Callable[[str], Services | None]) -> None:
        """`services_for(address)` gives services acting as that address, or None when no key here has it."""
        self.s = s
        self.services_for = services_for
        self.claims = Leases(s.views, default_owner(self), table="payout_claims")

    def due(self) -> list[dict[str, Any]]:
        now = self.s.chain.now()
        return board.cooling_bounties(self.s.views, due_by=now)

    def pending(self, horizon: float = SCHEDULE_HORIZON_S) -> list[tuple[str, float]]:
        """(bounty_id, seconds from now) of every cooling bounty whose period ends within `horizon`: what to schedule.
        Every tick schedules again and settles what is due, so a later one is scheduled by a later tick; reading
        only the next `horizon` (an index range) keeps a tick's cost that of what is about to fall due, not of
        every bounty cooling (5 000 at 100 000 bounties, each re-added every 2 s)."""
        now = self.s.chain.now()
        return [(row["bounty_id"], max(0, row["cooling_until"] - now))
                for row in board.cooling_bounties(self.s.views, due_by=int(now + horizon))
                if row["cooling_until"] is not None]

    def settle(self, bounty_id: str) -> str:
        """Claim for the winner or record that only the winner can; returns what was done."""
        rows = board.rows(self.s.views, "WHERE bounty_id = ?", (bounty_id,))
        if not rows or rows[0]["state"] != "COOLING_DOWN":
            return "nothing to do"
        row = rows[0]
        if row["cooling_until"] > self.s.chain.now():
            return "still cooling"
        if not self.claims.acquire(f"payout:{bounty_id}"):
            return "claimed by another worker"
        try:
            # the board may lag the log: the claim holder decides on the bounty as the event store has it now
            current = self.s.store.get(Bounty, Bounty.create_id(bounty_id))
            if current is None or current.status is not Status.COOLING_DOWN:
                return "nothing to do"
            return self._settle(bounty_id, row)
        finally:
            self.claims.release(f"payout:{bounty_id}")

    def _settle(self, bounty_id: str, row: dict[str, Any]) -> str:
        winner = self.services_for(row["winner"])
        if winner is not None:
            try:
                paid = settle.claim_payout(winner, bounty_id)
            except Code3Error as exc:
                if exc.code in (Code.COOLING, Code.CHAIN_TX_FAILED, Code.PRECONDITION):  # PRECONDITION: disputed
                    log.info("claim of bounty %s deferred: %s", bounty_id, exc.code.value)
                    return "deferred"
                raise
            log.info("bounty %s paid to its winner (tx %s)", bounty_id, paid["tx_hash"])
            return "paid"
        if not row["claimable"]:
            noted = Change.step(Bounty, Bounty.create_id(bounty_id),
                                lambda bounty: bounty.note_claimable_once(at=self.s.chain.now()), if_present=True)
            self.s.store.update_all(noted)
            if noted.recorded:
                log.info("bounty %s is claimable by its winner %s", bounty_id, row["winner"])
        return "claimable"


def expire(s: Services, services_for: Callable[[str], Services | None]) -> list[str]:
    """Cancel (and refund the sponsor's share of) bounties past their deadline, when this installation holds the
    sponsor's key and the contract allows it: no live PR (the resolver saw each one closed), or the deadline's grace
    over; never while a submitted PR shows merged on the forge (its merge is reported instead)."""
    expired = []
    for row in board.expired_bounties(s.views, s.chain.now()):
        sponsor = services_for(row["sponsor"])
        if sponsor is None:
            continue
        if row["state"] == Status.PR_SUBMITTED.name and _merged_on_forge(s, row["bounty_id"]):
            log.info("bounty %s is past its deadline but a submitted PR merged on the forge: no refund; the "
                     "merge is reported instead", row["bounty_id"])
            continue
        try:
            settle.cancel_bounty(sponsor, row["bounty_id"])
        except Code3Error as exc:
            if exc.code not in (Code.PRECONDITION, Code.INVALID_STATE):
                raise
            log.debug("bounty %s: no refund yet (%s)", row["bounty_id"], exc.message)
            continue
        log.info("bounty %s expired at its deadline; refunded to its sponsor", row["bounty_id"])
        expired.append(row["bounty_id"])
    return expired


def _merged_on_forge(s: Services, bounty_id: str) -> bool:
    """Whether a PR submitted for the bounty merged on the forge (a sponsor never merges and takes the money back)."""
    urls = board.submitted_prs(s.views, [bounty_id]).get(bounty_id, [])
    return any((pr := s.forge.get_pr(url)) is not None and pr.merged for url in urls)


def schedule_all(scheduler: Any, payouts: Payouts, run: Callable[[Callable[[], Any]], Any]) -> None:
    """(Re)add one date job per cooling bounty; `run` wraps a job so jobs never overlap the tick."""
    for bounty_id, delay in payouts.pending():
        scheduler.add_job(run, "date", args=[lambda b=bounty_id: payouts.settle(b)], id=f"payout-{bounty_id}",
                          run_date=datetime.now() + timedelta(seconds=delay), replace_existing=True,
                          misfire_grace_time=None, coalesce=True)
