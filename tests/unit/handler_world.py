"""Handlers on in-memory adapters: eventsourcing's in-memory persistence, the embedded ledger in an
in-memory SQLite database, and the in-memory forge — a whole lifecycle step runs in milliseconds.

Everyone shares one store, one ledger and one forge, as processes of one project do; each identity gets
its own signer and forge actor.
"""

from __future__ import annotations

from pathlib import Path

from adapters.event_store import EventStore
from adapters.keystore import Keystore
from adapters.local_ledger import LocalLedger
from adapters.offline_writer import OfflineWriter
from adapters.sql import SqlDb
from code3.settings import Settings
from mcp_tools.services import Services
from tests.fakes.memory_forge import ForgeState, MemoryForge

REPO = "alice/todo-app"
AMOUNT = 1_000_000


class MemoryWorld:
    def __init__(self, project: Path) -> None:
        self.project = project
        self.store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
        self.ledger = LocalLedger(Path(":memory:"), cooling_period=100)
        self.forge_state = ForgeState()
        self.views = SqlDb.sqlite(Path(":memory:"))
        self.keys = Keystore(Settings(project=project).keystore_dir)
        self.people: dict[str, Services] = {}
        for name in ("alice", "bob", "carol"):
            self.keys.new(name)
        self.ledger.initialize_roles(resolver=self.keys.load("alice").address)  # alice serves: she reports merges
        MemoryForge(self.forge_state, "alice").create_repo(REPO)
        self.ledger.mint(self["alice"].signer.address, "USDT", 10 * AMOUNT)

    def __getitem__(self, name: str) -> Services:
        if name not in self.people:
            self.people[name] = Services(
                store=self.store, forge=MemoryForge(self.forge_state, name), chain=self.ledger,
                signer=self.keys.load(name), writer=OfflineWriter(), project=self.project,
                workspace=self.project / ".code3" / "workspaces" / name, views=self.views)
        return self.people[name]

    def close(self) -> None:
        self.ledger.close()
        self.views.close()
