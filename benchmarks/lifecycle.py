"""Lifecycle throughput on SQLite against saving the same number of events with a bare eventsourcing app.

Timed: the handler calls of one lifecycle (publish, two accepts, two PRs opened and submitted, the
merge report, the claim), each with its ledger transactions, forge writes and events. Not timed: spec
files, git pushes and the maintainer's merge. The baseline saves, one event per transaction, as many
events as the timed calls recorded.

Two figures are reported against it. The total includes the time spent inside the chain and forge
ports — here the embedded ledger and forge, which stand in for Aptos and GitHub (whose latency, in
production, dwarfs everything else and is not Code3's). The engine figure leaves that port time out:
it is what Code3 itself adds (event store, handlers, idempotency checks), and carries the ≤ 2x target.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from adapters.git import commit_all, git
from adapters.keystore import Keystore
from benchmarks.report import Row, median
from code3.settings import Settings
from code3.wiring import build_services, record_resolver
from mcp_tools.lifecycle import publish, settle, specs, work

REPO = "alice/bench"
LIFECYCLES = 12
ROUNDS = 3


class Fact(Aggregate):
    @event("Recorded")
    def record(self, n: int) -> None:
        self.n = n


class PortClock:
    """Wraps a port and adds up the seconds spent inside its methods."""

    def __init__(self, inner: object, clock: list[float]) -> None:
        self._inner, self._clock = inner, clock

    def __getattr__(self, name: str) -> object:
        value = getattr(self._inner, name)
        if not callable(value):
            return value

        def timed(*args: object, **kwargs: object) -> object:
            start = time.perf_counter()
            try:
                return value(*args, **kwargs)
            finally:
                self._clock[0] += time.perf_counter() - start

        return timed


def _code3(project: Path) -> tuple[float, float, int]:
    """Seconds in handler calls over LIFECYCLES lifecycles, seconds of that inside the ports, and events."""
    home = project.with_name(project.name + "-home")  # the run's own CODE3_HOME: never the user's keys
    keys = Keystore(Settings(project=project, home=home).keystore_dir)
    for name in ("alice", "bob", "carol"):
        keys.new(name)
    # the shortest cooling period the contract allows, passed on the ledger's clock before each claim; alice
    # also reports the merges (the chain's resolver), as `code3 serve` does for its sponsor on the embedded default
    s = {name: build_services(Settings(project=project, home=home, identity=name, cooling_period=1, resolver="alice"))
         for name in ("alice", "bob", "carol")}
    record_resolver(Settings(project=project, home=home, identity="alice"))
    s["alice"].chain.mint(s["alice"].signer.address, "USDT", 10**12)  # type: ignore[attr-defined]
    s["alice"].forge.create_repo(REPO)  # type: ignore[attr-defined]
    in_ports = [0.0]
    for services in s.values():
        services.chain = PortClock(services.chain, in_ports)  # type: ignore[assignment]
        services.forge = PortClock(services.forge, in_ports)  # type: ignore[assignment]
    timed = 0.0
    events = 0

    untimed_port = 0.0

    def untimed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal untimed_port
        before = in_ports[0]
        result = fn(*args, **kwargs)
        untimed_port += in_ports[0] - before
        return result

    def timed_call(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal timed, events
        before = s["alice"].store.recorder.max_notification_id() or 0
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        timed += time.perf_counter() - start
        events += (s["alice"].store.recorder.max_notification_id() or 0) - before
        return result

    for i in range(LIFECYCLES):
        spec = untimed(specs.specify, s["alice"], f"Benchmark feature number {i}")
        fid = spec["feature_id"]
        untimed(specs.plan, s["alice"], fid)
        untimed(specs.tasks, s["alice"], fid)
        pub = timed_call(publish.publish_issue_with_metadata, s["alice"], repo=REPO, feature_id=fid,
                         spec_path=spec["paths"]["spec"], amount="1000", network="local", mode="contest")
        task_id = f"{REPO}#{pub['issue']['number']}"
        bounty_id = pub["bounty"]["bounty_id"]
        prs = []
        for who in ("bob", "carol"):
            timed_call(work.accept_task, s[who], task_id)
            prepared = untimed(work.fork_and_prepare, s[who], REPO,
                               {"feature_id": fid, "issue_number": pub["issue"]["number"]})
            workdir = Path(prepared["workdir"])
            (workdir / f"{who}.txt").write_text(fid)
            commit_all(workdir, "work")
            untimed(s[who].forge.push, workdir, prepared["branch"])
            git("checkout", "-q", "--detach", cwd=workdir)  # so open_pr has nothing left to push
            pr = timed_call(work.open_pr, s[who], REPO, prepared["branch"], "work", "")
            timed_call(work.submit_pr, s[who], bounty_id, pr["pr_url"])
            prs.append(pr["pr_url"])
        untimed(s["alice"].forge.merge_pr, prs[0])
        timed_call(settle.mark_merged, s["alice"], prs[0], delivery_id=f"bench-{i}")
        untimed(s["alice"].chain.advance, 1)
        timed_call(settle.claim_payout, s["bob"], bounty_id)
    for services in s.values():
        services.close()
    return timed, in_ports[0] - untimed_port, events


def _bare(project: Path, events: int) -> float:
    app = Application(env={"PERSISTENCE_MODULE": "eventsourcing.sqlite",
                           "SQLITE_DBNAME": str(project / "bare.sqlite")})
    aggregates = [Fact() for _ in range(max(1, events // 20))]
    start = time.perf_counter()
    saved = 0
    while saved < events:
        fact = aggregates[saved % len(aggregates)]
        fact.record(n=saved)
        app.save(fact)
        saved += 1
    elapsed = time.perf_counter() - start
    app.close()
    return elapsed


def rows() -> list[Row]:
    """Three rounds, alternating the two sides; each figure is the median round's."""
    totals, engines, bares, counts = [], [], [], []
    for _ in range(ROUNDS):
        with tempfile.TemporaryDirectory() as tmp:
            timed, in_ports, events = _code3(Path(tmp) / "code3")
            bares.append(_bare(Path(tmp), events) / LIFECYCLES * 1000)
        totals.append(timed / LIFECYCLES * 1000)
        engines.append((timed - in_ports) / LIFECYCLES * 1000)
        counts.append(events / LIFECYCLES)
    bare, total, engine = median(bares), median(totals), median(engines)
    return [
        Row("lifecycle: events recorded per lifecycle", median(counts), "events"),
        Row("lifecycle: throughput on SQLite (embedded ports included)", 1000 / total, "lifecycles/s"),
        Row.against_baseline("lifecycle: time per lifecycle, total (vs bare store, same events)", bare, total, "ms"),
        Row.against_baseline("lifecycle: time per lifecycle, engine only (vs bare store)", bare, engine, "ms",
                             max_ratio=2.0),
    ]


if __name__ == "__main__":
    from benchmarks.report import format_table

    print(format_table(rows()))
