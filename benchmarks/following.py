"""What following the log costs a pure projector (issue 20): a catch-up that finds the board current (what every
board read pays before it reads), how long a page of 500 events holds the board's tracking-row lock, and three
threads with connections of their own catching up one backlog at once against one alone (on PostgreSQL the
threads of one process share its one views connection).

On SQLite, and on PostgreSQL when CODE3_TEST_POSTGRES names a server (a scratch schema, dropped afterwards).
Run: `.venv/bin/python -m benchmarks.following`.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from adapters.event_store import read_log
from adapters.sql import SqlDb, open_db
from benchmarks.projections import build_log
from benchmarks.report import Row
from projections.bounties.board import BountyBoard
from projections.runner import PAGE, _apply_page, follow
from projections.versions import ready

EVENTS = 7_000  # 1 000 whole bounty lifecycles


def _stores(root: Path, url: str | None) -> tuple[Any, SqlDb]:
    from adapters.event_store import open_store

    return open_store(root, url), open_db(root, url)


def _measure(root: Path, url: str | None, label: str) -> list[Row]:
    store, views = _stores(root, url)
    try:
        build_log(store, EVENTS)
        head = store.recorder.max_notification_id() or 0
        ready(views, BountyBoard)  # tables and tracking, nothing applied
        events = read_log(store, 1, PAGE)
        start = time.perf_counter()
        _apply_page(views, BountyBoard(), 0, events)  # the transaction that holds the lock, alone
        hold = time.perf_counter() - start
        alone = _timed(lambda: follow(store, views, BountyBoard()))
        current = []
        for _ in range(300):
            t = time.perf_counter()
            follow(store, views, BountyBoard())
            current.append(time.perf_counter() - t)
        with views.transaction() as cur:  # empty the board: three followers on one backlog
            for table in BountyBoard.tables:
                cur.execute(f"DELETE FROM {table}")
            cur.execute("UPDATE projection_tracking SET position = 0 WHERE name = ?", (BountyBoard.name,))
        others = [_stores(root, url) for _ in range(2)]
        try:
            followers = [(store, views), *others]
            threads = [threading.Thread(target=follow, args=(s, v, BountyBoard())) for s, v in followers]
            start = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            together = time.perf_counter() - start
        finally:
            for s, v in others:
                v.close()
                s.close()
        applied = int(views.query("SELECT position FROM projection_tracking WHERE name = ?", (BountyBoard.name,))[0][0])
        if applied != head:
            raise RuntimeError(f"{label}: followers stopped at {applied} of {head}")
    finally:
        views.close()
        store.close()
    current.sort()
    return [
        Row(f"following ({label}): board catch-up when current, p50", statistics.median(current) * 1000, "ms"),
        Row(f"following ({label}): board catch-up when current, p99", current[int(len(current) * 0.99)] * 1000,
            "ms"),
        Row(f"following ({label}): a {PAGE}-event page holds the board's row lock", hold * 1000, "ms"),
        Row(f"following ({label}): {head} events, one follower", alone, "s"),
        Row.against_baseline(f"following ({label}): {head} events, three threads following at once (vs one)", alone,
                             together, "s"),
    ]


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def rows() -> list[Row]:
    found: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        found += _measure(Path(tmp), None, "SQLite")
    url = os.environ.get("CODE3_TEST_POSTGRES")
    if url:
        import psycopg

        schema = "code3_bench_" + uuid.uuid4().hex[:10]
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        try:
            with tempfile.TemporaryDirectory() as tmp:
                found += _measure(Path(tmp), f"{url}?schema={schema}", "PostgreSQL")
        finally:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")
    return found


if __name__ == "__main__":
    from benchmarks.report import format_table

    print(format_table(rows()))
