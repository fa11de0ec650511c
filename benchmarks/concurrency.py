"""`make bench`: concurrency in one `code3 serve` — does a slow call stall the others? (issue 20)

One real `code3 serve` (streamable HTTP) on a project seeded with 1 000 bounties (benchmarks/seed_store.py), its
forge the GitHub stand-in (tests/fakes/github_server.py). 16 clients, each an official MCP SDK client session
over streamable HTTP, spread over 4 client processes (PROCESSES), offer 100 calls/s between them for a window of
DURATION_S, on a fixed schedule:
- `add` (half the calls; a pure tool, answered on the event loop);
- a board read (three in ten): `server_mcp.accept_best_task` with a minimum no bounty reaches, so it catches the
  board up, reads its best page from the board's database and accepts nothing;
- a write (one in five): CodeNexus `add_comment` on the client's own file (an event saved, the index caught up).

The mix runs twice in the same run: the baseline with nothing else going on, then the same mix while one
`spec_mcp.publish_issue_with_metadata` waits on the slow forge (the stand-in holds its issue creation SLOW_S, or
less when the window ends first); only the calls sent while the publish was pending count in the second run,
and the publish must then succeed with one issue on the forge. Reported: p50 and p99 per kind in both runs and
their ratio; targets (issue 20): p99 of `add` under 20 ms and of a board read under 50 ms while the publish
waits.

    .venv/bin/python -m benchmarks.concurrency [--duration 20] [--database-url postgresql://postgres@127.0.0.1/test]

Latency is measured in the client from sending a call to its answer; a call due while its client still waits
for the previous one is sent late (each client has one call in flight, as an MCP client session does), and
`late` counts them: offered load the serve did not keep up with shows there, not hidden in the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import Row, format_table, percentile  # noqa: E402

BOUNTIES = 1000
CLIENTS = 16
RATE = 100.0  # calls per second offered, between all clients
DURATION_S = 20.0
PROCESSES = 4  # client processes the 16 sessions are spread over (time.time() is their common clock)
WARM_UP_S = 10.0  # from the mix's start until its first call is due: processes start, open and warm sessions
SLOW_S = 30.0  # how long the stand-in holds the publish's issue creation (released once the window is over)
TOKEN = "a-serve-token-for-the-concurrency-bench-0123"
GITHUB_TOKEN = "bench-github-token"
SLOW_REPO = "alice/slow-forge"
FEATURE = "900-slow-forge-publish"
TARGETS_MS = {"add": 20.0, "board read": 50.0}
NO_BOUNTY_REACHES = str(2**64 - 1)  # accept_best_task's min_amount, the most a u64 holds: nothing is accepted
KINDS = ("add", "board read", "write")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- the stand ----------------------------------------------------------------------------------------------------

def prepare(root: Path, bounties: int = BOUNTIES, database_url: str | None = None, clients: int = CLIENTS
            ) -> tuple[Path, Path]:
    """A project with `bounties` seeded, a file per client for its writes, a spec to publish and funds for it.
    Returns (project, CODE3_HOME)."""
    from benchmarks.seed_store import open_world, seed

    project, home = root / "project", root / "home"
    world = open_world(project, home, database_url)
    try:
        if bounties:
            seed(world, bounties)
        world.ledger.mint(world.sponsor.signer.address, "USDT", 10**12)
    finally:
        world.close()
    for client in range(clients):
        path = project / "src" / f"client_{client}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def work_{client}() -> int:\n    return {client}\n")
    spec = project / "specs" / FEATURE / "spec.md"
    spec.parent.mkdir(parents=True, exist_ok=True)
    spec.write_text("# A publish that waits on a slow forge\n\n**Input**: \"a slow forge\"\n")
    return project, home


class Serve:
    """`code3 serve --port 0` as alice on `project`, its forge the GitHub stand-in at `github_api`."""

    def __init__(self, project: Path, home: Path, github_api: str, database_url: str | None = None,
                 extra_env: dict[str, str] | None = None, log_file: Path | None = None, args: tuple[str, ...] = ()
                 ) -> None:
        env = {**os.environ, "CODE3_PROJECT": str(project), "CODE3_HOME": str(home), "CODE3_IDENTITY": "alice",
               "CODE3_RESOLVER": "alice", "CODE3_SERVE_TOKEN": TOKEN, "CODE3_FORGE": "github",
               "GITHUB_TOKEN": GITHUB_TOKEN, "CODE3_GITHUB_API_URL": github_api, "CODE3_LOG_LEVEL": "WARNING",
               **({"CODE3_DATABASE_URL": database_url} if database_url else {}), **(extra_env or {})}
        with contextlib.ExitStack() as files:
            err = files.enter_context(log_file.open("w")) if log_file else subprocess.DEVNULL
            self.proc = subprocess.Popen([sys.executable, "-m", "code3", "serve", "--port", "0", *args], cwd=project,
                                         env=env, text=True, stdout=subprocess.PIPE, stderr=err)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line:
            self.proc.wait(timeout=30)
            raise RuntimeError(f"code3 serve did not start (exit {self.proc.returncode}; log: {log_file})")
        self.ready = json.loads(line)
        self.url = self.ready["listening"]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@contextlib.contextmanager
def slow_github(root: Path) -> Iterator[Any]:
    """The GitHub stand-in (alice's token, the publish's repository), in this process's threads."""
    from tests.fakes.github_server import FakeGitHub

    with FakeGitHub(root / "github", tokens={GITHUB_TOKEN: "alice"}) as github:
        github.create_repo(SLOW_REPO)
        yield github


