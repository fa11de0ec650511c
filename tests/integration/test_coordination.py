"""Coordination across hosts (issue 20): leases timed by the database's clock and taken over within 10 s of
their holder's death, a bounty's payout run and logged by one of two workers, and racing `accept_best_task`
callers each given a task while free tasks remain. On SQLite and PostgreSQL (the `database_url` fixture)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from adapters import tracking
from adapters.keystore import Keystore
from adapters.tracking import LEASE_S, Leases
from code3 import wiring
from code3.settings import Settings
from mcp_tools.lifecycle import publish, settle, specs
from projections.bounties.board import BountyBoard
from projections.runner import Runner, follow
from tests.campaigns.test_race_campaign import race
from tests.campaigns.world import AMOUNT, REPO, CampaignWorld
from tests.conftest import World
from tests.integration.test_scheduler import cooling

ROOT = Path(__file__).resolve().parents[2]
HOLDER = """
import sys, time
from pathlib import Path
from adapters.sql import open_db
from adapters.tracking import Leases
db = open_db(Path(sys.argv[1]), sys.argv[2] or None)
leases = Leases(db, "another-host:1:holder")  # kept: a dropped Leases is no longer renewed
assert leases.acquire("forge_mirror")
print("held", flush=True)
time.sleep(600)
"""


def test_a_host_whose_clock_runs_ahead_does_not_take_a_live_lease(world: World,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Expiry is judged by the database's clock: a host an hour ahead sees the lease as the holder does."""
    views = world["alice"].views
    holder, other = Leases(views, "host-a:1:x"), Leases(views, "host-b:1:y")
    assert holder.acquire("forge_mirror")
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 3600)
    assert not other.acquire("forge_mirror")
    [(expires_at,)] = views.query("SELECT expires_at FROM projection_leases WHERE name = 'forge_mirror'")
    assert abs(expires_at - (real() + LEASE_S)) < 5, "the lease ends the lease's length after the database's now"
    holder.release("forge_mirror")
    assert other.acquire("forge_mirror")
    other.release("forge_mirror")


def test_the_heartbeat_keeps_a_live_holders_lease_past_its_length_and_a_silent_one_lapses(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tracking, "RENEW_S", 0.2)
    views = world["alice"].views
    holder, other = Leases(views, "host-a:1:x", lease_s=3.0), Leases(views, "host-b:1:y", lease_s=3.0)
    assert holder.acquire("forge_mirror")
    time.sleep(4.5)  # past the lease's length: only the heartbeat's renewals keep it
    assert not other.acquire("forge_mirror")
    holder.forget()  # as a process that stopped: nothing renews it any more
    start = time.monotonic()
    while not other.acquire("forge_mirror"):
        assert time.monotonic() - start < 6, "a lease nobody renews must lapse after its length"
        time.sleep(0.1)
    other.release("forge_mirror")


def test_a_killed_lease_holder_on_another_host_is_taken_over_within_10_s(world: World, tmp_path: Path) -> None:
    """The holder's process is SIGKILLed; its owner names another host, so only the lease's expiry (not a
    look at the process table) frees it. Measured with a generous bound: correctness of the expiry."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), world.database_url or ""], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held", holder.stderr
        runner = Runner(world["alice"].store, world["alice"].views)
        time.sleep(tracking.RENEW_S + 1)  # the holder's heartbeat has renewed at least once
        assert runner.run_once(_Mirror()) == 0 and _Mirror.effects == 0, "the live holder keeps it"
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
        killed = time.monotonic()
        while not runner.acquire("forge_mirror"):
            assert time.monotonic() - killed < 20, "the dead holder's lease was never taken over"
            time.sleep(0.1)
        takeover = time.monotonic() - killed
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.communicate(timeout=10)  # and its pipes closed
    # the last renewal was at most RENEW_S before the kill: the lease ran out LEASE_S - RENEW_S after it at least
    assert LEASE_S - tracking.RENEW_S - 1 < takeover < 15, takeover
    print(f"lease taken over {takeover:.1f} s after its holder was killed")
    runner.release("forge_mirror")


class _Mirror:
    """A projector under the forge mirror's name with a side effect: it runs only under the lease."""

    name, has_effects, schema = "forge_mirror", True, ""
    effects = 0

    def effect(self, event: Any) -> None:
        _Mirror.effects += 1

    def apply(self, event: Any, cur: Any) -> None:
        pass


def test_two_workers_send_and_log_a_bountys_payout_once(world: World, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    w = world
    published = cooling(w)
    bounty_id = published["bounty"]["bounty_id"]
    w.stack.advance(w.stack.cooling_period)
    follow(w["alice"].store, w["alice"].views, BountyBoard())  # both see it due
    sent: list[str] = []
    claim = settle.claim_payout

    def counted(s: Any, bid: str) -> Any:
        sent.append(bid)
        return claim(s, bid)

    monkeypatch.setattr(settle, "claim_payout", counted)
    workers = [wiring.worker(w.settings("alice")), wiring.worker(w.settings("carol"))]
    start, failures = threading.Barrier(len(workers)), []

    def run(worker: Any) -> None:
        try:
            start.wait(timeout=10)
            for _ in range(3):  # the tick's due payouts and the date job, each a few times
                worker.payouts.settle(bounty_id)
            worker.tick()
        except Exception as exc:  # reported below, in the test's thread
            failures.append(exc)

    caplog.set_level(logging.INFO, logger="code3.scheduler")
    try:
        threads = [threading.Thread(target=run, args=(worker,)) for worker in workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        for worker in workers:
            worker.close()
    assert not failures, failures
    assert sent == [bounty_id], "one worker sends the payout, once"
    paid_lines = [r for r in caplog.records if "paid to its winner" in r.getMessage()]
    assert len(paid_lines) == 1, [r.getMessage() for r in paid_lines]
    assert len([e for e in w.ledger.bounty_events(bounty_id) if e.type == "BountyPaid"]) == 1
    assert w.ledger.balance(w.address("bob"), "USDT") == AMOUNT and w.stack.escrow() == 0


RACERS = ["bob", "carol", "dave", "erin"]


def test_racing_accept_best_task_callers_each_get_a_task_while_tasks_remain(tmp_path: Path,
                                                                          database_url: str | None) -> None:
    """N workers race `accept_best_task` over N free exclusive tasks of one amount (so they all rank the same
    task first): every one of them gets a task, no two the same."""
    keys = Keystore(Settings(project=tmp_path).keystore_dir)
    world = CampaignWorld.create(tmp_path, database_url)  # one exclusive bounty published
    try:
        for name in [*RACERS[2:], "frank"]:
            keys.new(name)
        alice = world.people["alice"]
        for n in range(len(RACERS) - 1):
            spec = specs.specify(alice, f"Users can sort their to-do list by rule {n}")
            publish.publish_issue_with_metadata(alice, repo=REPO, feature_id=spec["feature_id"],
                                                spec_path=spec["paths"]["spec"], amount=str(AMOUNT), asset="USDT",
                                                network=alice.chain.network)
        follow(alice.store, alice.views, BountyBoard())
        answers = race(tmp_path, database_url, RACERS, "mcp_tools.lifecycle.work:accept_best_task", {})
        assert all("ok" in a for a in answers), answers
        tasks = [a["ok"]["selected_task_id"] for a in answers]
        assert None not in tasks and len(set(tasks)) == len(RACERS), answers
        # one more caller finds every task held: "none left" is an answer, not a lost race
        [last] = race(tmp_path, database_url, ["frank"], "mcp_tools.lifecycle.work:accept_best_task", {})
        assert last["ok"]["selected_task_id"] is None, last
    finally:
        world.close()
