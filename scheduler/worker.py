"""`code3 worker`: chain sync, projections, webhook retries and the payout scheduler, until SIGTERM.

Every step is idempotent and resumes from durable state (tracking, cursor, inbox, the log), so the
process can be killed at any point and restarted without losing or repeating an effect.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from adapters.db_outage import OUTAGE, unreachable
from adapters.db_watchdog import outage_limit, watchdog
from adapters.keystore import Keystore
from adapters.shutdown import exit_after
from mcp_tools.ai_loom.reanchoring import verify_changed
from mcp_tools.lifecycle.chain_record import sync_bounty
from mcp_tools.lifecycle.chain_sync import reconcile, sync_new_events
from mcp_tools.lifecycle.forge_mirror import ForgeMirror
from mcp_tools.lifecycle.merge_watch import MergeWatch
from mcp_tools.lifecycle.webhook import retry_due
from mcp_tools.services import Services
from projections.bounties import board
from projections.bounties.board import BountyBoard
from projections.runner import Projector, Runner
from scheduler import round_report
from scheduler.payouts import Payouts, expire, schedule_all

log = logging.getLogger("code3.worker")
REANCHOR_EVERY_S = 60.0  # ai-loom re-anchoring runs at most this often (and then only on files that changed)
REANCHOR_BUDGET = 500  # annotations verified per tick at most (~1 s); a longer pass goes on the next tick
RECONCILE_PAGE = 25  # live bounties compared with the chain per tick (a full pass over them, a page at a time)
STOP_GRACE_S = 10.0  # how long a stop waits for the tick in flight and the close (adapters/shutdown.py)
MIRROR_BUDGET_S = 10.0  # the mirror's forge retry budget: past it the mirror retries at its next round
MIRROR_ROUND_S = 5.0  # the mirror's share of a round: a backlog of forge calls (after an outage, at a start) goes
# on next round instead of holding up payouts, refunds and the "running" line of a start


class Worker:
    """`services_as(name)` builds services acting as the keystore's key `name` (the composition root's
    wiring); `identity` is the key this worker runs as."""

    def __init__(self, services_as: Callable[[str], Services], identity: str, keystore: Keystore) -> None:
        self.services_as = services_as
        self.keystore = keystore
        self.s = services_as(identity)
        self.runner = Runner(self.s.store, self.s.views)
        with_budget = getattr(self.s.forge, "with_budget", None)  # GitHub: a short budget, retried next round
        self.mirror_forge = with_budget(MIRROR_BUDGET_S) if with_budget else self.s.forge
        self.mirror = ForgeMirror(self.s.store, self.mirror_forge)
        self.projectors: list[Projector] = [BountyBoard(), self.mirror]
        self.last_round: list[str] = []  # what the last round did, as `code3 worker --once` prints it
        self._lock = threading.Lock()
        self._by_address: dict[str, Services] = {self.s.signer.address: self.s}
        self.payouts = Payouts(self.s, self.services_for)
        self.reanchor_every = REANCHOR_EVERY_S
        self.reanchor_budget = REANCHOR_BUDGET
        self._reanchor_pending = False
        self._reanchored_at: float | None = None
        self._loom_files: dict[str, str | None] = {}  # annotated file -> digest of its text at the last pass
        self.reconcile_page = RECONCILE_PAGE
        self.merge_watch = MergeWatch()  # live submissions judged on the forge by their resolver, a page a round
        self._reconciling: tuple[int, str | None] = (0, None)  # the rolling pass: (index in board.LIVE, last id)

    def services_for(self, address: str | None) -> Services | None:
        """Services acting as `address` when the keystore holds its key (auto-claim for local winners)."""
        if address is None:
            return None
        if address not in self._by_address:
            keys = self.keystore
            name = next((n for n in keys.names() if keys.load(n).address == address), None)
            if name is None:
                return None
            self._by_address[address] = self.services_as(name)
        return self._by_address[address]

    def exclusive(self, job: Any) -> Any:
        with self._lock:
            return job()

    def tick(self) -> dict[str, int]:
        """One round: chain → log → views and forge → inbox → missed merges → refunds → due payouts →
        annotations re-anchored (at most once a minute, changed files only) → views and forge again, so the
        round's own effects (a payout, a refund, a merge) leave the board and the issue current, not one round
        behind (`code3 doctor`'s projection lag).

        Each step is guarded on its own: one that fails is logged and retried next round, and never keeps
        the others (payouts, refunds, the mirror) from running. `last_round` says what was done."""
        done: dict[str, int] = {}
        self.last_round = []
        mirrored = self.mirror.mirrored
        steps: list[tuple[str, Callable[[], int]]] = [
            ("chain_events", lambda: sync_new_events(self.s, self.s.views)),
            *((p.name, lambda p=p: self.runner.catch_up(p, budget_s=MIRROR_ROUND_S)) for p in self.projectors),
            ("reconciled", self._reconcile_page),
            ("webhook_retries", lambda: len(retry_due(self.s))),
            ("merges_found", self._look_for_merges),
            ("expired", self._expire),
            ("payouts", self._settle_due),
            ("annotations_reanchored", self._reanchor),
            *((f"{p.name}_after", lambda p=p: self.runner.catch_up(p, budget_s=MIRROR_ROUND_S))
              for p in reversed(self.projectors)),  # the mirror first: the labels it records are events too
        ]
        for name, step in steps:
            try:
                done[name] = step()
            except Exception as exc:
                if unreachable(exc) and OUTAGE.seconds():  # one line per step, no traceback, while the database is away
                    log.warning("worker step %s: the database is unreachable (%s); it runs again next round", name,
                                type(exc).__name__)
                else:
                    log.exception("worker step %s failed; it runs again next round", name)
                done[name] = -1
                self.last_round.append(round_report.failed_line(name))
        if self.mirror.mirrored > mirrored:
            self.last_round.append(round_report.mirrored_line(self.mirror.mirrored - mirrored))
        return done

    def _reconcile_page(self) -> int:
        """Compare the next page of live bounties (the board's, in id order) with the chain, adopting the chain's
        state where they differ: a rolling full pass whose cost per tick is one page, whatever the store holds.
        The board's row is the mirror's side (it follows the aggregate's events), so a bounty that agrees costs one
        chain read and no aggregate load; only a difference is narrowed and settled on the aggregate (`reconcile`).
        Final bounties (paid, cancelled) cannot change on chain; new chain events come through the cursor."""
        at, after = self._reconciling  # one state at a time, so the page is a range of the (state, id) index
        page = board.mirror_rows(self.s.views, board.LIVE[at], limit=self.reconcile_page, after=after)
        full = len(page) == self.reconcile_page
        self._reconciling = (at, page[-1][0]) if full else ((at + 1) % len(board.LIVE), None)
        corrected = 0
        for bounty_id, mirror in page:
            chain = self.s.chain.get_bounty(bounty_id)
            if chain is not None and chain.comparable() == mirror:
                continue
            bounty = sync_bounty(self.s, bounty_id)
            corrected += bounty is not None and reconcile(self.s, bounty)
        return corrected

    def _look_for_merges(self) -> int:
        """Report the merges of submitted PRs no webhook brought; each starts its cooling period now."""
        reported = self.merge_watch.look(self.s, self.services_for)
        self.last_round += [round_report.merged_line(self.s, b) for b in reported]
        return len(reported)

    def _settle_due(self) -> int:
        due = self.payouts.due()
        for row in due:
            done = self.payouts.settle(row["bounty_id"])
            if done == "paid":
                self.last_round.append(round_report.paid_line(self.s, row["bounty_id"], self.services_for))
            elif done == "claimable" and not row["claimable"]:
                self.last_round.append(round_report.claimable_line(self.s, row["bounty_id"]))
        return len(due)

    def _expire(self) -> int:
        refunded = expire(self.s, self.services_for)
        self.last_round += [round_report.refund_line(self.s, b, self.services_for) for b in refunded]
        return len(refunded)

    def _reanchor(self) -> int:
        """ai-loom: re-anchor the annotations of the files changed since the last pass and record the
        outcomes (Reanchored / Orphaned), at most once every `reanchor_every` seconds and `reanchor_budget`
        annotations a tick (a pass cut by the budget goes on at the next tick); the events written."""
        now = time.monotonic()
        if (not self._reanchor_pending and self._reanchored_at is not None
                and now - self._reanchored_at < self.reanchor_every):
            return 0
        if not self._reanchor_pending:
            self._reanchored_at = now
        counts = verify_changed(self.s, self._loom_files, self.reanchor_budget)
        self._reanchor_pending = bool(counts["pending"])
        return counts["recorded"]

    def close(self) -> None:
        for projector in self.projectors:
            self.runner.release(projector.name)
        for services in {id(s): s for s in self._by_address.values()}.values():
            services.close()
        close = getattr(self.mirror_forge, "close", None)
        if self.mirror_forge is not self.s.forge and close is not None:  # its own connections (GitHub's copy)
            close()


def metrics_listener(worker: Worker, port: int, token: bytes) -> Any:
    """/metrics of this worker on 127.0.0.1:`port`, behind the serve token: its counters and the store's figures
    (read in the listener's thread; the store's connections are shared under their own locks)."""
    from adapters import metrics
    from projections.operations import snapshot

    def figures() -> dict[str, Any] | None:
        try:
            return snapshot(worker.s.store, worker.s.views).metrics(worker.s.chain.now())
        except Exception:
            log.warning("metrics: the store could not be read", exc_info=True)
            return None

    metrics.enable()
    return metrics.listen(port, token, lambda: metrics.exposition(figures()))


def run_worker(worker: Worker, interval: float = 2.0, once: bool = False, metrics_port: int | None = None,
               token: bytes | None = None) -> int:
    from apscheduler.schedulers.blocking import BlockingScheduler

    listener = None
    try:
        limit = outage_limit()  # a wrong CODE3_DB_OUTAGE_EXIT is refused before any work
        if metrics_port is not None and token is not None:
            listener = metrics_listener(worker, metrics_port, token)
            print(f"code3 worker: metrics at http://127.0.0.1:{listener.server_address[1]}/metrics", flush=True)
        worker.tick()  # the chain's new events by the cursor; live bounties reconciled a page a tick
        if once:  # a person ran one round: say what it did (stdout; the log stays on stderr)
            print("\n".join(f"code3 worker: {line}" for line in worker.last_round or [round_report.NOTHING]),
                  flush=True)
            return 0
        watchdog(limit)  # out of reach of its database past CODE3_DB_OUTAGE_EXIT: exit 3, to be restarted
        scheduler = BlockingScheduler(executors={"default": {"type": "threadpool", "max_workers": 1}},
                                      job_defaults={"coalesce": True, "max_instances": 1})

        def tick() -> None:
            try:
                worker.exclusive(worker.tick)
                schedule_all(scheduler, worker.payouts, worker.exclusive)
            except Exception:
                log.exception("worker tick failed; retrying next tick")

        scheduler.add_job(tick, "interval", seconds=interval, id="tick", misfire_grace_time=None)
        try:  # a database that goes away at this moment must not end the worker: every tick schedules again
            schedule_all(scheduler, worker.payouts, worker.exclusive)
        except Exception as exc:
            log.warning("payouts not scheduled at start (%s); the first tick schedules them", type(exc).__name__)

        def stop(signum: int, _frame: Any) -> None:
            log.info("signal %s: stopping", signum)
            exit_after(STOP_GRACE_S)  # a tick blocked on a silent database or a forge must not hold the stop
            if scheduler.running:  # a second signal while stopping changes nothing (and is no error)
                scheduler.shutdown(wait=False)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        from adapters.process_heap import settle_after_start

        settle_after_start()  # built and through its first round: those objects leave the collector's passes
        print("code3 worker: running (SIGTERM stops it)", flush=True)
        scheduler.start()
        return 0
    finally:
        if listener is not None:
            listener.shutdown()
            listener.server_close()
        worker.close()