@contextlib.asynccontextmanager
async def session(url: str, token: str = TOKEN) -> Any:
    """An official MCP SDK client session over streamable HTTP (the 2025-11-25 handshake), with the serve token."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy") as mcp:
        yield mcp


def call_for(kind: str, client: int, n: int) -> tuple[str, dict[str, Any]]:
    """The tool and arguments of a call of `kind` by `client` (its n-th)."""
    if kind == "add":
        return "add", {"a": n, "b": client}
    if kind == "board read":
        return "server_mcp.accept_best_task", {"min_amount": NO_BOUNTY_REACHES}
    return "add_comment", {"file_path": f"src/client_{client}.py", "comment": f"client {client}, note {n}"}


def check(kind: str, result: Any) -> str | None:
    """None for the answer the call should have, else what was wrong with it."""
    if result.is_error:
        return f"{kind}: {result.content[0].text[:200] if result.content else 'isError'}"
    if kind == "board read" and (result.structured_content or {}).get("selected_task_id") is not None:
        return "board read: accepted a task"
    return None


def publish_args() -> dict[str, Any]:
    return {"repo": SLOW_REPO, "feature_id": FEATURE, "spec_path": f"specs/{FEATURE}/spec.md",
            "amount": "1000000"}


# --- the mix ------------------------------------------------------------------------------------------------------

def kind_of(k: int) -> str:
    """Call k of the schedule: 5 in 10 `add`, 3 board reads, 2 writes, spread over the clients."""
    return ("add", "board read", "add", "write", "add", "board read", "add", "write", "add", "board read")[k % 10]


@dataclass
class Mix:
    """Latencies (ms) per kind, errors and late sends of one run of the mix."""

    samples: list[tuple[float, str, float]] = field(default_factory=list)  # (sent at, kind, latency in ms)
    errors: list[str] = field(default_factory=list)
    late: int = 0
    started: float = 0.0
    ended: float = 0.0

    def latencies(self, kind: str, since: float = 0.0, until: float = float("inf")) -> list[float]:
        """The latencies of the calls of `kind` sent between `since` and `until`."""
        return [ms for sent, k, ms in self.samples if k == kind and since <= sent <= until]

    def within(self, since: float, until: float) -> Mix:
        """The calls sent between `since` and `until` (while the publish waited), errors and late sends kept."""
        kept = [sample for sample in self.samples if since <= sample[0] <= until]
        ends = [sent for sent, _k, _ms in kept]
        return Mix(kept, self.errors, self.late, min(ends, default=since), max(ends, default=until))


def run_mix(url: str, duration_s: float = DURATION_S, rate: float = RATE, clients: int = CLIENTS,
            processes: int = PROCESSES) -> Mix:
    """`clients` sessions offering `rate` calls/s between them for `duration_s`, spread over `processes` client
    processes (one event loop each, so the clients' own scheduling does not queue behind one loop and inflate
    what is measured). Every process opens its sessions and warms them up (one call of each kind, not counted)
    before a common start time; a process not ready by then sends late, and that is counted."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    start = time.time() + WARM_UP_S
    groups = [list(range(p, clients, processes)) for p in range(processes)]
    with ProcessPoolExecutor(len(groups), mp_context=multiprocessing.get_context("spawn")) as pool:
        parts = list(pool.map(_mix_part, [(url, duration_s, rate, clients, group, start) for group in groups]))
    mix = Mix(started=start)
    for part in parts:
        mix.samples += part.samples
        mix.errors += part.errors
        mix.late += part.late
        mix.ended = max(mix.ended, part.ended)
    mix.samples.sort()
    return mix


