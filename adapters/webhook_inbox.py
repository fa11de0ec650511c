"""The webhook inbox: deliveries that matter (merges of bounty PRs) with their retry state.

A delivery that fails for a transient reason is retried with backoff by the worker; one that keeps
failing becomes a dead letter, which `code3 webhooks retry` revives.
"""

from __future__ import annotations

import json
import time
from typing import Any

from adapters.sql import SqlDb

SCHEMA = """
CREATE TABLE IF NOT EXISTS webhook_deliveries (delivery_id TEXT PRIMARY KEY, event TEXT NOT NULL,
    payload TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL, last_error TEXT,
    next_attempt_at DOUBLE PRECISION NOT NULL, received_at DOUBLE PRECISION NOT NULL);
"""
COLUMNS = ("delivery_id", "event", "payload", "status", "attempts", "last_error")


class Inbox:
    def __init__(self, db: SqlDb) -> None:
        db.ensure(SCHEMA)
        self.db = db

    def record(self, delivery: str, event: str, payload: str) -> None:
        now = time.time()
        with self.db.transaction() as cur:
            cur.execute("INSERT INTO webhook_deliveries (delivery_id, event, payload, status, attempts, last_error, "
                        "next_attempt_at, received_at) VALUES (?, ?, ?, 'pending', 0, NULL, ?, ?) "
                        "ON CONFLICT (delivery_id) DO NOTHING", (delivery, event, payload, now, now))

    def get(self, delivery: str) -> dict[str, Any] | None:
        rows = self.db.query(f"SELECT {', '.join(COLUMNS)} FROM webhook_deliveries WHERE delivery_id = ?",
                             (delivery,))
        return dict(zip(COLUMNS, rows[0], strict=True)) if rows else None

    def done(self, delivery: str) -> None:
        with self.db.transaction() as cur:
            cur.execute("UPDATE webhook_deliveries SET status = 'done', last_error = NULL WHERE delivery_id = ?",
                        (delivery,))

    def failed(self, delivery: str, error: dict[str, Any], dead: bool) -> None:
        with self.db.transaction() as cur:
            attempts = cur.execute("SELECT attempts FROM webhook_deliveries WHERE delivery_id = ?",
                                   (delivery,)).fetchone()[0] + 1
            backoff = min(2 ** attempts, 300)
            cur.execute("UPDATE webhook_deliveries SET status = ?, attempts = ?, last_error = ?, next_attempt_at = ? "
                        "WHERE delivery_id = ?",
                        ("dead" if dead else "retrying", attempts, json.dumps(error), time.time() + backoff, delivery))

    def due(self) -> list[str]:
        rows = self.db.query("SELECT delivery_id FROM webhook_deliveries WHERE status IN ('pending', 'retrying') "
                             "AND next_attempt_at <= ? ORDER BY received_at", (time.time(),))
        return [r[0] for r in rows]

    def dead(self) -> list[dict[str, Any]]:
        rows = self.db.query("SELECT delivery_id, attempts, last_error FROM webhook_deliveries "
                             "WHERE status = 'dead' ORDER BY received_at")
        return [{"delivery_id": r[0], "attempts": r[1], "last_error": json.loads(r[2] or "null")} for r in rows]

    def revive(self, delivery: str) -> None:
        """Give a dead letter a fresh budget (what `code3 webhooks retry` does before replaying it)."""
        with self.db.transaction() as cur:
            cur.execute("UPDATE webhook_deliveries SET status = 'retrying', attempts = 0, next_attempt_at = 0 "
                        "WHERE delivery_id = ? AND status = 'dead'", (delivery,))
