"""Following the bounty module's events on a fullnode, with their chain coordinates.

The module emits each event type on its own event handle at the module address, because a fullnode's
REST API lists a handle's events (`/accounts/{a}/events/{handle}/{field}`) while module events are
listed only by an indexer. Handle events carry the version but not the transaction hash nor the
event's index in the transaction, so each version found is read once (`/transactions/by_version`)
and its events taken from there, exactly as a receipt takes them: the same event has the same
coordinates whichever way it was seen. What is read is immutable, so it is cached.

The module's events are the bounties' and the identity links' (`AccountLinked`, which names no bounty): a
follower (`since`) sees both, a bounty's history (`of_bounty`) only the events carrying its id.

Reads are pinned to the ledger version seen first: every event up to it is in the handles read after
it, so a follower never sees a transaction's later event without its earlier ones.

What is read is only what is asked for: a handle's events are numbered (their sequence) in version order, so
the first event after a version is found by a binary search on the sequence (a page of one event per probe),
and each handle keeps a window of the sequences read so far, extended forward as the chain grows and backward
when an older version is asked for. A fresh process that follows the chain from its cursor, or syncs one
bounty, reads the events since then (logarithmic probes, then pages), not the whole chain.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from adapters.aptos_abi import NO_ACCOUNT, MoveAbi, normalize_address
from domain.bounties.chain_events import ChainEvent

PAGE = 100  # the fullnode's largest page of events
_CONCURRENT_READS = 8


@dataclass
class _Window:
    """The events of one handle read so far: sequences base, base + 1, … with their versions; every event before
    `base` has a version at or below `floor` (-1: the window starts at the handle's first event)."""

    base: int = 0
    floor: int | None = None  # None: nothing read yet
    versions: list[int] = field(default_factory=list)

    def covers(self, after: int) -> bool:
        return self.floor is not None and self.floor <= after


class EventFollower:
    def __init__(self, abi: MoveAbi, module_address: str) -> None:
        self.abi = abi
        self.module_address = module_address
        self._handle = f"{module_address}::{abi.module}::{abi.handle_resource}"
        self._windows: dict[str, _Window] = {name: _Window() for name in abi.handle_fields.values()}
        self._created = abi.handle_fields["BountyCreated"]
        self._by_version: dict[int, list[ChainEvent]] = {}
        self._locks: dict[tuple[int, str], asyncio.Lock] = {}

    def of_transaction(self, tx: dict[str, Any]) -> list[ChainEvent]:
        """The transaction's events of the module, indexed by their position among all its events."""
        found = []
        for index, event in enumerate(tx.get("events", [])):
            name = self._event_name(event["type"])
            if name is not None:
                data = self.abi.decode_fields(self.abi.events[name], event["data"])
                if name == "BountyCreated" and data["resolver"] == NO_ACCOUNT:
                    data["resolver"] = ""  # no resolver recorded: the domain's event says so with ""
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
        return await self.since(rest, -1)

    async def since(self, rest: Any, after: int) -> list[ChainEvent]:
        """Every event of the module (links included) with a version above `after`, up to the current ledger
        version, in chain order."""
        upto = int((await rest.info())["ledger_version"])
        await asyncio.gather(*(self._cover(rest, name, after) for name in self._windows))
        versions = sorted({v for w in self._windows.values() for v in w.versions if after < v <= upto})
        missing = [v for v in versions if v not in self._by_version]
        gate = asyncio.Semaphore(_CONCURRENT_READS)

        async def read(version: int) -> None:
            async with gate:
                tx = await rest.transaction_by_version(version)
            self._by_version[version] = self.of_transaction(tx)

        await asyncio.gather(*(read(v) for v in missing))
        return [event for v in versions for event in self._by_version[v]]

    async def of_bounty(self, rest: Any, bounty_id: str) -> list[ChainEvent]:
        """The bounty's events, read from its creation on: the module numbers bounties from 1 and emits one
        BountyCreated each, so bounty n's creation is event n - 1 of that handle (checked; all events otherwise).
        Events naming no bounty (links) are never part of it."""
        created = await self._page(rest, self._created, int(bounty_id) - 1, 1) if int(bounty_id) >= 1 else []
        from_version = -1
        if created and str(created[0]["data"].get("bounty_id")) == str(int(bounty_id)):
            from_version = int(created[0]["version"]) - 1
        return [e for e in await self.since(rest, from_version) if e.data.get("bounty_id") == str(bounty_id)]

    async def _page(self, rest: Any, name: str, start: int, limit: int = PAGE) -> list[dict[str, Any]]:
        return list(await rest.events_by_event_handle(self.module_address, self._handle, name, limit=limit,
                                                      start=start))

    async def _cover(self, rest: Any, name: str, after: int) -> None:
        """Make the handle's window hold every event with a version above `after`, then follow it to the end."""
        loop = asyncio.get_running_loop()  # reads of one chain client run on its loop; a lock per handle there
        async with self._locks.setdefault((id(loop), name), asyncio.Lock()):
            await self._extend(rest, name, after)

    async def _extend(self, rest: Any, name: str, after: int) -> None:
        window = self._windows[name]
        if not window.covers(after):
            start = 0 if after < 0 else await self._first_after(rest, name, after, window)
            end = window.base if window.floor is not None else start  # what is read already starts there
            window.versions = await self._read(rest, name, start, end) + window.versions
            window.base, window.floor = start, after if start > 0 else -1
        while True:
            page = await self._page(rest, name, window.base + len(window.versions))
            for event in page:
                if int(event["sequence_number"]) == window.base + len(window.versions):  # the page starts there
                    window.versions.append(int(event["version"]))
            if len(page) < PAGE:
                return

    async def _read(self, rest: Any, name: str, start: int, end: int) -> list[int]:
        """The versions of the handle's events `start` .. `end` - 1 (none when `end` is not past `start`)."""
        versions: list[int] = []
        while start + len(versions) < end:
            page = await self._page(rest, name, start + len(versions), min(PAGE, end - start - len(versions)))
            if not page:
                break
            versions += [int(event["version"]) for event in page]
        return versions

    async def _first_after(self, rest: Any, name: str, after: int, window: _Window) -> int:
        """The sequence of the handle's first event with a version above `after` (its count when none): probes
        of one event, doubling up to a bound, then halving (logarithmic in the handle's length)."""

        async def version_at(sequence: int) -> int | None:
            page = await self._page(rest, name, sequence, 1)
            return int(page[0]["version"]) if page else None

        low = 0
        if window.floor is not None:  # the window's first event is already past `after`: the answer is at or before it
            high = window.base
        else:
            high = 1
            while (found := await version_at(high - 1)) is not None and found <= after:
                low, high = high, high * 2
        while low < high:  # the first sequence in [low, high) whose version is above `after` (high if none)
            middle = (low + high) // 2
            found = await version_at(middle)
            if found is not None and found <= after:
                low = middle + 1
            else:
                high = middle
        return low
