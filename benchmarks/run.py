"""`make bench`: code3's MCP server against the floor of any Python MCP server.

The baseline is benchmarks/minimal_add_server.py (one `add` tool). code3 is judged relative to it,
so the targets hold on any machine: start-up to a `tools/list` answer ≤ 1.2x the baseline and the
`add` round-trip p50 ≤ 1.5x. Exit status: 0 all targets met, 1 a target missed (or an extra benchmark
broke), 2 a server could not be measured at all.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import tempfile
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python benchmarks/run.py` puts benchmarks/, not the root, on sys.path
    sys.path.insert(0, str(ROOT))

from benchmarks.mcp_stdio import McpBenchError, add_latency_interleaved, cold_start  # noqa: E402
from benchmarks.report import Row, format_table, median, percentile  # noqa: E402

STARTUP_MAX_RATIO = 1.2
ADD_P50_MAX_RATIO = 1.5
COLD_RUNS = 7
ADD_CALLS = 300

# ---------------------------------------------------------------------------------------------------
# EXTRA_BENCHES: callables run after the MCP comparison, each returning table rows
# (benchmarks.report.Row). A row with passed=False fails `make bench`; an exception does too.
# ---------------------------------------------------------------------------------------------------
EXTRA_BENCHES: list[Callable[[], list[Row]]] = []
EXTRA_IMPORT_ERRORS: list[str] = []

for _module in ("lifecycle", "projections", "prepare_mcp"):
    try:
        EXTRA_BENCHES.append(importlib.import_module(f"benchmarks.{_module}").rows)
    except Exception:
        EXTRA_IMPORT_ERRORS.append(f"benchmarks.{_module} failed to import:\n" + traceback.format_exc())


def baseline_cmd() -> list[str]:
    return [sys.executable, str(ROOT / "benchmarks" / "minimal_add_server.py")]


def code3_cmd() -> list[str]:
    return [sys.executable, "-m", "code3", "mcp", "--profile", "all"]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def measure_cold_starts(
    servers: Mapping[str, tuple[Sequence[str], Mapping[str, str]]], runs: int
) -> tuple[dict[str, float], dict[str, list[float]]]:
    """The first spawn of each server, then `runs` spawns each, alternating the servers run by run so drift
    (thermal, page cache, noisy neighbours) hits both.

    The first start after an install or an edit is set-up more than start-up: it writes .pyc files (unless
    PYTHONDONTWRITEBYTECODE is set) and, for code3, builds and keeps its tools/list manifest
    (mcp_tools.manifest). It is reported on a row of its own rather than mixed into the others.
    """
    names = list(servers)
    first: dict[str, float] = {}
    for name in names:
        cmd, env = servers[name]
        log(f"  first spawn: {name}")
        first[name] = cold_start(cmd, env, 1, cwd=ROOT)[0]
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(runs):
        for name in names if i % 2 == 0 else reversed(names):
            cmd, env = servers[name]
            samples[name] += cold_start(cmd, env, 1, cwd=ROOT)
    return first, samples


def mcp_rows(
    base: tuple[Sequence[str], Mapping[str, str]],
    code3: tuple[Sequence[str], Mapping[str, str]],
    cold_runs: int,
    calls: int,
) -> list[Row]:
    log(f"cold start: {cold_runs} runs each, alternating")
    first, starts = measure_cold_starts({"baseline": base, "code3": code3}, cold_runs)
    log(f"add latency: {calls} calls each after 20 warm-up calls, taking turns")
    (base_lat, base_rss), (code3_lat, code3_rss) = add_latency_interleaved([base, code3], calls, cwd=ROOT)

    def ms(values: list[float], q: float) -> float:
        return percentile(values, q) * 1000

    rows = [
        Row.against_baseline(
            "start-up to tools/list p50",
            median(starts["baseline"]),
            median(starts["code3"]),
            "s",
            STARTUP_MAX_RATIO,
        ),
        Row.against_baseline(
            "start-up to tools/list p95",
            percentile(starts["baseline"], 95),
            percentile(starts["code3"], 95),
            "s",
        ),
        Row.against_baseline(
            "first start-up (builds the manifest)", first["baseline"], first["code3"], "s"
        ),
        Row.against_baseline(
            "add round trip p50", ms(base_lat, 50), ms(code3_lat, 50), "ms", ADD_P50_MAX_RATIO
        ),
        Row.against_baseline("add round trip p95", ms(base_lat, 95), ms(code3_lat, 95), "ms"),
    ]
    if base_rss is not None and code3_rss is not None:
        rows.append(Row.against_baseline("peak RSS (add session)", base_rss, code3_rss, "MB"))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cold-runs", type=int, default=COLD_RUNS, help="measured spawns per server")
    parser.add_argument("--calls", type=int, default=ADD_CALLS, help="measured add calls per server")
    parser.add_argument(
        "--self-check",
        action="store_true",
        help="measure the baseline against itself (ratios should be ~1.0) to see this machine's noise",
    )
    parser.add_argument("--no-extra", action="store_true", help="skip EXTRA_BENCHES")
    args = parser.parse_args(argv)

    base = (baseline_cmd(), dict(os.environ))
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs"
    log(f"python {platform.python_version()} ({machine}): {sys.executable}")

    with tempfile.TemporaryDirectory(prefix="code3-bench-") as project:
        if args.self_check:
            code3 = base
        else:
            # a cache directory of the run's own: the first start builds the manifest, as after an install
            code3 = (code3_cmd(), {**os.environ, "CODE3_PROJECT": project, "CODE3_IDENTITY": "bench",
                                   "CODE3_CACHE_DIR": str(Path(project) / "cache")})
        try:
            rows = mcp_rows(base, code3, args.cold_runs, args.calls)
        except (McpBenchError, OSError) as exc:
            print(f"benchmark aborted: {exc}", file=sys.stderr)
            return 2

    broken = list(EXTRA_IMPORT_ERRORS)
    if not args.no_extra:
        for bench in EXTRA_BENCHES:
            name = f"{bench.__module__}.{bench.__qualname__}"
            log(f"extra: {name}")
            try:
                rows.extend(bench())
            except Exception:
                broken.append(f"{name} raised:\n{traceback.format_exc()}")

    print(format_table(rows))
    for message in broken:
        print(f"\n{message}", file=sys.stderr)
    failed = [row.metric for row in rows if row.passed is False]
    if failed:
        print(f"\nFAIL: {', '.join(failed)}")
    ok = not failed and not broken
    if ok:
        print("\nall targets met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
