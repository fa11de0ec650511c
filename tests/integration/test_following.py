"""One way to follow the log (issue 20): pure projectors caught up under their tracking row's lock by any process
(reads see their own writes while another process is mid-catch-up; concurrent catch-ups apply each event once),
projector versions that rebuild a read model by themselves, and the board's mode. On SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.domain import Aggregate, event

from adapters.sql import SqlDb, open_db
from adapters.tracking import ensure_tracking
from domain.errors import Code, Code3Error
from projections.bounties import board
from projections.bounties.board import BountyBoard
from projections.knowledge.annotations import AnnotationIndex
from projections.runner import Runner, dead_letters, follow
from tests.conftest import World
from tests.integration.test_modes import published

ROOT = Path(__file__).resolve().parents[2]
OPEN = """
import sys, time
from pathlib import Path
from adapters.event_store import open_store
from adapters.sql import open_db
from projections.runner import follow
store = open_store(Path(sys.argv[1]), sys.argv[2] or None)
views = open_db(Path(sys.argv[1]), sys.argv[2] or None)
"""
COUNTER = OPEN + """
from tests.integration.test_following import Counter
print("ready", flush=True)
sys.stdin.readline()  # every process starts at once
print(follow(store, views, Counter(delay=0.002), limit=7), flush=True)
"""
SLOW_BOARD = OPEN + """
from projections.bounties.board import BountyBoard
applying = BountyBoard.apply
def slow(self, event, cur):  # a worker's catch-up that holds its page's lock a long while
    time.sleep(0.03)
    applying(self, event, cur)
