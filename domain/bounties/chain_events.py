"""A chain event as observed, with the coordinates that make recording it idempotent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict


class ChainCoords(TypedDict):
    """Where a fact is on chain: its transaction, the ledger version that committed it, its index among that
    transaction's events. Every event recorded from the chain carries them (a plain mapping in the stored event, so
    logs written before read unchanged; typed for the checker)."""

    tx_hash: str
    version: int
    index: int


def coords_key(coords: ChainCoords) -> str:
    """Unique on chain: the version and the index (what makes observing a chain event twice record nothing)."""
    return f"{coords['version']}:{coords['index']}"


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
    def coords(self) -> ChainCoords:
        return {"tx_hash": self.tx_hash, "version": self.version, "index": self.index}
