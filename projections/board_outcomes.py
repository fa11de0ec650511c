"""How each cancelled bounty ended: refunded (cancelled before a merge, or reclaimed after its deadline) or disputed
(the sponsor disputed during cooling) — what `Bounty.Cancelled` carries (`disputed`) and the board's single
CANCELLED state does not tell apart.

A small pure projector beside the board, so the board's own table and version stay as they are: one row per
bounty (its aggregate id, to find it from a later event, and its bounty id, to join with the board), the outcome
set by its cancellation. The web page filters and labels by it; whoever reads it catches it up first
(`catch_up`), as the board's readers do.
"""

from __future__ import annotations

from typing import Any

from adapters.sql import Cursor, SqlDb
from domain.bounty import Bounty

SCHEMA = """
CREATE TABLE IF NOT EXISTS board_outcomes (originator_id TEXT PRIMARY KEY, bounty_id TEXT NOT NULL, outcome TEXT);
CREATE INDEX IF NOT EXISTS board_outcomes_outcome ON board_outcomes (outcome, bounty_id);
CREATE INDEX IF NOT EXISTS board_outcomes_bounty ON board_outcomes (bounty_id);
"""
OUTCOMES = ("refunded", "disputed")


class BoardOutcomes:
    name = "board_outcomes"
    version = 1
    has_effects = False
    schema = SCHEMA
    tables = ("board_outcomes",)

    def effect(self, event: Any) -> None:
        return None

    def apply(self, event: Any, cur: Cursor) -> None:
        if isinstance(event, Bounty.Created):
            cur.execute("INSERT INTO board_outcomes (originator_id, bounty_id, outcome) VALUES (?, ?, NULL) "
                        "ON CONFLICT (originator_id) DO NOTHING", (str(event.originator_id), event.bounty_id))
        elif isinstance(event, Bounty.Cancelled):
            cur.execute("UPDATE board_outcomes SET outcome = ? WHERE originator_id = ?",
                        ("disputed" if event.disputed else "refunded", str(event.originator_id)))


def outcomes_of(views: SqlDb, bounty_ids: list[str]) -> dict[str, str]:
    """bounty id → outcome for those of `bounty_ids` that were cancelled (one indexed read for a page of rows)."""
    if not bounty_ids:
        return {}
    views.ensure(SCHEMA)
    marks = ", ".join("?" for _ in bounty_ids)
    found = views.query(f"SELECT bounty_id, outcome FROM board_outcomes WHERE bounty_id IN ({marks}) "
                        "AND outcome IS NOT NULL", tuple(bounty_ids))
    return {str(bounty_id): str(outcome) for bounty_id, outcome in found}


def with_outcome(outcome: str) -> tuple[str, tuple[Any, ...]]:
    """A condition on the board's rows (`bounty_board`) for the cancelled bounties that ended as `outcome`."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}")
    return "bounty_id IN (SELECT bounty_id FROM board_outcomes WHERE outcome = ?)", (outcome,)
