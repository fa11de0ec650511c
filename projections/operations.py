"""What an operator asks of the store: how far each read model is behind the log, who holds the leases, which
follower keeps stopping on a transient failure (the forge mirror while GitHub is away), the dead-letter
backlog, the payouts made and the ones overdue.

`code3 doctor` and the /metrics of serve and worker read the same snapshot, so they never disagree. Every
figure is one indexed or aggregate query; nothing is fixed up here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventsourcing.application import Application

from adapters.sql import SqlDb
from adapters.tracking import alive, db_now, ensure_tracking
from adapters.webhook_inbox import SCHEMA as INBOX
from domain.bounties.contract import BountyState, Status
from projections.bounties import board
from projections.bounties.board import BountyBoard
from projections.failures import health
from projections.versions import DEAD_LETTERS, ready

# the worker pays at the cooling end and ticks every few seconds: a payout this late is stuck, not due
OVERDUE_AFTER_S = 120
WORKER_PROJECTIONS = ("bounty_board", "forge_mirror")  # the read models the worker keeps moving
WORKER_LEASE = "forge_mirror"  # the lease a running worker holds: its presence
FAILING_ROUNDS = 3  # a follower stopped this many rounds in a row by a transient failure is reported behind


@dataclass
class Lease:
    projection: str
    owner: str
    expires_in: float  # seconds; negative: expired
    alive: bool  # False: its process is gone (known on the owner's own host only)

    @property
    def live(self) -> bool:
        return self.expires_in > 0 and self.alive


@dataclass
class Snapshot:
    head: int  # notification id of the newest event
    positions: dict[str, int]  # projection -> last notification applied
    leases: list[Lease]
    projection_dead: dict[str, int]  # projection -> events it could not apply
    webhook_dead: int  # deliveries given up on (`code3 webhooks list`)
    webhook_retrying: int
    payouts: dict[str, tuple[int, int]]  # asset -> (bounties paid, amount in smallest units)
    cooling: list[dict[str, Any]] = field(default_factory=list)  # board rows still cooling
    failing: dict[str, dict[str, Any]] = field(default_factory=dict)  # projection -> failures, since, error
    now: float = 0.0  # the database's clock when the snapshot was read

    def lag(self) -> dict[str, int]:
        names = {*self.positions, *WORKER_PROJECTIONS}
        return {name: max(0, self.head - self.positions.get(name, 0)) for name in sorted(names)}

    def holder(self, projection: str) -> Lease | None:
        return next((lease for lease in self.leases if lease.projection == projection and lease.live), None)

    def stalled(self) -> dict[str, int]:
        """Worker-driven projections behind the log while no worker holds its lease: nothing is moving them
        (the board needs no lease, but only a worker moves it between tool calls)."""
        if self.holder(WORKER_LEASE) is not None:
            return {}
        return {name: behind for name, behind in self.lag().items() if behind and name in WORKER_PROJECTIONS}

    def stuck(self, rounds: int = FAILING_ROUNDS) -> dict[str, dict[str, Any]]:
        """Projections behind the log whose follower stopped `rounds` rounds or more in a row on a transient
        failure (the forge away or rate-limiting): name -> {behind, failures, for_s, error}."""
        lag = self.lag()
        return {name: {"behind": lag.get(name, 0), "failures": f["failures"], "error": f["error"],
                       "for_s": max(0.0, self.now - f["failing_since"]) if f["failing_since"] is not None else 0.0}
                for name, f in self.failing.items() if f["failures"] >= rounds and lag.get(name, 0)}

    def overdue(self, now: int, chain: list[BountyState] | None = None, after: int = OVERDUE_AFTER_S
                ) -> list[dict[str, Any]]:
        """Bounties past their cooling end by more than `after` seconds (chain time) and still not paid, as the
        board says or, given the `chain`'s bounties, as the chain says (a lagging board hides none); those the
        board marks claimable are left out (they wait for their winner, whose key is not here)."""
        claimable = {row["bounty_id"] for row in self.cooling if row["claimable"]}
        cooling: list[dict[str, Any]] = self.cooling if chain is None else [
            {"bounty_id": b.bounty_id, "cooling_until": b.cooling_until} for b in chain
            if b.status == Status.COOLING_DOWN]
        return [row for row in cooling if row["cooling_until"] is not None
                and row["cooling_until"] + after <= now and row["bounty_id"] not in claimable]

    def metrics(self, now: int | None) -> dict[str, Any]:
        """The figures `adapters.metrics.exposition` renders (overdue only when the chain's time is known)."""
        return {"head": self.head, "lag": self.lag(), "payouts": self.payouts,
                "failing": {WORKER_LEASE: 0, **{name: f["failures"] for name, f in self.failing.items()}},
                "dead_letters": {"webhooks": self.webhook_dead,
                                 **{f"projection:{n}": c for n, c in self.projection_dead.items()}},
                "overdue": len(self.overdue(now)) if now is not None else 0}


def snapshot(app: Application, views: SqlDb) -> Snapshot:
    ensure_tracking(views)
    for ddl in (DEAD_LETTERS, INBOX):
        views.ensure(ddl)
    ready(views, BountyBoard)
    head = app.recorder.max_notification_id() or 0
    positions = {str(n): int(p) for n, p in views.query("SELECT name, position FROM projection_tracking")}
    with views.statement() as cur:
        now = db_now(views, cur)  # leases end by the database's clock, whatever this host's says
        failing = health(cur)
    leases = [Lease(str(n), str(o), float(e) - now, alive(str(o)))
              for n, o, e in views.query("SELECT name, owner, expires_at FROM projection_leases ORDER BY name")]
    dead = {str(n): int(c) for n, c in views.query("SELECT name, COUNT(*) FROM projection_dead_letters GROUP BY name")}
    inbox = dict(views.query("SELECT status, COUNT(*) FROM webhook_deliveries WHERE status IN ('dead', 'retrying') "
                             "GROUP BY status"))
    paid = {str(a): (int(c), int(t or 0)) for a, c, t in views.query(
        "SELECT asset, COUNT(*), SUM(amount) FROM bounty_board WHERE state = ? GROUP BY asset", (Status.PAID.name,))}
    return Snapshot(head, positions, leases, dead, int(inbox.get("dead", 0)), int(inbox.get("retrying", 0)), paid,
                    board.cooling_bounties(views), failing, now)
