"""Beside the board: how each cancelled bounty ended, and the board's totals kept as running sums.

- Outcome: refunded (cancelled before a merge, or reclaimed after its deadline) or disputed (the sponsor
  disputed during cooling) — what `Bounty.Cancelled` carries (`disputed`) and the board's single CANCELLED state
  does not tell apart.
- Totals: per asset, how much is escrowed (live bounties), paid and refunded, and how many bounties are in each
  bucket, kept up to date as bounties move between buckets, so the web page reads a handful of rows instead of
  summing the whole board at every view (the same buckets as `board.totals`, which sums them from the board).

A small pure projector of its own, so the board's table and version stay as they are: one row per bounty (its
aggregate id, to find it from a later event, its bounty id, to join with the board, its asset, amount, bucket and
outcome) and one row per (asset, bucket). Readers catch it up first (`projections.runner.follow`), as the board's do.
"""

from __future__ import annotations

from typing import Any

from adapters.sql import Cursor, SqlDb
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status

SCHEMA = """
CREATE TABLE IF NOT EXISTS board_outcomes (originator_id TEXT PRIMARY KEY, bounty_id TEXT NOT NULL,
    asset TEXT NOT NULL, amount BIGINT NOT NULL, bucket TEXT NOT NULL, outcome TEXT);
CREATE INDEX IF NOT EXISTS board_outcomes_outcome ON board_outcomes (outcome, bounty_id);
CREATE INDEX IF NOT EXISTS board_outcomes_bounty ON board_outcomes (bounty_id, outcome);
CREATE TABLE IF NOT EXISTS board_sums (asset TEXT NOT NULL, bucket TEXT NOT NULL, bounties BIGINT NOT NULL,
    amount BIGINT NOT NULL, PRIMARY KEY (asset, bucket));
"""
OUTCOMES = ("refunded", "disputed")
BUCKETS = ("escrowed", "paid", "refunded")


def bucket_of(status: Status) -> str:
    """Where a bounty's amount is: still escrowed (open to cooling), paid to the winner, or back with the sponsor."""
    if status == Status.PAID:
        return "paid"
    if status == Status.CANCELLED:
        return "refunded"
    return "escrowed"


class BoardOutcomes:
    name = "board_outcomes"
    version = 2  # 2: amounts and buckets, the running totals
    has_effects = False
    schema = SCHEMA
    tables = ("board_outcomes", "board_sums")

    def effect(self, event: Any) -> None:
        return None

    def apply(self, event: Any, cur: Cursor) -> None:
        if isinstance(event, Bounty.Created):
            cur.execute("INSERT INTO board_outcomes (originator_id, bounty_id, asset, amount, bucket, outcome) "
                        "VALUES (?, ?, ?, ?, 'escrowed', NULL) ON CONFLICT (originator_id) DO NOTHING",
                        (str(event.originator_id), event.bounty_id, event.asset, event.amount))
            if cur.rowcount == 1:
                _add(cur, event.asset, "escrowed", 1, event.amount)
        elif isinstance(event, Bounty.Paid):
            _move(cur, event.originator_id, "paid")
        elif isinstance(event, Bounty.Cancelled):
            _move(cur, event.originator_id, "refunded", "disputed" if event.disputed else "refunded")
        elif isinstance(event, Bounty.Reconciled):
            _move(cur, event.originator_id, bucket_of(Status(event.chain["status"])))


def _move(cur: Cursor, originator_id: Any, bucket: str, outcome: str | None = None) -> None:
    cur.execute("SELECT asset, amount, bucket FROM board_outcomes WHERE originator_id = ?", (str(originator_id),))
    row = cur.fetchone()
    if row is None:  # a bounty this store never saw created: nothing to move
        return
    asset, amount, before = row
    cur.execute("UPDATE board_outcomes SET bucket = ?, outcome = COALESCE(?, outcome) WHERE originator_id = ?",
                (bucket, outcome, str(originator_id)))
    if before != bucket:
        _add(cur, asset, before, -1, -amount)
        _add(cur, asset, bucket, 1, amount)


def _add(cur: Cursor, asset: str, bucket: str, bounties: int, amount: int) -> None:
    cur.execute("INSERT INTO board_sums (asset, bucket, bounties, amount) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (asset, bucket) DO UPDATE SET bounties = board_sums.bounties + excluded.bounties, "
                "amount = board_sums.amount + excluded.amount", (asset, bucket, bounties, amount))


def _ready(views: SqlDb) -> None:
    from projections.versions import ready

    ready(views, BoardOutcomes)


def totals(views: SqlDb) -> list[dict[str, Any]]:
    """Per asset (in order): escrowed, paid and refunded amounts in the smallest unit, and the bounties in each."""
    _ready(views)
    found: dict[str, dict[str, Any]] = {}
    for asset, bucket, bounties, amount in views.query("SELECT asset, bucket, bounties, amount FROM board_sums "
                                                       "ORDER BY asset, bucket"):
        entry = found.setdefault(str(asset), {"asset": str(asset), **{b: 0 for b in BUCKETS},
                                              **{f"{b}_count": 0 for b in BUCKETS}})
        entry[bucket] = int(amount)
        entry[f"{bucket}_count"] = int(bounties)
    return [entry for entry in found.values() if any(entry[f"{b}_count"] for b in BUCKETS)]


def outcomes_of(views: SqlDb, bounty_ids: list[str]) -> dict[str, str]:
    """bounty id → outcome for those of `bounty_ids` that were cancelled (one indexed read for a page of rows)."""
    if not bounty_ids:
        return {}
    _ready(views)
    marks = ", ".join("?" for _ in bounty_ids)
    found = views.query(f"SELECT bounty_id, outcome FROM board_outcomes WHERE bounty_id IN ({marks}) "
                        "AND outcome IS NOT NULL", tuple(bounty_ids))
    return {str(bounty_id): str(outcome) for bounty_id, outcome in found}


def with_outcome(outcome: str) -> tuple[str, tuple[Any, ...]]:
    """A condition on the board's rows (`bounty_board`) for the cancelled bounties that ended as `outcome`: checked
    row by row through an index as the board's own index gives the rows in order, so a page stops early."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}")
    return ("EXISTS (SELECT 1 FROM board_outcomes o WHERE o.bounty_id = bounty_board.bounty_id AND o.outcome = ?)",
            (outcome,))
