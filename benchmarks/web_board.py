"""The web board's server time (read and render, the page `/` of `code3 serve`) as the store grows, for the growth
table (issue 21: at 1 000 and 100 000 bounties within 1.5x of each other).

`board_page_times(services_or_url, n)` -> (p50 ms, p99 ms) over `n` loads of the board's pages: the first page,
then filtered (open, cancelled-as-refunded), sorted by amount and deadline, and a later page, in turn — the
views a person clicks through. Given services (`code3.wiring.build_services`, or a seeded world's), it times
`mcp_tools.web.board.board_html` in this process; given a serve's URL, it reads the serve's own time from each
answer's `Server-Timing` header (the token from CODE3_SERVE_TOKEN or `token=`), so network and client time are
not counted either way.

    .venv/bin/python -m benchmarks.web_board PROJECT_DIR [--database-url URL] [-n 200]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import time
from typing import Any

VIEWS: tuple[dict[str, str], ...] = (
    {}, {"state": "open"}, {"sort": "amount"}, {"state": "refunded"}, {"sort": "deadline"}, {"page": "3"},
    {"state": "cooling", "sort": "amount"}, {"asset": "USDT"},
)


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.99 * len(ordered)) - 1))]


def board_page_times(services_or_url: Any, n: int = 100, token: str | None = None) -> tuple[float, float]:
    """(p50, p99) in milliseconds of the board page's server time over `n` loads (after one warm-up per view)."""
    times = _by_url(services_or_url, n, token) if isinstance(services_or_url, str) else _in_process(services_or_url, n)
    return statistics.median(times), _p99(times)


def _in_process(services: Any, n: int) -> list[float]:
    from mcp_tools.web.board import board_html

    for view in VIEWS:  # warm-up: templates compiled, caches and indexes touched
        status, _ = board_html(services, view)
        assert status == 200, view
    times = []
    for k in range(n):
        started = time.perf_counter()
        status, _ = board_html(services, VIEWS[k % len(VIEWS)])
        times.append((time.perf_counter() - started) * 1000)
        assert status == 200
    return times


def _by_url(url: str, n: int, token: str | None) -> list[float]:
    import httpx

    token = token or os.environ.get("CODE3_SERVE_TOKEN")
    if not token:
        raise ValueError("pass token= or set CODE3_SERVE_TOKEN: the board needs the serve token")
    times = []
    with httpx.Client(base_url=url.rstrip("/"), headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
        for k in range(n + len(VIEWS)):
            answer = client.get("/", params=VIEWS[k % len(VIEWS)])
            answer.raise_for_status()
            found = re.search(r"dur=([0-9.]+)", answer.headers.get("server-timing", ""))
            if found is None:
                raise ValueError(f"{url} answered no Server-Timing header: not a Code3 serve's board?")
            if k >= len(VIEWS):
                times.append(float(found.group(1)))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", help="a project directory (e.g. one seeded by benchmarks.seed_store)")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("-n", type=int, default=200)
    args = parser.parse_args()
    from pathlib import Path

    from code3.settings import Settings
    from code3.wiring import build_services

    services = build_services(Settings(project=Path(args.project).resolve(), database_url=args.database_url))
    try:
        from projections.board import count

        rows = count(services.views)
        p50, p99 = board_page_times(services, args.n)
        print(f"board page over {rows} bounties: p50 {p50:.1f} ms, p99 {p99:.1f} ms ({args.n} loads)")
    finally:
        services.close()


if __name__ == "__main__":
    main()
