"""Seed a project's store with N bounties in mixed states, in bulk, for the growth benchmark.

What lands is what the lifecycle handlers write, only batched:
- the embedded ledger: the same signed transactions (create, accept, submit, merge, claim, cancel), executed
  a few hundred to one database transaction instead of one each, so the ledger's events, escrow and balances
  are real;
- the embedded forge: one issue per bounty whose body carries the spec text and its `code3/v1` metadata block,
  labelled with the bounty's state;
- the event store (SQLite, or PostgreSQL with CODE3_DATABASE_URL, schema included): per bounty the Issue
  (PublishRequested, OpeningClaimed, Opened, BountyLinked, MetadataWritten, LabelsMirrored), the Bounty folded
  from its chain events by the aggregate's own rules, and the publish/task lookups, saved through the event
  store a batch at a time;
- the views: the board caught up by its projector; the chain cursor and the forge mirror marked as caught up
  (a seeded store stands for one a worker has been running on: its comments are not posted again).

Departures, said here so nobody mistakes a seeded store for a real one: pull requests are recorded on the forge
without git (no branch or commit behind them), an Issue records its labels once
(the handlers record them at each transition), and no Spec aggregate or spec file is written.

    .venv/bin/python -m benchmarks.seed_store PROJECT_DIR 10000 [--database-url URL]

States (of every 20 bounties): 2 open, 1 started, 1 PR submitted, 1 cooling (due in 7 days), 7 paid, 8 cancelled.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from adapters.keystore import Keystore, public_key_of, sign
from adapters.local_forge import LocalForge
from adapters.local_ledger import SIGNING_PREFIX, LocalLedger
from adapters.ports import Signer
from adapters.tracking import PROCESS_OWNER, NamedCursor, track
from code3.settings import Settings
from code3.wiring import build_services, record_resolver
from domain.bounties.bounty import Bounty
from domain.bounties.chain_events import ChainEvent
from domain.bounties.contract import DEFAULT_DEADLINE, Status
from domain.bounties.contract_args import mode_arg, u64_arg
from domain.bounties.index import Index
from domain.bounties.issue import Issue
from domain.bounties.links import link_message
from domain.canonical import canonical_json, sha256_hex
from domain.canonical import issue_hash as compute_issue_hash
from mcp_tools.lifecycle.chain_sync import CURSOR
from mcp_tools.lifecycle.publish import metadata_of
from mcp_tools.lifecycle.publish_terms import chain_name
from mcp_tools.services import Services
from projections.bounties.board import BountyBoard
from projections.runner import follow

REPO = "alice/growth"
SPONSOR, WORKER = "alice", "bob"
AMOUNT = 1_000_000
# the state of bounty i is PLAN[i % 20]
PLAN = ("open", "open", "started", "submitted", "cooling", *("paid",) * 7, *("cancelled",) * 8)
BATCH = 250


@dataclass
class World:
    """The services of the sponsor (also the contract's resolver) and of one worker, on one project."""

    sponsor: Services
    worker: Services

    @property
    def ledger(self) -> LocalLedger:
        return self.sponsor.chain  # type: ignore[return-value]

    @property
    def forge(self) -> LocalForge:
        return self.sponsor.forge  # type: ignore[return-value]

    def close(self) -> None:
        self.sponsor.close()
        self.worker.close()


def open_world(project: Path, home: Path, database_url: str | None = None) -> World:
    """Keys for alice and bob (created once), the ledger with alice as resolver, the forge repository."""
    project.mkdir(parents=True, exist_ok=True)
    keys = Keystore(Settings(project=project, home=home).keystore_dir)
    for name in (SPONSOR, WORKER):
        if name not in keys.names():
            keys.new(name)

    def settings(name: str) -> Settings:
        return Settings(project=project, home=home, identity=name, resolver=SPONSOR, database_url=database_url)

    world = World(build_services(settings(SPONSOR)), build_services(settings(WORKER)))
    record_resolver(settings(SPONSOR))
    world.forge.create_repo(REPO)
    return world


class Transactions:
    """Signed ledger transactions, executed many to one database transaction (the node's `execute` path)."""

    def __init__(self, ledger: LocalLedger) -> None:
        self.ledger = ledger
        self.sequence: dict[str, int] = {}
        self.pending: list[tuple[dict[str, Any], str, bytes]] = []

    def add(self, signer: Signer, function: str, args: dict[str, Any]) -> None:
        address = signer.address
        if address not in self.sequence:
            self.sequence[address] = self.ledger.sequence_number(address)
        tx = {"sender": address, "sequence_number": self.sequence[address],
              "function": f"code3::bounty::{function}", "args": args}
        raw = canonical_json(tx).encode()
        signature = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(signer.private_key_hex)).sign(
            SIGNING_PREFIX + raw)
        self.pending.append((tx, "0x" + hashlib.sha3_256(raw + signature).hexdigest(),
                             public_key_of(signer.private_key_hex)))
        self.sequence[address] += 1

    def run(self) -> list[Any]:
        with self.ledger.db.transaction() as db:
            receipts = [self.ledger._execute(db, tx, tx_hash, public) for tx, tx_hash, public in self.pending]
        self.pending = []
        for receipt in receipts:
            if not receipt.success:
                raise RuntimeError(f"seed transaction failed: {receipt.vm_status}")
        return receipts


