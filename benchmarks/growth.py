"""Cost as the store grows: p50 of the lifecycle tools, a worker tick and a worker start at 1 000 and 10 000
bounties (`--big`: and 100 000), on SQLite and PostgreSQL side by side, with the ratio of each size to the smallest.

Each store is seeded in bulk by benchmarks/seed_store.py (the events the handlers write, in mixed states: three
quarters finished, the rest open, started, submitted or cooling). Then, on top of it, each figure is the median of
SAMPLES calls through the handlers, the way a tool call runs them:
- publish: spec_mcp.publish_issue_with_metadata of a new spec (contest);
- accept: server_mcp.accept_best_task (it reads the board's best page and accepts the new bounty);
- submit: server_mcp.submit_pr of a PR opened on the forge (fork, push and open_pr not timed);
- merge: the webhook's mark_merged of that PR once merged on the forge (the cooling period set to 1 s for these);
- claim: server_mcp.claim_payout by the winner once that cooling passed;
- cancel: the sponsor's cancel_bounty of a seeded open bounty (the escrow refunded);
- board read: what accept_best_task reads (the board caught up, its best page of open bounties);
- worker tick: one idle round (nothing due: no payout, no refund, no new chain event);
- worker start: the worker built and run to its first round (`code3 worker --once`);
- board page p50/p99: the web page's board (issue 21), its server time with the render, BOARD_PAGES loads of the
  first page of each view (benchmarks/web_board.py);
- audit verify: one `code3 audit verify` of the whole store (by pages; the one figure that must grow with the
  store: it reads every event), with its peak of traced memory beside it;
- extra rows (EXTRA_ROWS, or --row LABEL=module:function): a function of another module called with the worker's
  services, SAMPLES times, its p50.
Targets: every figure but audit verify at the larger sizes within 1.5x of the smallest size's.

    .venv/bin/python -m benchmarks.growth [--big] [--sizes 1000,10000] [--stores sqlite,postgres] [--no-audit]
        [--row "LABEL=module:function"]

PostgreSQL: CODE3_BENCH_POSTGRES (default postgresql://postgres@127.0.0.1:5432/test), a fresh schema per size.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adapters.git import commit_all, git
from benchmarks.seed_store import REPO, World, open_world, seed
from code3 import wiring
from mcp_tools.lifecycle import audit, publish, settle, work
from projections.bounties import board
from projections.bounties.board import BountyBoard
from projections.runner import follow
from scheduler.worker import run_worker

SAMPLES = 9
BOARD_PAGES = 60  # board page loads per level (its p99 needs more than SAMPLES)
TICKS = 11
STARTS = 3
TARGET = 1.5
POSTGRES = os.environ.get("CODE3_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
TOOLS = ("publish", "accept", "submit", "merge", "claim", "cancel", "board read")
METRICS = (*TOOLS, "worker tick", "worker start", "audit verify")
GROWS = ("audit verify",)  # reads the whole store by its nature: shown, not held to the target
# Rows another module adds: (label, "module:function"); the function is called with the worker's Services and
# each call is timed (SAMPLES calls, the p50 shown). A module or function that is not there is skipped, said once.
EXTRA_ROWS: list[tuple[str, str]] = []


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return (time.perf_counter() - start) * 1000, result


def _p50(values: list[float]) -> float:
    return statistics.median(values)


def _lifecycle(world: World, project: Path, tag: str) -> dict[str, float]:
    """publish, accept, submit and board read, SAMPLES each, on the seeded world."""
    alice, bob = world.sponsor, world.worker
    times: dict[str, list[float]] = {m: [] for m in TOOLS}
    published = []
    world.ledger.mint(alice.signer.address, "USDT", 10**10 * SAMPLES)
    cooling = world.ledger.cooling_period  # a bounty keeps the period it was created with: these cool for 1 s,
    world.ledger.set_cooling_period(alice.signer, 1)  # the seeded ones keep their 7 days (nothing else falls due)
    for k in range(SAMPLES):
        fid = f"9{k:02d}-bench{tag}"
        spec_dir = project / "specs" / fid
        spec_dir.mkdir(parents=True, exist_ok=True)
        (spec_dir / "spec.md").write_text(f"# Bench {tag} {k}\n\nA measured publish.\n", encoding="utf-8")
        ms, answer = _timed(lambda fid=fid, k=k: publish.publish_issue_with_metadata(
            alice, repo=REPO, feature_id=fid, spec_path=f"specs/{fid}/spec.md", amount=str(10**9 + k), mode="contest"))
        times["publish"].append(ms)
        published.append((fid, answer))
    for _ in range(SAMPLES):
        ms, _rows = _timed(lambda: (follow(bob.store, bob.views, BountyBoard()),
                                    board.best_open(bob.views, 0, bob.signer.address, False, work.BEST_PAGE)))
        times["board read"].append(ms)
    accepted = {}
    submitted: list[tuple[str, str]] = []
    for _ in range(SAMPLES):
        ms, answer = _timed(lambda: work.accept_best_task(bob))
        times["accept"].append(ms)
        accepted[answer["bounty_id"]] = answer["selected_task_id"]
    for fid, answer in published:
        bounty_id = answer["bounty"]["bounty_id"]
        if bounty_id not in accepted:
            raise RuntimeError(f"accept_best_task did not choose the new bounty {bounty_id}")
        prepared = work.fork_and_prepare(bob, REPO, {"feature_id": fid, "issue_number": answer["issue"]["number"]})
        workdir = Path(prepared["workdir"])
        (workdir / f"{fid}.txt").write_text(fid, encoding="utf-8")
        commit_all(workdir, "work")
        bob.forge.push(workdir, prepared["branch"])
        git("checkout", "-q", "--detach", cwd=workdir)
        pr = work.open_pr(bob, REPO, prepared["branch"], "work", "")
        ms, _answer = _timed(lambda pr=pr, bounty_id=bounty_id: work.submit_pr(bob, bounty_id, pr["pr_url"]))
        times["submit"].append(ms)
        submitted.append((bounty_id, pr["pr_url"]))
    world.ledger.set_cooling_period(alice.signer, cooling)
    for k, (_, pr_url) in enumerate(submitted):
        bob.forge.merge_pr(pr_url)
        ms, _answer = _timed(lambda pr_url=pr_url, k=k: settle.mark_merged(alice, pr_url, f"bench-{tag}-{k}"))
        times["merge"].append(ms)
    world.ledger.advance(2)
    for bounty_id, _ in submitted:
        ms, _answer = _timed(lambda bounty_id=bounty_id: settle.claim_payout(bob, bounty_id))
        times["claim"].append(ms)
    follow(alice.store, alice.views, BountyBoard())  # the samples are no longer open
    for row in board.query(alice.views, ("OPEN",), limit=SAMPLES):
        ms, _answer = _timed(lambda row=row: settle.cancel_bounty(alice, row["bounty_id"]))
        times["cancel"].append(ms)
    return {m: _p50(v) for m, v in times.items()}


def _audit(world: World) -> dict[str, float]:
    """One audit verify of the whole store: its time, and the peak of memory Python allocated meanwhile."""
    import tracemalloc

    tracemalloc.start()
    try:
        ms, verdict = _timed(lambda: audit.verify(world.sponsor))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if not verdict.ok:
        raise RuntimeError(f"audit verify found problems on the seeded store: {verdict.problems[:3]}")
    return {"audit verify": ms, "audit verify MB": peak / 2**20}


def _extra(world: World, rows: list[tuple[str, str]]) -> dict[str, float]:
    """The p50 of each extra row's function, called with the worker's services."""
    figures = {}
    for label, target in rows:
        module, _, name = target.partition(":")
        try:
            fn = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as exc:
            print(f"  row {label!r}: {target} is not there ({exc}); skipped", flush=True)
            continue
        figures[label] = _p50([_timed(lambda fn=fn: fn(world.worker))[0] for _ in range(SAMPLES)])
    return figures


def _board_page(world: World) -> dict[str, float]:
    """The web board's server time (issue 21): the first page of each view (filters, orders), rendered, p50 and
    p99 over BOARD_PAGES loads — held to the same x1.5 as the tools."""
    from benchmarks.web_board import board_page_times

    p50, p99 = board_page_times(world.worker, n=BOARD_PAGES)
    return {"board page p50": p50, "board page p99": p99}


def _worker(project: Path, home: Path, database_url: str | None) -> dict[str, float]:
    from code3.settings import Settings

    settings = Settings(project=project, home=home, identity="alice", resolver="alice", database_url=database_url)
    starts = []
    for _ in range(STARTS):
        ms, _ = _timed(lambda: run_worker(wiring.worker(settings), once=True))
        starts.append(ms)
    worker = wiring.worker(settings)
    try:
        worker.tick()  # the lifecycle's own events
        ticks = []
        for _ in range(TICKS):
            ms, done = _timed(worker.tick)
            if done.get("payouts") or done.get("expired") or done.get("chain_events"):
                raise RuntimeError(f"the tick was not idle: {done}")
            ticks.append(ms)
    finally:
        worker.close()
    return {"worker tick": _p50(ticks), "worker start": _p50(starts)}


def _schema() -> tuple[str, Callable[[], None]]:
    import psycopg

    schema = "code3_growth_" + uuid.uuid4().hex[:10]
    with psycopg.connect(POSTGRES, autocommit=True, connect_timeout=3) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")

    def drop() -> None:
        with psycopg.connect(POSTGRES, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")

    return f"{POSTGRES}?schema={schema}", drop


def measure(store: str, n: int, root: Path, with_audit: bool = True,
            extra: list[tuple[str, str]] | None = None) -> dict[str, float]:
    """Seed `n` bounties on `store` in a fresh project, then every figure."""
    extra = EXTRA_ROWS if extra is None else extra
    project, home = root / f"{store}-{n}", root / f"{store}-{n}-home"
    url, drop = _schema() if store == "postgres" else (None, lambda: None)
    try:
        world = open_world(project, home, url)
        try:
            started = time.perf_counter()
            seed(world, n)
            print(f"  {store} {n}: seeded in {time.perf_counter() - started:.1f} s", flush=True)
        finally:
            world.close()  # measured by processes started on the seeded store, as a serve would be
        os.sync()  # the bulk write's tail reaches the disk before anything is timed (commits wait on it otherwise)
        world = open_world(project, home, url)
        try:
            figures = _lifecycle(world, project, f"{n}")
            figures.update(_board_page(world))
            figures.update(_extra(world, extra))
        finally:
            world.close()
        figures.update(_worker(project, home, url))
        if with_audit:
            world = open_world(project, home, url)
            try:
                figures.update(_audit(world))
            finally:
                world.close()
        return figures
    finally:
        drop()


def table(results: dict[tuple[str, int], dict[str, float]], stores: list[str], sizes: list[int]) -> str:
    """Rows: every figure; columns: each store's sizes side by side, then each larger size's ratio to the smallest.
    The verdict names every figure over TARGET (audit verify and its memory are shown, not held to it)."""
    head = ["p50 ms"]
    for store in stores:
        head += [f"{store} {n:,}" for n in sizes] + [f"{store} x{n // sizes[0]}" for n in sizes[1:]]
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    rows = list(dict.fromkeys([*METRICS, *(k for r in results.values() for k in r)]))
    misses = []
    for metric in rows:
        cells = [metric]
        for store in stores:
            values = [results[(store, n)].get(metric) for n in sizes]
            cells += ["-" if v is None else f"{v:.1f}" for v in values]
            for n, v in zip(sizes[1:], values[1:], strict=True):
                if v is None or values[0] is None:
                    cells.append("-")
                    continue
                ratio = v / values[0] if values[0] else float("inf")
                held = metric not in GROWS and not metric.startswith(GROWS)
                cells.append(f"{ratio:.2f}" + ("" if held else " (grows)"))
                if held and ratio > TARGET:
                    misses.append(f"{metric} on {store} at {n:,}: x{ratio:.2f}")
        lines.append(" | ".join(cells))
    verdict = f"every figure within x{TARGET}" if not misses else f"over x{TARGET}: " + "; ".join(misses)
    return "\n".join(lines) + f"\n{verdict}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--big", action="store_true", help="add the 100 000 level (make bench-growth)")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--no-audit", action="store_true", help="leave audit verify out (it reads the whole store)")
    parser.add_argument("--row", action="append", default=[], metavar="LABEL=module:function",
                        help="one more measured row: a function called with the worker's services")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")] + ([100_000] if args.big else [])
    stores = args.stores.split(",")
    extra = [*EXTRA_ROWS, *(tuple(r.split("=", 1)) for r in args.row)]
    results: dict[tuple[str, int], dict[str, float]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="code3-growth-") as tmp:
        for store in stores:
            for n in sizes:
                results[(store, n)] = measure(store, n, Path(tmp), not args.no_audit, extra)
    print(table(results, stores, sizes))
    print(f"(the whole run: {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