BountyBoard.apply = slow
print("ready", flush=True)
print(follow(store, views, BountyBoard(), limit=10), flush=True)
"""


class Ticker(Aggregate):
    """An aggregate of this test only: a log of as many events as a test asks for, cheaply."""

    @event("Started")
    def __init__(self) -> None:
        self.ticks = 0

    @event("Ticked")
    def tick(self) -> None:
        self.ticks += 1


class Counter:
    """A pure projector that writes one row per event it is handed: a second application shows as a repeat."""

    name = "test_counter"
    version = 1
    has_effects = False
    schema = "CREATE TABLE IF NOT EXISTS test_counted (originator TEXT NOT NULL, version BIGINT NOT NULL)"
    tables = ("test_counted",)

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay

    def effect(self, event: Any) -> None:
        return None

    def apply(self, event: Any, cur: Any) -> None:
        time.sleep(self.delay)
        cur.execute("INSERT INTO test_counted (originator, version) VALUES (?, ?)",
                    (str(event.originator_id), event.originator_version))


def ticks(w: World, count: int) -> None:
    ticker = Ticker()
    for _ in range(count - 1):
        ticker.tick()
    w["alice"].store.save(ticker)


def spawn(script: str, w: World) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", script, str(w.project), w.database_url or ""], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def started(child: subprocess.Popen[str]) -> subprocess.Popen[str]:
    assert child.stdout is not None and child.stdout.readline().strip() == "ready", child.communicate(timeout=30)
    return child


def start(script: str, w: World) -> subprocess.Popen[str]:
    return started(spawn(script, w))


def finish(child: subprocess.Popen[str]) -> int:
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    return int(out.strip().splitlines()[-1])


def test_three_processes_catching_up_at_once_apply_each_event_exactly_once(world: World) -> None:
    w = world
    ticks(w, 150)
    head = w["alice"].store.recorder.max_notification_id()
    children = [started(child) for child in [spawn(COUNTER, w) for _ in range(2)]]  # they start side by side
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    ours = follow(w["alice"].store, w["alice"].views, Counter(delay=0.002), limit=7)  # and this process too
    passed = [ours, *(finish(child) for child in children)]
    views = w["alice"].views
    [(rows, distinct)] = views.query("SELECT COUNT(*), COUNT(DISTINCT originator || ':' || version) FROM test_counted")
    assert rows == distinct == head == sum(passed), (rows, distinct, head, passed)
    assert views.query("SELECT position, version FROM projection_tracking WHERE name = 'test_counter'") == [(head, 1)]
    assert dead_letters(views) == []


def test_a_write_is_read_back_while_another_process_is_mid_catch_up(world: World) -> None:
    """A publish, then a read: the board has the new bounty although a worker-like process is applying pages
    (under the lease of old, this catch-up did nothing and the read missed the bounty)."""
    w = world
    first = published(w, "Users can export their to-do list as CSV")
    ticks(w, 100)  # the other process spends ~3 s on its pages
    alice = w["alice"]
    ensure_tracking(alice.views)
    child = start(SLOW_BOARD, w)
    try:
        deadline = time.monotonic() + 20
        while not alice.views.query("SELECT position FROM projection_tracking WHERE name = 'bounty_board'"):
            assert time.monotonic() < deadline, "the other process never started its catch-up"
            time.sleep(0.01)
        second = published(w, "Users can share a list by link", mode="contest")
        head = alice.store.recorder.max_notification_id()
        [(behind_at,)] = alice.views.query("SELECT position FROM projection_tracking WHERE name = 'bounty_board'")
        assert behind_at < head, "the other process was still catching up when we read"
        follow(alice.store, alice.views, BountyBoard())
        ids = {r["bounty_id"] for r in board.rows(alice.views)}
        assert {first["bounty"]["bounty_id"], second["bounty"]["bounty_id"]} <= ids
        assert alice.views.query("SELECT position FROM projection_tracking WHERE name = 'bounty_board'")[0][0] >= head
    finally:
        other = finish(child)
    total = alice.store.recorder.max_notification_id()
    fresh = SqlDb.sqlite(w.project / "rebuilt.sqlite")
    try:
        assert follow(alice.store, fresh, BountyBoard()) == total
        assert board.rows(fresh) == board.rows(alice.views), "each event applied once between the two processes"
    finally:
        fresh.close()
    assert other < total


def test_a_newer_board_version_rebuilds_the_board_by_itself(world: World) -> None:
    w = world
    exclusive = published(w, "Users can export their to-do list as CSV")
    contest = published(w, "Users can share a list by link", mode="contest")
    alice = w["alice"]
    follow(alice.store, alice.views, BountyBoard())
    live = board.rows(alice.views)
    head = alice.store.recorder.max_notification_id()
    with alice.views.transaction() as cur:  # the board as version 1 left it: no mode column, rows of its own
        cur.execute("DROP TABLE bounty_board")
        cur.execute("CREATE TABLE bounty_board (bounty_id TEXT PRIMARY KEY, repo TEXT NOT NULL, issue_hash TEXT "
                    "NOT NULL, task_id TEXT, amount BIGINT NOT NULL, asset TEXT NOT NULL, state TEXT NOT NULL, "
                    "workers TEXT NOT NULL, winner TEXT, cooling_until BIGINT, effort INTEGER NOT NULL DEFAULT 1, "
                    "sponsor TEXT NOT NULL, claimable INTEGER NOT NULL DEFAULT 0, deadline BIGINT)")
        cur.execute("INSERT INTO bounty_board VALUES ('999', 'x/y', 'h', NULL, 1, 'USDT', 'OPEN', '[]', NULL, NULL, "
                    "1, 's', 0, NULL)")
        cur.execute("UPDATE projection_tracking SET version = 1 WHERE name = 'bounty_board'")
    later = open_db(w.project, w.database_url)  # the next process, running this version (2 or later)
    try:
        assert follow(alice.store, later, BountyBoard()) == head, "rebuilt from the log's beginning"
        assert board.rows(later) == live
        modes = {r["bounty_id"]: r["mode"] for r in board.rows(later)}
        assert modes == {exclusive["bounty"]["bounty_id"]: "exclusive", contest["bounty"]["bounty_id"]: "contest"}
        assert later.query("SELECT position, version FROM projection_tracking WHERE name = 'bounty_board'") == [
            (head, BountyBoard.version)]
        assert follow(alice.store, later, BountyBoard()) == 0, "once"
    finally:
        later.close()


def test_tracking_from_before_versions_keeps_every_position_and_rebuilds_only_what_changed(world: World) -> None:
    w = world
    published(w, "Users can export their to-do list as CSV")
    alice = w["alice"]
    head = alice.store.recorder.max_notification_id()
    follow(alice.store, alice.views, AnnotationIndex(alice.store))
    follow(alice.store, alice.views, BountyBoard())
    with alice.views.transaction() as cur:  # the table as it was: no version column; the mirror mid-way
        cur.execute("ALTER TABLE projection_tracking DROP COLUMN version")
        cur.execute("INSERT INTO projection_tracking (name, position) VALUES ('forge_mirror', 3)")
    later = open_db(w.project, w.database_url)
    try:
        ensure_tracking(later)
        found = dict((n, (p, v)) for n, p, v in later.query("SELECT name, position, version FROM projection_tracking"))
        assert found == {"forge_mirror": (3, None), "loom_annotations": (head, None), "bounty_board": (head, None)}
        assert follow(alice.store, later, AnnotationIndex(alice.store)) == 0, "unchanged: adopted, not rebuilt"
        assert follow(alice.store, later, BountyBoard()) == head, "version 1 implied: rebuilt for this version"
        found = dict((n, (p, v)) for n, p, v in later.query("SELECT name, position, version FROM projection_tracking"))
        assert found == {"forge_mirror": (3, None), "loom_annotations": (head, 1),
                         "bounty_board": (head, BountyBoard.version)}
    finally:
        later.close()


def test_the_board_filters_by_mode_and_pages_counts_and_totals_in_sql(world: World) -> None:
    w = world
    big = published(w, "Users can export their to-do list as CSV", amount=3_000_000)
    small = published(w, "Users can share a list by link", amount=1_000_000, mode="contest")
    third = published(w, "Users can archive a list", amount=2_000_000, mode="contest")
    alice = w["alice"]
    follow(alice.store, alice.views, BountyBoard())
    views = alice.views
    ids = {name: b["bounty"]["bounty_id"] for name, b in (("big", big), ("small", small), ("third", third))}

    def of(rows: list[dict[str, Any]]) -> list[str]:
        return [r["bounty_id"] for r in rows]

    assert of(board.query(views, mode="exclusive")) == [ids["big"]]
    assert set(of(board.query(views, mode="contest"))) == {ids["small"], ids["third"]}
    assert board.count(views, mode="contest") == 2 and board.count(views) == 3
    assert board.count(views, states=("PAID",)) == 0 and board.query(views, mode="exclusive", states=("PAID",)) == []
    assert of(board.query(views, order="amount")) == [ids["big"], ids["third"], ids["small"]]
    assert of(board.query(views, order="amount", limit=1, offset=1)) == [ids["third"]]
    newest = of(board.query(views, order="newest"))
    assert newest == sorted(newest, key=int, reverse=True)
    assert of(board.query(views, mode="contest", order="amount", limit=1)) == [ids["third"]]
    assert board.totals(views) == {"USDT": {"escrowed": 6_000_000, "paid": 0, "refunded": 0}}
    for bad in ({"mode": "auction"}, {"order": "random"}, {"limit": -1}, {"order": "amount", "after": "1"}):
        with pytest.raises(Code3Error) as refused:
            board.query(views, **bad)
        assert refused.value.code is Code.VALIDATION
    with pytest.raises(Code3Error):
        board.count(views, mode="auction")


def test_the_worker_runner_follows_pure_projectors_without_a_lease(world: World) -> None:
    w = world
    published(w, "Users can export their to-do list as CSV")
    runner = Runner(w["alice"].store, w["alice"].views, owner="worker-1")
    assert runner.catch_up(BountyBoard()) > 0
    assert w["alice"].views.query("SELECT COUNT(*) FROM projection_leases")[0][0] == 0


def test_the_board_follows_withdrawals_and_an_exclusive_tasks_holder_as_the_chain_does(world: World) -> None:
    from domain.bounties.bounty import Bounty
    from mcp_tools.lifecycle import work

    w = world
    exclusive = published(w, "Users can export their to-do list as CSV")
    contest = published(w, "Users can share a list by link", mode="contest")
    work.accept_task(w["bob"], exclusive["task_id"])
    work.withdraw_task(w["bob"], exclusive["task_id"])
    work.accept_task(w["carol"], exclusive["task_id"])  # the new holder
    for who in ("bob", "carol"):
        work.accept_task(w[who], contest["task_id"])
    work.withdraw_task(w["carol"], contest["task_id"])
    alice = w["alice"]
    follow(alice.store, alice.views, BountyBoard())
    found = {}
    for answer in (exclusive, contest):
        bounty_id = answer["bounty"]["bounty_id"]
        [row] = board.rows(alice.views, "WHERE bounty_id = ?", (bounty_id,))
        live = alice.store.get(Bounty, Bounty.create_id(bounty_id))
        assert (row["state"], row["workers"]) == (live.status.name, live.workers)
        found[answer is exclusive] = row["workers"]
    assert found == {True: [w.address("carol")], False: [w.address("bob")]}


class SlowBoard(BountyBoard):
    """The board, applied slowly: a catch-up that holds each page's lock a long while."""

    def apply(self, event: Any, cur: Any) -> None:
        time.sleep(0.02)
        super().apply(event, cur)