def _batches(items: list[Any], size: int = BATCH) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _pr_url(world: World, i: int) -> str:
    return f"{world.forge.base_url}/{REPO}/pull/{100_000_000 + i}"


def seed(world: World, n: int, progress: bool = False, states: tuple[str, ...] = PLAN) -> dict[str, int]:
    """Add `n` bounties to the world's stores (a store seeded before keeps its bounties): the count per state.
    `states`: bounty i gets states[i % len(states)] (open, started, submitted, cooling, paid, cancelled)."""
    sponsor, worker, ledger = world.sponsor.signer, world.worker.signer, world.ledger
    start = len(ledger.list_bounties())
    ledger.mint(sponsor.address, "USDT", AMOUNT * n + n * (n + 1) // 2 + start)
    network = ledger.network
    plan = [(start + k, states[(start + k) % len(states)]) for k in range(n)]
    issues: dict[int, Issue] = {}
    bounty_of: dict[int, str] = {}
    now = ledger.now()
    repo_id, author_id = world.forge.get_repo(REPO).id, world.forge.user_id(WORKER)
    link = Transactions(ledger)  # the worker's forge account linked to its address, as the resolver records it
    link.add(sponsor, "link_account", {
        "forge_user_id": author_id, "login": WORKER, "account": worker.address,
        "public_key": public_key_of(worker.private_key_hex).hex(),
        "signature": sign(worker, link_message(author_id, worker.address)).hex()})
    link.run()
    # the worker's PRs, as the forge records them (merged for the bounties that are paid or cooling)
    world.forge.create_prs(REPO, [(100_000_000 + i, f"{WORKER}/growth:feat/{i}", WORKER, f"{i:040x}",
                                   state in ("paid", "cooling")) for i, state in plan
                                  if state in ("submitted", "paid", "cooling")])

    # the sponsor publishes: forge issues and bounties
    for batch in _batches(plan):
        txs = Transactions(ledger)
        drafts = []
        for i, _state in batch:
            feature_id = f"{i % 1000:03d}-growth{i}"
            spec = f"# Growth {i}\n\nA seeded bounty.\n"
            amount = str(AMOUNT + i)
            key = compute_issue_hash(repo=REPO, feature_id=feature_id, spec_digest=sha256_hex(spec),
                                     amount=amount, asset="USDT", network=network)
            issue = Issue(issue_hash=key, repo=REPO, feature_id=feature_id, spec_path=f"specs/{feature_id}/spec.md",
                          spec_digest=sha256_hex(spec), amount=AMOUNT + i, asset="USDT", network=network,
                          labels=["code3", "open"], assignees=[], effort=1 + i % 5, deadline=None)
            issue.claim_opening(owner=PROCESS_OWNER, until=time.time() + 30)
            issues[i] = issue
            drafts.append((i, spec))
            txs.add(sponsor, "create_bounty", {
                "repo": REPO, "issue_hash": key, "asset": "USDT", "amount": u64_arg("amount", AMOUNT + i),
                "deadline": u64_arg("deadline", now + DEFAULT_DEADLINE), "mode": mode_arg("contest"),
                "hold_seconds": u64_arg("hold_seconds", 0), "repo_id": repo_id})
        for (i, _), receipt in zip(batch, txs.run(), strict=True):
            bounty_of[i] = str(receipt.events[0].data["bounty_id"])
        numbers = world.forge.create_issues(REPO, [
            (f"[code3] {issues[i].feature_id}: Growth {i}", spec, ["code3", "open"]) for i, spec in drafts])
        for (i, spec), number in zip(drafts, numbers, strict=True):
            issue = issues[i]
            issue.open(number=number, url=f"{world.forge.base_url}/{REPO}/issues/{number}", task_id=f"{REPO}#{number}")
            issue.link_bounty(bounty_id=bounty_of[i])
            body = f"{spec.rstrip()}\n\n{metadata_of(issue, chain_name(world.sponsor)).to_block()}\n"
            world.forge.update_issue_body(REPO, number, body)
            issue.write_metadata(body_digest=sha256_hex(body))

    # the worker's side and the settlements that precede the clock's jump
    for batch in _batches(plan):
        txs = Transactions(ledger)
        for i, state in batch:
            bounty_id = bounty_of[i]
            if state == "cancelled":
                txs.add(sponsor, "cancel_bounty", {"bounty_id": bounty_id})
                continue
            if state == "open":
                continue
            txs.add(worker, "accept_bounty", {"bounty_id": bounty_id})
            if state in ("submitted", "paid", "cooling"):
                txs.add(worker, "submit_pr", {"bounty_id": bounty_id, "pr_url": _pr_url(world, i),
                                              "commit_sha": f"{i:040x}"})
            if state == "paid":
                txs.add(sponsor, "mark_merged", _merge_args(bounty_id, world, i, repo_id, author_id))
        if txs.pending:
            txs.run()
    if any(state == "paid" for _, state in plan):  # the cooling period passes for the merged ones, then they are paid
        ledger.advance(ledger.cooling_period + 1)
        for batch in _batches([(i, s) for i, s in plan if s in ("paid", "cooling")]):
            txs = Transactions(ledger)
            for i, state in batch:
                if state == "paid":
                    txs.add(worker, "claim_payout", {"bounty_id": bounty_of[i]})
                else:  # merged after the jump: cooling for the next 7 days, nothing due
                    txs.add(sponsor, "mark_merged", _merge_args(bounty_of[i], world, i, repo_id, author_id))
            txs.run()

    # the event store: each bounty's Issue, Bounty and lookups, a batch per save
    for batch in _batches(plan):
        events = {bounty_of[i]: ledger.bounty_events(bounty_of[i]) for i, _ in batch}
        aggregates: list[Any] = []
        for i, _state in batch:
            issue, chain_events = issues[i], events[bounty_of[i]]
            bounty = _bounty(chain_events)
            if bounty.status is not Status.OPEN:
                issue.mirror_labels(labels=sorted({"code3", bounty.status.label}))
                world.forge.set_labels(REPO, issue.number or 0, sorted({"code3", bounty.status.label}))
            aggregates += [issue, bounty, Index(kind="publish", key=issue.feature_id, target=issue.issue_hash),
                           Index(kind="task", key=issue.task_id or "", target=issue.issue_hash)]
        world.sponsor.store.save(*aggregates)
        if progress:
            print(f"seeded {batch[-1][0] + 1 - start}/{n}", flush=True)

    _catch_up_views(world)
    counts: dict[str, int] = defaultdict(int)
    for _, state in plan:
        counts[state] += 1
    return dict(counts)


def _merge_args(bounty_id: str, world: World, i: int, repo_id: int, author_id: int) -> dict[str, Any]:
    """The resolver's report of PR i merged, written by the linked worker (what it reads on the forge)."""
    return {"bounty_id": bounty_id, "pr_url": _pr_url(world, i), "author_id": author_id, "repo_id": repo_id,
            "pr_number": 100_000_000 + i}


def _bounty(events: list[ChainEvent]) -> Bounty:
    bounty = Bounty.from_chain(events[0])
    for ev in events[1:]:
        bounty.observe(ev)
    return bounty


def _catch_up_views(world: World) -> None:
    """The board by its projector; the chain cursor and the forge mirror at the end of what was seeded."""
    s = world.sponsor
    follow(s.store, s.views, BountyBoard(), limit=5000)
    NamedCursor(s.views, CURSOR).advance(world.ledger.latest_version())
    last = s.store.recorder.max_notification_id() or 0
    with s.views.transaction() as cur:
        track(cur, "forge_mirror", last)
    if s.views.postgres:  # a bulk load leaves what autovacuum cleans up in a store that grew by use: stale
        # statistics, the board's dead row versions (each bounty's row was rewritten by its events; an index scan
        # then visits 8 times the rows it returns) and no visibility map. Measured on a 40 000-bounty store: an
        # idle tick 12.3 ms before VACUUM ANALYZE, 5.9 after (as at 1 000); a first worker start 8.5 s, then 73 ms
        with s.views.statement() as cur:  # autocommit: VACUUM runs outside a transaction
            tables = [r[0] for r in cur.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                                                ).fetchall()]
            for table in tables:
                cur.execute(f'VACUUM ANALYZE "{table}"')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("n", type=int)
    parser.add_argument("--database-url", default=os.environ.get("CODE3_DATABASE_URL"))
    parser.add_argument("--home", type=Path, help="CODE3_HOME for the seeded keys (default: PROJECT-home)")
    args = parser.parse_args()
    home = args.home or args.project.with_name(args.project.name + "-home")
    world = open_world(args.project, home, args.database_url)
    try:
        started = time.perf_counter()
        counts = seed(world, args.n, progress=True)
        print(f"seeded {args.n} bounties in {time.perf_counter() - started:.1f} s: {counts}")
    finally:
        world.close()


if __name__ == "__main__":
    main()
