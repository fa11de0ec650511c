"""A chain event as observed, with the coordinates that make recording it idempotent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ChainEvent:
    type: str
    data: dict[str, Any] = field(hash=False)
    tx_hash: str
    version: int
    index: int

    @property
    def key(self) -> str:
        """Unique on chain: the transaction's version and the event's index within it."""
        return f"{self.version}:{self.index}"

    @property
    def coords(self) -> dict[str, Any]:
        return {"tx_hash": self.tx_hash, "version": self.version, "index": self.index}