def _mix_part(job: tuple[str, float, float, int, list[int], float]) -> Mix:
    """One client process's share of the schedule: call k of the whole mix is client k % clients's."""
    url, duration_s, rate, clients, group, start = job
    return asyncio.run(_clients(url, duration_s, rate, clients, group, start))


async def _clients(url: str, duration_s: float, rate: float, clients: int, group: list[int], start: float) -> Mix:
    mix = Mix(started=start)
    total = int(duration_s * rate)

    async def client(c: int) -> None:
        async with session(url) as mcp:
            for kind in KINDS:  # warm-up: the session, the services, the board caught up
                check_failed = check(kind, await mcp.call_tool(*call_for(kind, c, 0)))
                if check_failed:
                    mix.errors.append(f"warm-up {check_failed}")
            for k in range(c, total, clients):
                due = start + k / rate
                wait = due - time.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                elif wait < -0.010:
                    mix.late += 1
                kind = kind_of(k)
                sent = time.time()
                result = await mcp.call_tool(*call_for(kind, c, k + 1))
                mix.samples.append((sent, kind, (time.time() - sent) * 1000))
                problem = check(kind, result)
                if problem:
                    mix.errors.append(problem)

    await asyncio.gather(*(client(c) for c in group))
    mix.ended = time.time()
    return mix


async def with_slow_publish(url: str, github: Any, duration_s: float, rate: float, clients: int,
                            slow_s: float = SLOW_S) -> tuple[Mix, dict[str, Any]]:
    """The mix while a publish waits on the held issue creation (released after `slow_s`, or once the window is
    over). Returns the calls sent while the publish was pending, and what became of the publish (its answer, when
    it reached the forge and when it was answered, how many calls the whole window sent)."""
    hold = github.hold_issue_creation(slow_s)
    outcome: dict[str, Any] = {}

    async def publish() -> None:
        async with session(url) as mcp:
            outcome["sent"] = time.time()
            result = await mcp.call_tool("spec_mcp.publish_issue_with_metadata", publish_args())
            outcome["answered"] = time.time()
            outcome["error"] = result.content[0].text[:300] if result.is_error else None

    publishing = asyncio.create_task(publish())
    while not hold.entered.is_set():  # the publish reached the forge and waits there
        if publishing.done():
            await publishing
            raise RuntimeError(f"the publish ended before reaching the slow forge: {outcome}")
        await asyncio.sleep(0.02)
    outcome["held"] = time.time()
    mix = await asyncio.to_thread(run_mix, url, duration_s, rate, clients)
    hold.release.set()
    await publishing
    outcome["window_calls"] = len(mix.samples)
    return mix.within(outcome["held"], outcome["answered"]), outcome


# --- the report ---------------------------------------------------------------------------------------------------

def rows(baseline: Mix, loaded: Mix) -> list[Row]:
    out: list[Row] = []
    for kind in KINDS:
        for q in (50, 99):
            base = percentile(baseline.latencies(kind), q)
            under = percentile(loaded.latencies(kind), q)
            metric = f"{kind} p{q}, a publish waiting on the forge (baseline: none)"
            row = Row.against_baseline(metric, base, under, "ms")
            target = TARGETS_MS.get(kind) if q == 99 else None
            if target is not None:
                row = Row(metric, under, "ms", base, f"≤ {target:g} ms", under <= target)
            out.append(row)
    return out


