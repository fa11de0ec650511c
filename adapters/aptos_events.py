"""Following the bounty module's events on a fullnode, with their chain coordinates.

The module emits each event type on its own event handle at the module address, because a fullnode's
REST API lists a handle's events (`/accounts/{a}/events/{handle}/{field}`) while module events are
listed only by an indexer. Handle events carry the version but not the transaction hash nor the
event's index in the transaction, so each version found is read once (`/transactions/by_version`)
and its events taken from there, exactly as a receipt takes them: the same event has the same
coordinates whichever way it was seen. What is read is immutable, so it is cached.

Reads are pinned to the ledger version seen first: every event up to it is in the handles read after
it, so a follower never sees a transaction's later event without its earlier ones.
"""

from __future__ import annotations

import asyncio
from typing import Any

from adapters.aptos_abi import MoveAbi, normalize_address
from domain.chain_events import ChainEvent

PAGE = 100  # the fullnode's largest page of events
_CONCURRENT_READS = 8


class EventFollower:
    def __init__(self, abi: MoveAbi, module_address: str) -> None:
        self.abi = abi
        self.module_address = module_address
        self._handle = f"{module_address}::{abi.module}::{abi.handle_resource}"
        self._streams: dict[str, list[int]] = {field: [] for field in abi.handle_fields.values()}
        self._by_version: dict[int, list[ChainEvent]] = {}

    def of_transaction(self, tx: dict[str, Any]) -> list[ChainEvent]:
        """The transaction's bounty events, indexed by their position among all its events."""
        found = []
        for index, event in enumerate(tx.get("events", [])):
            name = self._event_name(event["type"])
            if name is not None:
                data = self.abi.decode_fields(self.abi.events[name], event["data"])
                found.append(ChainEvent(type=name, data=data, tx_hash=tx["hash"], version=int(tx["version"]),
                                        index=index))
        return found

    def _event_name(self, type_tag: str) -> str | None:
        parts = type_tag.split("::")
        if len(parts) != 3 or parts[1] != self.abi.module or parts[2] not in self.abi.events:
            return None
        try:
            return parts[2] if normalize_address(parts[0]) == self.module_address else None
        except ValueError:
            return None

    async def committed(self, rest: Any) -> list[ChainEvent]:
        """Every bounty event up to the current ledger version, in chain order."""
        upto = int((await rest.info())["ledger_version"])
        await asyncio.gather(*(self._follow(rest, field) for field in self._streams))
        versions = sorted({v for stream in self._streams.values() for v in stream if v <= upto})
        missing = [v for v in versions if v not in self._by_version]
        gate = asyncio.Semaphore(_CONCURRENT_READS)

        async def read(version: int) -> None:
            async with gate:
                tx = await rest.transaction_by_version(version)
            self._by_version[version] = self.of_transaction(tx)

        await asyncio.gather(*(read(v) for v in missing))
        return [event for v in versions for event in self._by_version[v]]

    async def _follow(self, rest: Any, field: str) -> None:
        stream = self._streams[field]
        while True:
            page = await rest.events_by_event_handle(self.module_address, self._handle, field, limit=PAGE,
                                                     start=len(stream))
            for event in page:
                if int(event["sequence_number"]) == len(stream):  # a concurrent read may have taken it
                    stream.append(int(event["version"]))
            if len(page) < PAGE:
                return