def test_a_write_is_read_back_while_another_thread_is_mid_catch_up(world: World) -> None:
    """The writes come first here: on SQLite a slow catch-up's page locks hold event writers off too (one file)."""
    import threading

    w = world
    first = published(w, "Users can export their to-do list as CSV")
    ticks(w, 100)
    second = published(w, "Users can share a list by link", mode="contest")
    alice = w["alice"]
    head = alice.store.recorder.max_notification_id()
    ensure_tracking(alice.views)
    other = open_db(w.project, w.database_url)  # the other thread's own connection (PostgreSQL: the process's pool)
    passed: list[int] = []
    thread = threading.Thread(target=lambda: passed.append(follow(alice.store, other, SlowBoard(), limit=10)))
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not alice.views.query("SELECT position FROM projection_tracking WHERE name = 'bounty_board' "
                                    "AND position > 0"):
            assert time.monotonic() < deadline, "the other thread never applied a page"
            time.sleep(0.01)
        assert thread.is_alive(), "the other thread is mid-catch-up"
        follow(alice.store, alice.views, BountyBoard())
        ids = {r["bounty_id"] for r in board.rows(alice.views)}
        assert {first["bounty"]["bounty_id"], second["bounty"]["bounty_id"]} <= ids
        assert alice.views.query("SELECT position FROM projection_tracking WHERE name = 'bounty_board'") == [(head,)]
    finally:
        thread.join(timeout=60)
        other.close()
    fresh = SqlDb.sqlite(w.project / "rebuilt.sqlite")
    try:
        assert follow(alice.store, fresh, BountyBoard()) == head
        assert board.rows(fresh) == board.rows(alice.views), "each event applied once between the two threads"
    finally:
        fresh.close()
    assert 0 < passed[0] <= head  # on SQLite the slow thread may win every page: the read still waited for it