def summary(name: str, mix: Mix) -> str:
    calls = len(mix.samples)
    window = mix.ended - mix.started
    return (f"{name}: {calls} calls in {window:.1f} s ({calls / window:.0f}/s), late sends {mix.late}, "
            f"errors {len(mix.errors)}" + (f" (first: {mix.errors[0]})" if mix.errors else ""))


def measure(duration_s: float = DURATION_S, database_url: str | None = None, bounties: int = BOUNTIES,
            rate: float = RATE, clients: int = CLIENTS) -> tuple[list[Row], list[str], bool]:
    """(rows, notes, ok): ok is False when a call or the publish failed, or too few calls (under 20 of a kind)
    were sent while the publish waited."""
    with tempfile.TemporaryDirectory(prefix="code3-concurrency-") as tmp:
        root = Path(tmp)
        log(f"concurrency: seeding {bounties} bounties ...")
        project, home = prepare(root, bounties, database_url, clients)
        with slow_github(root) as github:
            serve = Serve(project, home, github.api_url, database_url, log_file=root / "serve.log")
            try:
                log(f"concurrency: baseline mix, {clients} clients, {rate:g} calls/s, {duration_s:g} s ...")
                baseline = run_mix(serve.url, duration_s, rate, clients)
                log("concurrency: the same mix while a publish waits on the slow forge ...")
                loaded, publish = asyncio.run(with_slow_publish(serve.url, github, duration_s, rate, clients))
            finally:
                serve.stop()
            serve_log = (root / "serve.log").read_text(errors="replace")
            issues = sum(1 for item in github.state.items[SLOW_REPO].values() if item.pull is None)
    waited = publish["answered"] - publish["held"]
    during = {kind: len(loaded.latencies(kind)) for kind in KINDS}
    notes = [summary("baseline", baseline), summary("while the publish waited", loaded),
             f"the publish waited {waited:.1f} s at the forge, then answered "
             + ("success" if publish["error"] is None else f"an error: {publish['error']}")
             + f"; {len(loaded.samples)} of the window's {publish['window_calls']} calls were sent during that wait "
             + "(" + ", ".join(f"{kind} {n}" for kind, n in during.items()) + ")"]
    ok = not baseline.errors and not loaded.errors and publish["error"] is None and min(during.values()) >= 20
    if issues != 1:
        ok = False
        notes.append(f"the publish made {issues} issues on the forge (one expected)")
    if not ok and serve_log.strip():
        notes.append("serve log (tail):\n" + "\n".join(serve_log.strip().splitlines()[-20:]))
    return rows(baseline, loaded), notes, ok


@contextlib.contextmanager
def fresh_schema(database_url: str | None) -> Iterator[str | None]:
    """A PostgreSQL URL without `?schema=`: a fresh schema of that database for this run, dropped afterwards
    (a URL that names its schema, or None for SQLite, is used as it is)."""
    if not database_url or "schema=" in database_url:
        yield database_url
        return
    import uuid

    import psycopg

    schema = "code3_concurrency_" + uuid.uuid4().hex[:10]
    with psycopg.connect(database_url, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{database_url}?schema={schema}"
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=DURATION_S, help="seconds of each window")
    parser.add_argument("--bounties", type=int, default=BOUNTIES)
    parser.add_argument("--database-url", default=os.environ.get("CODE3_BENCH_DATABASE_URL"),
                        help="run the serve on PostgreSQL: a URL with ?schema=NAME uses that schema, one without "
                             "gets a fresh schema dropped afterwards (default: SQLite)")
    args = parser.parse_args()
    if args.duration >= SLOW_S - 5:
        parser.error(f"--duration must stay under {SLOW_S - 5:g} s: the window lies inside the publish's wait")
    with fresh_schema(args.database_url) as database_url:
        table_rows, notes, ok = measure(args.duration, database_url, args.bounties)
    store = "PostgreSQL" if args.database_url else "SQLite"
    print(f"\nConcurrency in one serve ({store}, {args.bounties} bounties, {CLIENTS} clients, {RATE:g} calls/s)")
    print(format_table(table_rows))
    for note in notes:
        print(note)
    missed = [r.metric for r in table_rows if r.passed is False]
    return 0 if ok and not missed else 1


if __name__ == "__main__":
    sys.exit(main())
