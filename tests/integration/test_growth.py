"""Work proportional to what is due, not to the store (issue 20): the forge's issue lookup is an index search,
board filters and pages are the database's, and a worker's tick and start load no finished bounty."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from adapters.event_store import EventStore
from adapters.local_forge import FIND_BY_HASH, LocalForge
from adapters.local_ledger import LocalLedger
from benchmarks.seed_store import REPO, World, open_world, seed
from code3 import wiring
from code3.settings import Settings
from domain.canonical import sha256_hex
from projections.bounties import board
from scheduler.worker import run_worker


@pytest.fixture
def forge(tmp_path: Path) -> LocalForge:
    forge = LocalForge(tmp_path / "forge", "alice")
    forge.create_repo("alice/app")
    yield forge
    forge.close()


def test_the_forge_finds_an_issue_by_its_hash_through_the_index(forge: LocalForge) -> None:
    key, other = sha256_hex("one"), sha256_hex("two")
    for n in range(30):
        forge.create_issue("alice/app", f"filler {n}", f"spec {n}\n```code3-meta\n{sha256_hex(str(n))}\n```", [], [])
    created = forge.create_issue("alice/app", "t", f"spec\n\n```code3-meta\n{{\"issue_hash\": \"{key}\"}}\n```", [], [])
    assert forge.find_issue("alice/app", key).number == created.number
    assert forge.find_issue("alice/app", other) is None
    forge.create_repo("alice/other")
    assert forge.find_issue("alice/other", key) is None
    with forge.db.statement() as db:
        plan = " ".join(str(row[-1]) for row in db.execute(f"EXPLAIN QUERY PLAN {FIND_BY_HASH}", ("alice/app", key)))
    assert "SEARCH issue_markers USING" in plan and "INDEX" in plan and "SCAN" not in plan, plan

    forge.update_issue_body("alice/app", created.number, f"edited\n{other}")  # the index follows the body
    assert forge.find_issue("alice/app", key) is None
    assert forge.find_issue("alice/app", other).number == created.number


def test_a_forge_written_before_the_index_is_indexed_when_opened(tmp_path: Path) -> None:
    forge = LocalForge(tmp_path / "forge", "alice")
    forge.create_repo("alice/app")
    key = sha256_hex("old")
    created = forge.create_issue("alice/app", "t", f"body {key}", [], [])
    with forge.db.statement() as db:
        db.execute("DELETE FROM issue_markers")
    forge.close()
    reopened = LocalForge(tmp_path / "forge", "alice")
    try:
        assert reopened.find_issue("alice/app", key).number == created.number
    finally:
        reopened.close()


@pytest.fixture
def seeded(tmp_path: Path, database_url: str | None) -> World:
    world = open_world(tmp_path / "project", tmp_path / "home", database_url)
    seed(world, 60)
    yield world
    world.close()


def test_board_filters_and_pages_return_the_rows_a_full_read_filtered_by_hand_gives(seeded: World) -> None:
    views = seeded.sponsor.views
    every = board.rows(views)
    assert len(every) == 60 and len(Counter(r["state"] for r in every)) == 6
    ids = [r["bounty_id"] for r in every]

    def ids_of(found: list[dict[str, Any]]) -> list[str]:
        return [r["bounty_id"] for r in found]

    live = [r for r in every if r["state"] in board.LIVE]
    assert ids_of(board.query(views, board.LIVE)) == ids_of(live)
    assert ids_of(board.query(views, ("PAID",), repo=REPO, asset="USDT")) == ids_of(
        [r for r in every if r["state"] == "PAID"])
    assert board.query(views, repo="alice/none") == [] and board.query(views, asset="APT") == []
    big = sorted(r["amount"] for r in every)[45]
    assert ids_of(board.query(views, min_amount=big)) == ids_of([r for r in every if r["amount"] >= big])
    assert board.query(views, min_amount=2**64) == []
    # pages: by offset and after a bounty id, in the board's order, none lost or repeated
    assert [x for k in range(0, 60, 7) for x in ids_of(board.query(views, limit=7, offset=k))] == ids
    assert ids_of(board.query(views, limit=5, after=ids[9])) == ids[10:15]
    assert ids_of(board.query(views, board.LIVE, limit=4, offset=2)) == ids_of(live)[2:6]


def test_best_open_ranks_as_accept_best_task_did_by_hand(seeded: World) -> None:
    views, me = seeded.sponsor.views, seeded.worker.signer.address
    candidates = [r for r in board.rows(views) if r["state"] in ("OPEN", "STARTED") and r["task_id"]]
    by_amount = sorted(candidates, key=lambda r: (-r["amount"], int(r["bounty_id"])))
    by_effort = sorted(candidates, key=lambda r: (-r["amount"] / max(r["effort"], 1), int(r["bounty_id"])))
    assert [r["bounty_id"] for r in board.best_open(views, 0, me, False, 100)] == [r["bounty_id"] for r in by_amount]
    assert [r["bounty_id"] for r in board.best_open(views, 0, me, True, 100)] == [r["bounty_id"] for r in by_effort]
    assert [r["bounty_id"] for r in board.best_open(views, 0, me, False, 3, 3)] == [
        r["bounty_id"] for r in by_amount[3:6]]
    floor = by_amount[2]["amount"]
    assert [r["bounty_id"] for r in board.best_open(views, floor, me, True, 100)] == [
        r["bounty_id"] for r in by_effort if r["amount"] >= floor]
    assert board.best_open(views, 2**64, me, False, 100) == []
    assert board.best_open(views, 0, seeded.sponsor.signer.address, False, 100) == []  # never one's own bounty


class Loads:
    """Counts aggregate loads from the event store and bounty reads from the ledger (a spy on the classes)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count: Counter[str] = Counter()
        for cls, name in ((EventStore, "get"), (LocalLedger, "bounty_events"), (LocalLedger, "get_bounty"),
                          (LocalLedger, "list_bounties")):
            monkeypatch.setattr(cls, name, self._spy(getattr(cls, name), f"{cls.__name__}.{name}"))

    def _spy(self, method: Any, label: str) -> Any:
        def spied(*args: Any, **kwargs: Any) -> Any:
            self.count[label] += 1
            return method(*args, **kwargs)

        return spied


