"""The web board's server time (read and render, the page `/` of `code3 serve`) as the store grows, for the growth
table (issue 21: at 1 000 and 100 000 bounties within 1.5x of each other).

`board_page_times(services_or_url, n)` -> (p50 ms, p99 ms) over `n` loads of the board's pages: the first page,
then filtered (open, cancelled-as-refunded), sorted by amount and deadline, and a later page, in turn — the
views a person clicks through. Given services (`code3.wiring.build_services`, or a seeded world's), it times
`mcp_tools.web.board.board_html` in this process; given a serve's URL, it reads the serve's own time from each
answer's `Server-Timing` header (the token from CODE3_SERVE_TOKEN or `token=`), so network and client time are
not counted either way.

    .venv/bin/python -m benchmarks.web_board PROJECT_DIR [--database-url URL] [-n 200]
    .venv/bin/python -m benchmarks.web_board --synthetic 1000,100000 [--database-url URL] [-n 200]

`--synthetic`: the board's own tables filled by SQL with that many rows in the seeding tool's mix of states (an empty
event log beside them), for a quick look at the board's cost alone; the growth table's figures come from stores
seeded by `benchmarks.seed_store`.
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


STATES = ["OPEN", "OPEN", "STARTED", "PR_SUBMITTED", "COOLING_DOWN", *["PAID"] * 7, *["CANCELLED"] * 8]


def fill_board(views: Any, rows: int) -> None:
    """`rows` bounties straight into the board's tables (and the outcomes and running sums beside them), in the mix
    of states the seeding tool writes (of every 20: 2 open, 1 started, 1 submitted, 1 cooling, 7 paid, 8 cancelled;
    one cancellation in 97 disputed), 20 repositories, a third exclusive; PostgreSQL's statistics refreshed."""
    from projections.bounties.board import BountyBoard
    from projections.bounties.board_outcomes import BoardOutcomes
    from projections.versions import ready

    ready(views, BountyBoard)
    ready(views, BoardOutcomes)
    series = ("generate_series(1, ?) AS s(g)" if views.postgres else
              "(WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < ?) SELECT g FROM s) AS s")
    pct = "%%" if views.postgres else "%"  # psycopg reads a lone % as a placeholder
    state = " ".join(f"WHEN {k} THEN '{name}'" for k, name in enumerate(STATES))
    text = "CAST(g AS TEXT)"
    bucket = "CASE state WHEN 'PAID' THEN 'paid' WHEN 'CANCELLED' THEN 'refunded' ELSE 'escrowed' END"
    with views.transaction() as cur:
        cur.execute(f"INSERT INTO bounty_board (bounty_id, repo, issue_hash, task_id, amount, asset, state, workers, "
                    f"effort, sponsor, deadline, mode, cooling_until) SELECT {text}, "
                    f"'acme/repo' || CAST(g {pct} 20 AS TEXT), {text}, "
                    f"'acme/repo' || CAST(g {pct} 20 AS TEXT) || '#' || {text}, 1000000 + (g * 7919) {pct} 5000000, "
                    f"'USDT', CASE g {pct} 20 {state} END, '[]', 1, 'sponsor', 1800000000 + g, "
                    f"CASE WHEN g {pct} 3 = 0 THEN 'exclusive' ELSE 'contest' END, "
                    f"CASE WHEN g {pct} 20 = 4 THEN 1800000000 + g ELSE NULL END FROM {series}", (rows,))
        cur.execute(f"INSERT INTO board_outcomes (originator_id, bounty_id, asset, amount, bucket, outcome) "
                    f"SELECT bounty_id, bounty_id, asset, amount, {bucket}, CASE WHEN state <> 'CANCELLED' THEN NULL "
                    f"WHEN CAST(bounty_id AS BIGINT) {pct} 97 = 0 THEN 'disputed' ELSE 'refunded' END "
                    f"FROM bounty_board")
        cur.execute("INSERT INTO board_sums (asset, bucket, bounties, amount) SELECT asset, bucket, COUNT(*), "
                    "SUM(amount) FROM board_outcomes GROUP BY asset, bucket")
    if views.postgres:  # the planner's statistics, as autovacuum would have them
        with views.statement() as cur:
            cur.execute("ANALYZE bounty_board")
            cur.execute("ANALYZE board_outcomes")


def synthetic(sizes: list[int], database_url: str | None, n: int) -> list[tuple[int, float, float]]:
    """(rows, p50, p99) of the board page over a synthetic board of each size, each in a fresh project (and schema)."""
    import tempfile
    import uuid
    from pathlib import Path

    from code3.settings import Settings
    from code3.wiring import build_services

    found = []
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            url, drop = database_url, None
            if database_url:
                import psycopg

                schema = "code3_web_board_" + uuid.uuid4().hex[:10]
                with psycopg.connect(database_url, autocommit=True) as conn:
                    conn.execute(f"CREATE SCHEMA {schema}")
                url = f"{database_url}?schema={schema}"
                drop = f"DROP SCHEMA {schema} CASCADE"
            services = build_services(Settings(project=Path(tmp), database_url=url))
            try:
                fill_board(services.views, size)
                found.append((size, *board_page_times(services, n)))
            finally:
                services.close()
                if drop and database_url:
                    import psycopg

                    with psycopg.connect(database_url, autocommit=True) as conn:
                        conn.execute(drop)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", nargs="?", help="a project directory (e.g. one seeded by benchmarks.seed_store)")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--synthetic", default=None, metavar="SIZES", help="e.g. 1000,100000")
    parser.add_argument("-n", type=int, default=200)
    args = parser.parse_args()
    if args.synthetic:
        rows = synthetic([int(x) for x in args.synthetic.split(",")], args.database_url, args.n)
        base = rows[0][1]
        for size, p50, p99 in rows:
            print(f"board page, synthetic board of {size} bounties ({'PostgreSQL' if args.database_url else 'SQLite'})"
                  f": p50 {p50:.1f} ms, p99 {p99:.1f} ms, p50 {p50 / base:.2f}x the smallest")
        return
    if not args.project:
        parser.error("give a PROJECT directory or --synthetic SIZES")
    from pathlib import Path

    from code3.settings import Settings
    from code3.wiring import build_services

    services = build_services(Settings(project=Path(args.project).resolve(), database_url=args.database_url))
    try:
        from projections.bounties.board import count

        rows = count(services.views)
        p50, p99 = board_page_times(services, args.n)
        print(f"board page over {rows} bounties: p50 {p50:.1f} ms, p99 {p99:.1f} ms ({args.n} loads)")
    finally:
        services.close()


if __name__ == "__main__":
    main()
