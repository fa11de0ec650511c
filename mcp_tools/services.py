"""What a command handler is given: the store, the ports and the acting identity. Built by code3.wiring."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from adapters.event_store import EventStore
from adapters.ports import Chain, Forge, Signer, SpecWriter
from adapters.sql import SqlDb


@dataclass
class Services:
    store: EventStore
    forge: Forge
    chain: Chain
    signer: Signer
    writer: SpecWriter
    project: Path
    workspace: Path
    views: SqlDb
    asset: str = "USDT"

    def close(self) -> None:
        self.store.close()
        self.views.close()
        for port in (self.forge, self.chain):
            close = getattr(port, "close", None)
            if close is not None:
                close()

    @property
    def specs_dir(self) -> Path:
        return self.project / "specs"