def test_a_worker_start_and_tick_load_none_of_many_finished_bounties(tmp_path: Path, database_url: str | None,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    world = open_world(tmp_path / "project", tmp_path / "home", database_url)
    try:
        assert seed(world, 80, states=("paid", "cancelled")) == {"paid": 40, "cancelled": 40}
    finally:
        world.close()
    settings = Settings(project=tmp_path / "project", home=tmp_path / "home", identity="alice", resolver="alice",
                        database_url=database_url)
    loads = Loads(monkeypatch)
    assert run_worker(wiring.worker(settings), once=True) == 0  # a start: built, then its first round
    assert loads.count["EventStore.get"] == 0 and loads.count["LocalLedger.list_bounties"] == 0, loads.count
    assert loads.count["LocalLedger.bounty_events"] == 0 and loads.count["LocalLedger.get_bounty"] == 0, loads.count

    worker = wiring.worker(settings)
    try:
        done = worker.tick()
        assert done["payouts"] == 0 and done["expired"] == 0 and done["reconciled"] == 0
        assert sum(loads.count.values()) == 0, loads.count
        # the spy sees loads: a live bounty is compared with the chain on the rolling pass
        seed(world := open_world(tmp_path / "project", tmp_path / "home", database_url), 1, states=("open",))
        world.close()
        assert all(worker.tick()["reconciled"] == 0 for _ in board.LIVE), "nothing disagrees"  # a whole rotation
        # the spy sees the chain read; a bounty that agrees with its board row loads no aggregate
        assert loads.count["LocalLedger.get_bounty"] >= 1 and loads.count["EventStore.get"] == 0, loads.count
    finally:
        worker.close()


def test_the_github_lookup_costs_two_requests_whatever_the_repository_holds(tmp_path: Path) -> None:
    from adapters.github import GitHubForge
    from domain.errors import Code, Code3Error
    from tests.fakes.github_server import FakeGitHub, Item

    token = "ghp_alice0123456789abcdefALICEtoken"
    with FakeGitHub(tmp_path / "github", tokens={token: "alice"}) as fake:
        fake.create_repo("alice/app")
        day_ago = time.time() - 86400
        for n in range(1, 251):  # old issues: outside the recent window, found by the search index only
            fake.state.items["alice/app"][n] = Item(10_000 + n, n, f"t{n}", f"spec {n}\n{sha256_hex(str(n))}",
                                                    ["code3"], "alice", day_ago + n, day_ago + n)
        fake.state.items["alice/app"][251] = Item(20_000, 251, "spam", f"copy of {sha256_hex('7')}", [], "mallory",
                                                  day_ago - 1, day_ago - 1)
        forge = GitHubForge(token, base_url=fake.api_url, actor="alice")
        try:
            fake.requests.clear()
            assert forge.find_issue("alice/app", sha256_hex("200")).number == 200
            assert forge.find_issue("alice/app", sha256_hex("7")).number == 7  # not mallory's unlabelled copy
            assert forge.find_issue("alice/app", sha256_hex("none")) is None
            assert len(fake.api_requests()) == 6, fake.api_requests()  # the recent listing and a search, each
            assert {path.split("?")[0] for _, path, _ in fake.api_requests()} == {
                "/api/v3/repos/alice/app/issues", "/api/v3/search/issues"}

            fake.search_lag = 60.0  # the index has not seen an issue created a moment ago; the recent listing has
            created = forge.create_issue("alice/app", "new", f"fresh {sha256_hex('new')}", ["code3"], [])
            assert forge.find_issue("alice/app", sha256_hex("new")).number == created.number
            with pytest.raises(Code3Error) as caught:
                forge.find_issue("alice/missing", sha256_hex("new"))
            assert caught.value.code == Code.NOT_FOUND
        finally:
            forge.close()


def test_the_rolling_pass_reaches_every_live_bounty_and_corrects_a_disagreement(tmp_path: Path) -> None:
    from domain.bounties.bounty import Bounty
    from domain.bounties.contract import Status

    world = open_world(tmp_path / "project", tmp_path / "home")
    try:
        seed(world, 12, states=("paid", "open", "started", "cancelled"))
        live = [r["bounty_id"] for r in board.query(world.sponsor.views, board.LIVE)]
        assert len(live) == 6
        target = board.query(world.sponsor.views, ("OPEN",))[-1]["bounty_id"]
        store = world.sponsor.store
        bounty = store.get(Bounty, Bounty.create_id(target))
        bounty._accepted(worker="0xforged", coords={"tx_hash": "0xnone", "version": 10**9, "index": 0})
        store.save(bounty)
    finally:
        world.close()
    settings = Settings(project=tmp_path / "project", home=tmp_path / "home", identity="alice", resolver="alice")
    worker = wiring.worker(settings)
    worker.reconcile_page = 2
    try:
        corrected = sum(worker.tick()["reconciled"] for _ in range(2 * len(board.LIVE) + 2))
        fixed = worker.s.store.get(Bounty, Bounty.create_id(target))
        assert corrected == 1 and fixed.workers == [] and fixed.status is Status.OPEN
    finally:
        worker.close()


def exclusive_bounties(world: World, txs: Any, name: str, n: int) -> list[str]:
    """`n` exclusive bounties created by the sponsor's signed transactions straight on the ledger (no handler of
    this store saw them): their ids."""
    from domain.bounties.contract import DEFAULT_DEADLINE
    from domain.bounties.contract_args import mode_arg, u64_arg

    ledger, alice = world.ledger, world.sponsor.signer
    ledger.mint(alice.address, "USDT", 10**9)
    for k in range(n):
        txs.add(alice, "create_bounty", {
            "repo": REPO, "issue_hash": sha256_hex(f"{name} {k}"), "asset": "USDT", "amount": u64_arg("a", 1000),
            "deadline": u64_arg("d", ledger.now() + DEFAULT_DEADLINE), "mode": mode_arg("exclusive"),
            "hold_seconds": u64_arg("h", 3600)})
    return [str(r.events[0].data["bounty_id"]) for r in txs.run()]


def test_the_boards_mirror_of_a_bounty_is_the_aggregates_and_the_chains_through_holds_and_withdrawals(
        tmp_path: Path, database_url: str | None) -> None:
    """The worker's rolling pass takes the board's row as the mirror's side (`board.mirror_rows`): it must be
    what the aggregate says (`Bounty.comparable`) and, when nothing is missing, what the chain says."""
    from benchmarks.seed_store import Transactions
    from domain.bounties.bounty import Bounty
    from mcp_tools.lifecycle.chain_sync import sync_new_events
    from projections.runner import follow

    world = open_world(tmp_path / "project", tmp_path / "home", database_url)
    try:
        seed(world, 12)  # contests in every state
        ledger, bob = world.ledger, world.worker.signer
        txs = Transactions(ledger)
        held = exclusive_bounties(world, txs, "hold", 4)
        txs.add(bob, "accept_bounty", {"bounty_id": held[0]})  # held
        txs.add(bob, "accept_bounty", {"bounty_id": held[1]})  # held, then given back
        txs.add(bob, "withdraw_task", {"bounty_id": held[1]})
        txs.add(bob, "accept_bounty", {"bounty_id": held[2]})  # held with a PR
        txs.add(bob, "submit_pr", {"bounty_id": held[2], "pr_url": f"{world.forge.base_url}/{REPO}/pull/7",
                                   "commit_sha": "a" * 40})
        txs.run()
        s = world.sponsor
        sync_new_events(s, s.views)
        follow(s.store, s.views, board.BountyBoard())
        mirrored = {bounty_id: mirror for state in board.LIVE for bounty_id, mirror in board.mirror_rows(
            s.views, state, limit=100)}
        assert set(mirrored) == {r["bounty_id"] for r in board.rows(s.views) if r["state"] in board.LIVE}
        assert set(held) <= set(mirrored) and len(mirrored) > len(held)
        assert mirrored[held[0]]["holder"] == bob.address and mirrored[held[0]]["hold_until"]
        assert mirrored[held[1]]["holder"] is None and mirrored[held[1]]["entrants"] == 0
        for bounty_id, mirror in mirrored.items():
            assert mirror == s.store.get(Bounty, Bounty.create_id(bounty_id)).comparable(), bounty_id
            assert mirror == s.chain.get_bounty(bounty_id).comparable(), bounty_id
        assert board.submitted_prs(s.views, [held[2], held[0]]) == {held[2]: [f"{world.forge.base_url}/{REPO}/pull/7"]}
        page = board.mirror_rows(s.views, "OPEN", limit=1)
        assert [b for b, _ in board.mirror_rows(s.views, "OPEN", limit=1, after=page[0][0])] == [
            b for b in sorted(b for b, m in mirrored.items() if m["status"] == 0) if b > page[0][0]][:1]
    finally:
        world.close()


def test_chain_sync_catches_up_a_backlog_of_many_pages_in_one_run_and_is_one_read_when_idle(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from adapters.tracking import NamedCursor
    from benchmarks.seed_store import Transactions
    from domain.bounties.bounty import Bounty
    from domain.bounties.contract import Status
    from mcp_tools.lifecycle.chain_sync import CURSOR, PAGE, sync_new_events

    world = open_world(tmp_path / "project", tmp_path / "home")
    try:
        ledger, bob = world.ledger, world.worker.signer
        txs = Transactions(ledger)  # a wallet elsewhere: signed transactions no handler of this store saw
        ids = exclusive_bounties(world, txs, "backlog", 40)
        for _ in range(20):
            for bounty_id in ids:
                txs.add(bob, "accept_bounty", {"bounty_id": bounty_id})
                txs.add(bob, "withdraw_task", {"bounty_id": bounty_id})
            txs.run()
        txs.add(bob, "accept_bounty", {"bounty_id": ids[0]})
        txs.run()
        backlog = len(ledger.events_since(0, -1))
        assert backlog == 40 + 40 * 40 + 1 > 3 * PAGE

        s = world.sponsor
        reads = Loads(monkeypatch)
        monkeypatch.setattr(LocalLedger, "events_since", reads._spy(LocalLedger.events_since, "events_since"))
        assert sync_new_events(s, s.views) == backlog  # one run, page after page
        assert reads.count["events_since"] == -(-backlog // PAGE)  # no page read twice, none left
        assert NamedCursor(s.views, CURSOR).get() == ledger.latest_version()
        first = s.store.get(Bounty, Bounty.create_id(ids[0]))
        assert first.status is Status.STARTED and first.workers == [bob.address]
        assert s.store.get(Bounty, Bounty.create_id(ids[-1])).status is Status.OPEN

        reads.count.clear()
        assert sync_new_events(s, s.views) == 0 and reads.count["events_since"] == 1  # idle: one read
    finally:
        world.close()


def test_completions_read_the_board_by_prefix_a_page_at_a_time_as_a_full_read_filtered_by_hand(
        seeded: World) -> None:
    from mcp_tools import completions
    from projections.bounties.board_prefix import starting_with

    s, every = seeded.sponsor, board.rows(seeded.sponsor.views)
    for column, typed in (("bounty_id", ""), ("bounty_id", "1"), ("bounty_id", "5"), ("bounty_id", "x"),
                          ("task_id", "ALICE/GROWTH#1"), ("task_id", "alice/growth#"), ("repo", "Alice/g"),
                          ("repo", ""), ("repo", "alice/growthx")):
        wanted = sorted({str(r[column]) for r in every if r[column] and str(r[column]).lower().startswith(
            typed.lower())}, key=str.lower)
        assert starting_with(s.views, column, typed, 100) == wanted, (column, typed)
        assert starting_with(s.views, column, typed, 3) == wanted[:3], (column, typed)
    assert starting_with(s.views, "repo", "", 100) == [REPO]  # one per repository, however many rows
    assert list(completions.bounty_ids(s, "", {})) == sorted((r["bounty_id"] for r in every), key=str.lower)
    assert len(list(completions.task_ids(s, "", {}))) == 60
    if not s.views.postgres:
        from projections.bounties.board_prefix import _key

        with s.views.statement() as db:
            plan = " ".join(str(row[-1]) for row in db.execute(
                f"EXPLAIN QUERY PLAN SELECT task_id FROM bounty_board WHERE {_key('task_id', False)} >= 'a' "
                f"AND {_key('task_id', False)} < 'b' ORDER BY {_key('task_id', False)} LIMIT 5"))
        assert "USING INDEX bounty_board_prefix_task_id" in plan and "TEMP B-TREE" not in plan, plan


def test_audit_verify_goes_by_pages_reports_progress_and_names_the_first_board_row_that_differs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_tools.lifecycle import audit
    from projections import replay

    monkeypatch.setattr(audit, "PAGE", 25)  # pages smaller than the store: every phase crosses pages
    monkeypatch.setattr(replay, "replay_aggregates", None)  # the whole-log replay is not what verify uses
    whole = board.rows
    monkeypatch.setattr(board, "rows", lambda views, *a, **k: whole(views, *a, **k) if k.get("limit") or (
        len(a) > 3 and a[3]) else pytest.fail("a board read without a limit"))
    seeded = open_world(tmp_path / "project", tmp_path / "home")  # SQLite: the pages' SQL is tested on both above
    seed(seeded, 60)
    s = seeded.sponsor
    seen: list[tuple[str, int, int | None]] = []
    verdict = audit.verify(s, lambda phase, done, total: seen.append((phase, done, total)))
    assert verdict.ok, verdict.problems
    assert verdict.board_rows == 60 and verdict.bounties_checked == 60
    assert verdict.events == s.store.recorder.max_notification_id()
    phases = list(dict.fromkeys(p for p, _, _ in seen))
    assert phases == ["replay", "board rebuild", "board compare", "forge issues"]
    for phase in phases:
        last = [(done, total) for p, done, total in seen if p == phase][-1]
        assert last[0] == last[1], (phase, last)

    target = board.query(s.views, limit=1, offset=33)[0]["bounty_id"]
    with s.views.transaction() as cur:
        cur.execute("UPDATE bounty_board SET amount = amount + 1 WHERE bounty_id = ?", (target,))
    problems = audit.verify(s).problems
    seeded.close()
    assert problems == [f"bounty board differs from its rebuild (60 live, 60 rebuilt; first at bounty {target})"]


def test_audit_verify_on_the_command_line_prints_plain_progress_on_stderr_and_its_answer_on_stdout(
        tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    world = open_world(tmp_path / "project", tmp_path / "home")
    try:
        seed(world, 20)
    finally:
        world.close()
    run = subprocess.run([sys.executable, "-m", "code3", "audit", "verify", "--project", str(tmp_path / "project"),
                          "--identity", "alice"], capture_output=True, text=True,
                         env={**__import__("os").environ, "CODE3_HOME": str(tmp_path / "home")}, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    answer = json.loads(run.stdout)
    assert answer["ok"] and answer["board_rows"] == 20 and answer["events"] > 20
    lines = [line for line in run.stderr.splitlines() if line.startswith("audit verify: ")]
    assert [line.split()[2] for line in lines if " done " in line] == ["replay", "board", "board", "forge"], lines


def test_a_long_history_is_loaded_from_its_snapshot_and_equals_its_replay(tmp_path: Path,
                                                                         database_url: str | None) -> None:
    from adapters.event_store import SNAPSHOT_EVERY, open_store
    from benchmarks.snapshots import BUILDERS
    from projections.replay import replay_one, state_of

    (tmp_path / "p").mkdir()
    for kind, build in BUILDERS.items():
        aggregate = build(2 * SNAPSHOT_EVERY + 5)
        store = open_store(tmp_path / "p", database_url)
        try:
            store.save(aggregate)
        finally:
            store.close()
        cold = open_store(tmp_path / "p", database_url)  # nothing cached
        try:
            assert [s.originator_version for s in cold.snapshots.get(aggregate.id)] == [
                SNAPSHOT_EVERY, 2 * SNAPSHOT_EVERY], kind
            loaded = cold.repository.get(aggregate.id)
            replayed, count = replay_one(cold, aggregate.id)
            assert count == 2 * SNAPSHOT_EVERY + 5 and loaded.version == count, kind
            assert state_of(loaded) == state_of(replayed), kind
        finally:
            cold.close()


def test_the_worker_looks_for_merges_of_every_submitted_bounty_a_page_a_round(tmp_path: Path) -> None:
    from mcp_tools.lifecycle.merge_watch import MergeWatch

    world = open_world(tmp_path / "project", tmp_path / "home")
    try:
        seed(world, 12, states=("submitted",))
        s = world.sponsor
        asked: list[str] = []
        forge = s.forge

        class Spy:
            def get_pr(self, url: str) -> Any:
                asked.append(url)
                return forge.get_pr(url)

            def __getattr__(self, name: str) -> Any:
                return getattr(forge, name)

        from tests.integration.test_lifecycle import crashing

        spied, watch = crashing(s, forge=Spy()), MergeWatch(limit=5)
        rounds = [(watch.look(spied), len(asked)) for _ in range(3)]
        assert [n for _, n in rounds] == [5, 10, 12] and all(r == [] for r, _ in rounds)
        assert len(set(asked)) == 12, "every submitted bounty's PR was looked up once in a pass"
        watch.look(spied)
        assert asked[12:] == asked[:5], "the next pass starts again at the first page"
    finally:
        world.close()


def test_the_payout_schedule_reads_only_what_falls_due_soon(tmp_path: Path) -> None:
    from scheduler.payouts import SCHEDULE_HORIZON_S, Payouts

    world = open_world(tmp_path / "project", tmp_path / "home")
    try:
        seed(world, 12, states=("cooling", "paid"))  # 6 cooling for the next 7 days
        payouts = Payouts(world.sponsor, lambda _address: None)
        assert payouts.pending() == []  # nothing ends within the horizon: no job, no row read beyond the index range
        week = world.ledger.cooling_period
        assert len(payouts.pending(horizon=week + 10)) == 6
        world.ledger.advance(week - int(SCHEDULE_HORIZON_S) // 2)
        soon = payouts.pending()
        assert len(soon) == 6 and all(0 < delay <= SCHEDULE_HORIZON_S for _, delay in soon)
    finally:
        world.close()
