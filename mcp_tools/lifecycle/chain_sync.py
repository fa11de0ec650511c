"""Chain sync: record chain events not yet mirrored, and reconcile any disagreement (the chain wins).

Events of a worker accepting from another machine or a sponsor cancelling from a wallet reach the
log here. The cursor (the last chain version seen) is kept beside the views; recording is idempotent
on chain coordinates, so a sync that dies mid-way and runs again records nothing twice.
"""

from __future__ import annotations

import logging
import time
from functools import partial

from adapters.event_store import Change
from adapters.sql import SqlDb
from adapters.tracking import NamedCursor
from domain.bounties.bounty import Bounty
from domain.bounties.contract import BountyState
from mcp_tools.lifecycle.chain_record import sync_bounty
from mcp_tools.lifecycle.identity import record_links
from mcp_tools.services import Services

log = logging.getLogger("code3.chain_sync")
CURSOR = "chain"
PAGE = 500  # chain events read and recorded per page; the cursor is committed after each page
PAGES_PER_RUN = 1000  # a bound on one run (500 000 events); a longer backlog goes on at the next run


def sync_new_events(s: Services, views: SqlDb, limit: int = PAGE, max_pages: int = PAGES_PER_RUN) -> int:
    """Record the chain's bounty events after the cursor, page after page until caught up; returns how many
    chain events were read. Each page is recorded, then the cursor moves past it, so a run that dies keeps
    every page it finished (and recording is idempotent for the one it did not). Idle, it is one read."""
    cursor = NamedCursor(views, CURSOR)
    total, pages, started = 0, 0, time.monotonic()
    while pages < max_pages:
        events = s.chain.events_since(cursor.get(), limit)
        if not events:
            break
        record_links(s, events)  # identity links carry no bounty id
        for bounty_id in dict.fromkeys(str(ev.data["bounty_id"]) for ev in events if "bounty_id" in ev.data):
            bounty = sync_bounty(s, bounty_id)
            if bounty is not None:
                reconcile(s, bounty)
        cursor.advance(events[-1].version)
        total, pages = total + len(events), pages + 1
        if len(events) < limit:
            break
        log.info("chain sync: %d events recorded in %d pages (%.1f s), up to chain version %d; reading on",
                 total, pages, time.monotonic() - started, events[-1].version)
    if pages > 1:
        log.info("chain sync: caught up, %d events in %d pages (%.1f s)", total, pages, time.monotonic() - started)
    return total


def reconcile(s: Services, bounty: Bounty, looks: int = 3) -> bool:
    """Compare the mirror with the chain's view of the bounty; on disagreement record it and adopt the chain's.

    A chain that is only ahead is no disagreement: a transaction whose events are not recorded yet (its handler
    is recording them, or the next sync will) makes the chain's state differ for a moment. So a difference is
    first narrowed: the bounty's chain events are recorded, and the state is read again; only a difference that
    holds while the chain stood still (the same state before and after the recording) is a disagreement. A chain
    that keeps moving is looked at again next round."""
    for _ in range(looks):
        state = s.chain.get_bounty(bounty.bounty_id)
        if state is None:
            log.warning("bounty %s is in the log but not on chain", bounty.bounty_id)
            return False
        chain = state.comparable()
        if bounty.comparable() == chain:
            return False
        bounty = sync_bounty(s, bounty.bounty_id) or bounty  # what the chain did that the log lacks, recorded
        after = s.chain.get_bounty(bounty.bounty_id)
        if after is None or after.comparable() != chain:
            continue  # the chain moved meanwhile: look again
        if bounty.comparable() == chain:
            return False
        log.warning("bounty %s disagreed with the chain; adopting the chain's state", bounty.bounty_id)
        adopt_chain = partial(Bounty.reconcile, chain=chain, entrants=_confirmed_entrants(s, bounty, after))
        s.store.update_all(Change.step(Bounty, bounty.id, adopt_chain, known=bounty))
        return True
    return False


def _confirmed_entrants(s: Services, bounty: Bounty, state: BountyState) -> list[str]:
    """The mirror's workers the chain confirms: an exclusive bounty's holder, a contest's entrants by its view."""
    if bounty.exclusive:
        return [state.holder] if state.holder else []
    return [w for w in bounty.workers if s.chain.is_entrant(bounty.bounty_id, w)]


def reconcile_all(s: Services) -> list[str]:
    """A full pass over every bounty on chain (at start, and now and then): the ids that were corrected."""
    corrected = []
    for state in s.chain.list_bounties():
        bounty = sync_bounty(s, state.bounty_id)
        if bounty is not None and reconcile(s, bounty):
            corrected.append(state.bounty_id)
    return corrected

