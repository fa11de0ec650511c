"""The chaos campaign (issue 20): agents drive bounty lifecycles through the production topology
(tests/campaigns/topology.py) while serves and workers are SIGKILLed and restarted, the campaign's PostgreSQL
backends are terminated and the database is cut off for a while; afterwards, with no restart beyond the
campaign's own, every check of tests/campaigns/soak_checks.py must hold.

    python -m tests.campaigns.soak --agents 20 --lifecycles 200 --seconds 300 --kills 6 --terminations 4 \\
        --drop-seconds 20

A lifecycle: a sponsor (over HTTP as acme, or a stdio sponsor) specifies, plans, writes tasks and publishes
(exclusive or contest); one worker (two in a contest) accepts, forks, commits, opens a PR and submits it; the
maintainer merges one PR on the GitHub stand-in, whose webhook reaches a serve; after the cooling period a
worker process pays the winner. Some lifecycles are left to expire (nobody submits, a short deadline) and a
worker process refunds the sponsor. Exit status 0 when every check passed, 1 otherwise; the report is printed
either way (and written as JSON with --report FILE).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.campaigns.soak_agents import Agent, Stats, ToolFailed
from tests.campaigns.topology import REPO, Topology

AMOUNT = 1_000_000
LONG_DEADLINE = 7200


@dataclass
class Lifecycle:
    index: int
    mode: str  # "exclusive" | "contest"
    expire: bool
    sponsor: str = ""
    workers: list[str] = field(default_factory=list)
    feature_id: str = ""
    issue: int | None = None
    bounty_id: str | None = None
    prs: dict[str, str] = field(default_factory=dict)
    merged_pr: str | None = None
    merge_delivery: dict[str, Any] | None = None
    outcome: str = "running"  # paid | refunded | failed: …
    republished: bool = False  # its first publish ended unfunded (the deadline passed first) and was published again
    seconds: float = 0.0


@dataclass
class Options:
    agents: int = 20
    lifecycles: int = 200
    seconds: float = 300.0  # the window in which the faults are spread
    kills: int = 6
    terminations: int = 4
    drop_seconds: float = 20.0
    concurrency: int = 10
    expire_share: float = 0.15
    contest_share: float = 0.4
    cooling: int = 4
    expire_deadline: int = 25
    quiesce_seconds: float = 180.0
    max_seconds: float = 3600.0  # no lifecycle starts after this many seconds of driving
    lifecycle_seconds: float = 900.0  # one lifecycle's bound, from its publish to its payout or refund
    seed: int = 20
    root: Path = Path("/tmp/code3-soak")
    keep: bool = False


@dataclass
class Chaos:
    kills: list[dict[str, Any]] = field(default_factory=list)
    terminations: list[dict[str, Any]] = field(default_factory=list)
    cuts: list[dict[str, Any]] = field(default_factory=list)


class Campaign:
    def __init__(self, options: Options) -> None:
        self.o = options
        self.rng = random.Random(options.seed)
        self.stats = Stats()
        self.chaos = Chaos()
        self.lifecycles: list[Lifecycle] = []
        self.ledger: dict[str, Any] = {}
        http_agents = max(1, options.agents // 4)
        stdio_sponsors = min(2, max(1, options.agents // 8))
        hunters = max(2, options.agents - http_agents - stdio_sponsors)
        self.workers = [f"w{i + 1}" for i in range(hunters)]
        self.sponsors = [f"s{i + 1}" for i in range(stdio_sponsors)]
        self.http_agents = http_agents
        self.topo = Topology(options.root, workers=self.workers, sponsors=self.sponsors, cooling_period=options.cooling)

    # --- agents -----------------------------------------------------------------------------------

    def _agents(self) -> None:
        serves = self.topo.serve_machines
        self.sponsor_agents = [Agent(f"http-{i + 1}", "acme", "http", self.topo, self.stats,
                                     serve=serves[i % len(serves)]) for i in range(self.http_agents)]
        self.sponsor_agents += [Agent(f"stdio-{name}", name, "stdio", self.topo, self.stats) for name in self.sponsors]
        self.worker_agents = [Agent(f"stdio-{name}", name, "stdio", self.topo, self.stats) for name in self.workers]
        self._free_workers: asyncio.Queue[Agent] = asyncio.Queue()
        for agent in self.worker_agents:
            self._free_workers.put_nowait(agent)
        self._free_sponsors: asyncio.Queue[Agent] = asyncio.Queue()
        for agent in self.sponsor_agents:
            self._free_sponsors.put_nowait(agent)
        for agent in [*self.sponsor_agents, *self.worker_agents]:
            agent.start()

    # --- the run ----------------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        began = time.monotonic()
        await asyncio.to_thread(self.topo.start_all)
        started = time.monotonic() - began
        for name in ("acme", *self.sponsors):
            await asyncio.to_thread(self.topo.mint, name, (self.o.lifecycles + 2) * AMOUNT)
        self._agents()
        plan = self._plan()
        poller = asyncio.create_task(self._poll_ledger())
        chaos = asyncio.create_task(self._chaos())
        gate = asyncio.Semaphore(self.o.concurrency)
        run_began = time.monotonic()

        async def one(lc: Lifecycle) -> None:
            async with gate:
                if time.monotonic() - run_began > self.o.max_seconds:
                    lc.outcome = "skipped"  # the time bound: what has not started by then is not started
                    return
                try:  # a lifecycle that never ends is a finding, not a campaign that never ends
                    await asyncio.wait_for(self._lifecycle(lc), self.o.lifecycle_seconds)
                except TimeoutError:
                    lc.outcome = f"failed: not over after {self.o.lifecycle_seconds:.0f} s"

        await asyncio.gather(*(one(lc) for lc in plan))
        await chaos
        driven = time.monotonic() - run_began
        quiet_began = time.monotonic()
        from tests.campaigns.soak_checks import quiesce

        await asyncio.to_thread(quiesce, self, self.o.quiesce_seconds)
        quiesced = time.monotonic() - quiet_began
        poller.cancel()
        for agent in [*self.sponsor_agents, *self.worker_agents]:
            await agent.stop()
        from tests.campaigns.soak_checks import check_all

        findings, facts = await asyncio.to_thread(check_all, self)
        return self._report(findings, facts, {"start_s": started, "drive_s": driven, "quiesce_s": quiesced})

    def _plan(self) -> list[Lifecycle]:
        plan = []
        for i in range(self.o.lifecycles):
            expire = self.rng.random() < self.o.expire_share
            mode = "contest" if self.rng.random() < self.o.contest_share else "exclusive"
            plan.append(Lifecycle(i, mode, expire))
        self.lifecycles = plan
        return plan

    async def _poll_ledger(self) -> None:
        while True:
            with contextlib.suppress(Exception):  # the stand-in is never killed; a slow answer is only skipped
                self.ledger = await asyncio.to_thread(self.topo.ledger)
            await asyncio.sleep(1.5)

    def bounty(self, bounty_id: str | None) -> dict[str, Any] | None:
        return next((b for b in self.ledger.get("bounties", []) if b["bounty_id"] == bounty_id), None)

    async def _lifecycle(self, lc: Lifecycle) -> None:
        began = time.monotonic()
        sponsor = await self._free_sponsors.get()
        try:
            try:
                await self._publish(lc, sponsor)
            except ToolFailed as exc:
                # a short deadline that passed while a kill or a cut held the publish between its issue and its
                # bounty: the chain refuses the bounty and the issue is marked unfunded, escrowing nothing; as the
                # hint says, the sponsor publishes the feature again with new terms, which reuses that issue
                # (docs/lifecycle.md, idempotency)
                if not (lc.expire and exc.code == "E_VALIDATION" and "marked unfunded" in exc.message):
                    raise
                lc.republished = True
                await self._publish(lc, sponsor, deadline_seconds=self.o.expire_deadline + 1)
        except ToolFailed as exc:
            lc.outcome = f"failed: {exc}"
            return
        finally:
            self._free_sponsors.put_nowait(sponsor)
        try:
            if lc.expire:
                if lc.mode == "exclusive" and lc.index % 2:
                    agent = await self._free_workers.get()
                    try:
                        lc.workers = [agent.identity]
                        await agent.call("server_mcp.accept_task", {"task_id": f"{REPO}#{lc.issue}"})
                    except ToolFailed as exc:  # too late: the deadline passed first (refused before any tx)
                        if exc.code != "E_INVALID_STATE":
                            raise
                    finally:
                        self._free_workers.put_nowait(agent)
                lc.outcome = await self._wait_for(lc, "CANCELLED", self.o.expire_deadline + 600, "refunded")
                return
            count = 2 if lc.mode == "contest" else 1
            agents = [await self._free_workers.get() for _ in range(count)]
            try:
                lc.workers = [a.identity for a in agents]
                await asyncio.gather(*(self._work(lc, a) for a in agents))
            finally:
                for agent in agents:
                    self._free_workers.put_nowait(agent)
            lc.merged_pr = lc.prs[self.rng.choice(sorted(lc.prs))]
            lc.merge_delivery = (await asyncio.to_thread(self.topo.merge, lc.merged_pr)).get("delivery")
            lc.outcome = await self._wait_for(lc, "PAID", 600, "paid")
        except ToolFailed as exc:
            lc.outcome = f"failed: {exc}"
        finally:
            lc.seconds = time.monotonic() - began

    async def _publish(self, lc: Lifecycle, sponsor: Agent, deadline_seconds: int | None = None) -> None:
        lc.sponsor = sponsor.identity
        lc.feature_id = f"{lc.index % 1000:03d}-soak-lifecycle-{lc.index}"  # a fresh schema and forge per run
        described = f"Soak lifecycle {lc.index}: users can export their list number {lc.index} as CSV"
        spec = await sponsor.call("spec_mcp.specify", {"feature_description": described, "feature_id": lc.feature_id,
                                                       "allow_overwrite": True})
        await sponsor.call("spec_mcp.plan", {"feature_id": lc.feature_id, "allow_overwrite": True})
        await sponsor.call("spec_mcp.tasks", {"feature_id": lc.feature_id, "allow_overwrite": True})
        args: dict[str, Any] = {"repo": REPO, "feature_id": lc.feature_id, "spec_path": spec["paths"]["spec"],
                                "amount": str(AMOUNT), "asset": "USDT", "network": "testnet", "mode": lc.mode,
                                "deadline_seconds": deadline_seconds or (self.o.expire_deadline if lc.expire
                                                                         else LONG_DEADLINE)}
        published = await sponsor.call("spec_mcp.publish_issue_with_metadata", args)
        lc.issue, lc.bounty_id = int(published["issue"]["number"]), str(published["bounty"]["bounty_id"])

    async def _work(self, lc: Lifecycle, agent: Agent) -> None:
        task = f"{REPO}#{lc.issue}"
        await agent.call("server_mcp.accept_task", {"task_id": task})
        async with agent.lock:  # the fork's working copy is the agent's: one branch at a time
            prepared = await agent.call("server_mcp.fork_and_prepare", {
                "repo": REPO, "issue_json": {"schema": "code3/v1", "feature_id": lc.feature_id,
                                             "issue_number": lc.issue}})
            workdir = Path(prepared["workdir"])
            (workdir / f"soak_{lc.index}_{agent.identity}.py").write_text(
                f"def export_csv_{lc.index}():  # by {agent.identity}\n    return ''\n")
            pr = await agent.call("server_mcp.open_pr", {"repo": REPO, "branch": prepared["branch"],
                                                         "title": f"feat: lifecycle {lc.index} by {agent.identity}",
                                                         "body": f"Implements {lc.feature_id}"})
        lc.prs[agent.identity] = pr["pr_url"]
        await agent.call("server_mcp.submit_pr", {"bounty_id": lc.bounty_id, "pr_url": pr["pr_url"]})

    async def _wait_for(self, lc: Lifecycle, status: str, timeout: float, outcome: str) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.bounty(lc.bounty_id)
            if found is not None and found["status"] == status:
                return outcome
            await asyncio.sleep(1.0)
        found = self.bounty(lc.bounty_id)
        return f"failed: still {found['status'] if found else 'unknown'} after {timeout:.0f} s (wanted {status})"

    # --- faults -----------------------------------------------------------------------------------

    async def _chaos(self) -> None:
        """Kills, terminations and one cut, spread over the window, one at a time, in a random order."""
        events = ["kill"] * self.o.kills + ["terminate"] * self.o.terminations + \
            (["drop"] if self.o.drop_seconds > 0 else [])
        self.rng.shuffle(events)
        began = time.monotonic()
        gap = self.o.seconds / (len(events) + 1) if events else 0
        for n, event in enumerate(events, 1):
            await asyncio.sleep(max(0.0, began + n * gap - time.monotonic()))
            if all(lc.outcome != "running" for lc in self.lifecycles):
                pass  # the faults still land: the checks afterwards cover what they broke
            if event == "kill":
                await self._kill()
            elif event == "terminate":
                count = await asyncio.to_thread(self.topo.terminate_backends)
                self.chaos.terminations.append({"at_s": round(time.monotonic() - began, 1), "backends": count})
            else:
                await self._drop()

    async def _kill(self) -> None:
        """SIGKILL a serve and a worker in turn (one of each kind at least once two kills are asked), restart it."""
        kind = ("serve", "worker")[len(self.chaos.kills) % 2]
        machine = self.rng.choice([m for m in self.topo.machines if m.kind == kind])
        await asyncio.to_thread(self.topo.kill, machine)
        await asyncio.sleep(self.rng.uniform(0.5, 3.0))
        restarted = time.monotonic()
        try:
            await asyncio.to_thread(self.topo.start, machine)
        except RuntimeError as exc:  # it did not come back: a finding (soak_checks), and the campaign goes on
            self.chaos.kills.append({"machine": machine.name, "error": str(exc)})
            return
        self.chaos.kills.append({"machine": machine.name, "restart_s": round(time.monotonic() - restarted, 1)})

    async def _drop(self) -> None:
        """Every byte to PostgreSQL dropped for drop_seconds: meanwhile `doctor` and `/readyz` must say so."""
        self.topo.proxy.drop()
        began = time.monotonic()
        seen: dict[str, Any] = {"seconds": self.o.drop_seconds, "readyz": {}, "doctor": None}
        try:
            await asyncio.sleep(min(3.0, self.o.drop_seconds / 4))
            answers = await asyncio.gather(*(asyncio.to_thread(self.topo.readyz, m)
                                             for m in self.topo.serve_machines))
            seen["readyz"] = {m.name: a for m, a in zip(self.topo.serve_machines, answers, strict=True)}
            doctor = await asyncio.to_thread(self.topo.code3, self.topo.serve_machines[0], "doctor", timeout=120)
            seen["doctor"] = {"exit": doctor.returncode,
                              "database": next((line for line in doctor.stdout.splitlines() if "database" in line),
                                               doctor.stdout[-300:])}
            seen["doctor_s"] = round(time.monotonic() - began, 1)
        finally:
            await asyncio.sleep(max(0.0, began + self.o.drop_seconds - time.monotonic()))
            self.topo.proxy.restore()
        seen["held_s"] = round(time.monotonic() - began, 1)
        self.chaos.cuts.append(seen)

    # --- the report -------------------------------------------------------------------------------

    def _report(self, findings: list[str], facts: dict[str, Any], times: dict[str, float]) -> dict[str, Any]:
        outcomes: dict[str, int] = {}
        for lc in self.lifecycles:
            key = lc.outcome if not lc.outcome.startswith("failed") else "failed"
            outcomes[key] = outcomes.get(key, 0) + 1
        return {
            "ok": not findings, "findings": findings, "facts": facts,
            "lifecycles": len(self.lifecycles), "outcomes": outcomes,
            "republished": sum(lc.republished for lc in self.lifecycles),
            "modes": {m: sum(1 for lc in self.lifecycles if lc.mode == m) for m in ("exclusive", "contest")},
            "failed_lifecycles": [f"#{lc.index}: {lc.outcome}" for lc in self.lifecycles
                                  if lc.outcome.startswith("failed")][:20],
            "agents": {"http": self.http_agents, "stdio_sponsors": len(self.sponsors),
                       "stdio_workers": len(self.workers)},
            "calls": self.stats.calls, "retries": self.stats.retries,
            "errors": dict(self.stats.errors.most_common()),
            "latency": self.stats.percentiles(),
            "kills": self.chaos.kills, "terminations": self.chaos.terminations, "cuts": self.chaos.cuts,
            "times_s": {k: round(v, 1) for k, v in times.items()},
            "lifecycle_s": _spread([lc.seconds for lc in self.lifecycles if lc.seconds]),
        }


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {"p50": round(ordered[len(ordered) // 2], 1), "max": round(ordered[-1], 1)}


def render(report: dict[str, Any]) -> str:
    lines = [f"soak: {'PASS' if report['ok'] else 'FAIL'} — {report['lifecycles']} lifecycles "
             f"({report['modes']['exclusive']} exclusive, {report['modes']['contest']} contest): {report['outcomes']}",
             f"agents: {report['agents']}; calls {report['calls']} (retries {report['retries']}); "
             f"times {report['times_s']}; lifecycle {report['lifecycle_s']}",
             f"kills survived: {len(report['kills'])} {[k['machine'] for k in report['kills']]}",
             f"backend terminations survived: {len(report['terminations'])} "
             f"({sum(t['backends'] for t in report['terminations'])} backends)",
             f"cuts survived: {len(report['cuts'])}"]
    for cut in report["cuts"]:
        lines.append(f"  drop {cut['seconds']:.0f} s: readyz {cut['readyz']}; doctor {cut['doctor']}")
    lines.append("errors by code: " + (", ".join(f"{k} {v}" for k, v in report["errors"].items()) or "none"))
    lines.append(f"{'tool':40} {'n':>5} {'p50 ms':>9} {'p99 ms':>9}")
    for tool, row in report["latency"].items():
        lines.append(f"{tool:40} {row['n']:>5} {row['p50_ms']:>9.1f} {row['p99_ms']:>9.1f}")
    lines.append("facts: " + json.dumps(report["facts"], sort_keys=True))
    for finding in report["findings"]:
        lines.append(f"FINDING: {finding}")
    for failed in report["failed_lifecycles"]:
        lines.append(f"failed lifecycle {failed}")
    return "\n".join(lines)


def run(options: Options) -> dict[str, Any]:
    campaign = Campaign(options)
    try:
        report = asyncio.run(campaign.run())
    finally:
        sigkilled = campaign.topo.close(drop_schema=not options.keep)
    report["facts"]["stopped_only_by_sigkill"] = sigkilled  # SIGTERM left them running for 15 s
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.campaigns.soak", description=__doc__.split("\n\n")[0])
    defaults = Options()
    for name in ("agents", "lifecycles", "kills", "terminations", "concurrency", "cooling", "expire_deadline",
                 "seed"):
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=getattr(defaults, name))
    for name in ("seconds", "drop_seconds", "expire_share", "contest_share", "quiesce_seconds", "max_seconds",
                 "lifecycle_seconds"):
        parser.add_argument(f"--{name.replace('_', '-')}", type=float, default=getattr(defaults, name))
    parser.add_argument("--root", type=Path, default=None, help="where the machines' directories go (default: a "
                                                                 "fresh temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the directories and the schema afterwards")
    parser.add_argument("--report", type=Path, help="also write the report as JSON here")
    args = parser.parse_args(argv)
    import faulthandler
    import signal

    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 <pid>`: every thread's stack on stderr, when it seems stuck
    import tempfile

    root = args.root or Path(tempfile.mkdtemp(prefix="code3-soak-"))
    options = Options(**{k: v for k, v in vars(args).items() if k not in ("root", "report")}, root=root)
    report = run(options)
    print(render(report))
    if args.report:
        args.report.write_text(json.dumps(report, indent=2, sort_keys=True))
    if not args.keep and args.root is None:
        import shutil

        shutil.rmtree(root, ignore_errors=True)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
