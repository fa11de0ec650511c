"""`code3 worker --once` says what its round did, a merge it reported too: cooling starts at the report, not at the
merge, so without serve the order is merge, a round (it reports the merge), the advance, a round (it pays). The line
says until when the bounty cools and, on the embedded ledger, the `code3 ledger advance` that passes it exactly."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from adapters.keystore import Keystore
from code3.wiring import build_services
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from scheduler.worker import Worker
from tests.conftest import REPO, STACKS, World
from tests.integration.test_webhook import submitted

pytestmark = STACKS
ADVANCE = re.compile(r"; on the embedded ledger `code3 ledger advance --seconds (\d+)` moves the clock past it "
                     r"\(the next round pays\)")


def test_a_round_that_reports_a_merge_says_until_when_it_cools_and_the_advance_after_which_a_round_pays(
        world: World) -> None:
    w = world
    published, pr_url = submitted(w)
    bounty_id, number = published["bounty"]["bounty_id"], published["issue"]["number"]
    w.stack.merge_pr(pr_url)  # no webhook: the worker's round finds the merge and reports it
    worker = Worker(lambda name: build_services(w.settings(name)), "alice", Keystore(w.settings("alice").keystore_dir))
    try:
        worker.tick()
        bounty = w["alice"].store.get(Bounty, Bounty.create_id(bounty_id))
        assert bounty is not None and bounty.status is Status.COOLING_DOWN and bounty.cooling_until is not None
        until = datetime.fromtimestamp(bounty.cooling_until, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        said = f"reported the merge of PR {pr_url} for bounty {bounty_id} ({REPO}#{number}): cooling until {until}"
        [line] = [x for x in worker.last_round if x.startswith("reported the merge")] or [str(worker.last_round)]
        if w.stack.network != "local":
            assert line == said, "a real chain's clock is not moved: no advance to suggest"
            return
        advance = ADVANCE.fullmatch(line[len(said):]) if line.startswith(said) else None
        assert advance is not None, line
        seconds = int(advance.group(1))

        # a minute short: still cooling, nothing paid (the embedded ledger's clock also runs with the wall clock, so
        # a margin of one second would race a loaded machine)
        w.stack.advance(seconds - 60)
        worker.tick()
        assert not [x for x in worker.last_round if x.startswith(("paid", "reported"))], worker.last_round
        w.stack.advance(60)  # the suggested total
        worker.tick()
        assert [x for x in worker.last_round if x.startswith(f"paid bounty {bounty_id} ({REPO}#{number}) to bob")], \
            worker.last_round
    finally:
        worker.close()
