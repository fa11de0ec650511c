"""Lifecycle throughput on SQLite against saving the same number of events with a bare eventsourcing app.

Timed: only Code3's own work — the handler calls of one lifecycle (publish, two accepts, two PRs
opened and submitted, the merge report, the claim), each with its ledger transactions, forge writes
and events. Not timed: spec files, git pushes and the maintainer's merge, which are git and disk work
that no event store choice changes. The baseline saves, one event per transaction, as many events
as the timed calls recorded, so the ratio is Code3's overhead per recorded fact.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from adapters.git import commit_all, git
from adapters.keystore import Keystore
from benchmarks.report import Row
from code3.settings import Settings
from code3.wiring import build_services
from mcp_tools import publish, settle, specs, work

REPO = "alice/bench"
LIFECYCLES = 12


class Fact(Aggregate):
    @event("Recorded")
    def record(self, n: int) -> None:
        self.n = n


def _code3(project: Path) -> tuple[float, int]:
    """Seconds spent in handler calls over LIFECYCLES lifecycles, and the events they recorded."""
    keys = Keystore(Settings(project=project).keystore_dir)
    for name in ("alice", "bob", "carol"):
        keys.new(name)
    s = {name: build_services(Settings(project=project, identity=name, cooling_period=0))
         for name in ("alice", "bob", "carol")}
    s["alice"].chain.mint(s["alice"].signer.address, "USDT", 10**12)  # type: ignore[attr-defined]
    s["alice"].forge.create_repo(REPO)  # type: ignore[attr-defined]
    timed = 0.0
    events = 0

    def timed_call(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal timed, events
        before = s["alice"].store.recorder.max_notification_id() or 0
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        timed += time.perf_counter() - start
        events += (s["alice"].store.recorder.max_notification_id() or 0) - before
        return result

    for i in range(LIFECYCLES):
        spec = specs.specify(s["alice"], f"Benchmark feature number {i}")
        fid = spec["feature_id"]
        specs.plan(s["alice"], fid)
        specs.tasks(s["alice"], fid)
        pub = timed_call(publish.publish_issue_with_metadata, s["alice"], repo=REPO, feature_id=fid,
                         spec_path=spec["paths"]["spec"], amount="1000", network="local")
        task_id = f"{REPO}#{pub['issue']['number']}"
        bounty_id = pub["bounty"]["bounty_id"]
        prs = []
        for who in ("bob", "carol"):
            timed_call(work.accept_task, s[who], task_id)
            prepared = work.fork_and_prepare(s[who], REPO, {"feature_id": fid, "issue_number": pub["issue"]["number"]})
            workdir = Path(prepared["workdir"])
            (workdir / f"{who}.txt").write_text(fid)
            commit_all(workdir, "work")
            s[who].forge.push(workdir, prepared["branch"])
            git("checkout", "-q", "--detach", cwd=workdir)  # so open_pr has nothing left to push
            pr = timed_call(work.open_pr, s[who], REPO, prepared["branch"], "work", "")
            timed_call(work.submit_pr, s[who], bounty_id, pr["pr_url"])
            prs.append(pr["pr_url"])
        s["alice"].forge.merge_pr(prs[0])  # type: ignore[attr-defined]
        timed_call(settle.mark_merged, s["alice"], prs[0], delivery_id=f"bench-{i}")
        timed_call(settle.claim_payout, s["bob"], bounty_id)
    for services in s.values():
        services.close()
    return timed, events


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
    with tempfile.TemporaryDirectory() as tmp:
        timed, events = _code3(Path(tmp) / "code3")
        bare = _bare(Path(tmp), events)
    per_code3 = timed / LIFECYCLES * 1000
    per_bare = bare / LIFECYCLES * 1000
    return [
        Row("lifecycle: events recorded per lifecycle", events / LIFECYCLES, "events"),
        Row("lifecycle: throughput on SQLite", LIFECYCLES / timed, "lifecycles/s"),
        Row.against_baseline("lifecycle: time per lifecycle (vs bare store, same events)", per_bare, per_code3,
                             "ms", max_ratio=2.0),
    ]


if __name__ == "__main__":
    from benchmarks.report import format_table

    print(format_table(rows()))
