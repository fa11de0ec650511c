"""The AccountLink aggregate: a mirror of one identity link on chain (a forge account ↔ a chain address, under
one resolver), born from and moved only by observed `AccountLinked` chain events.

A link is the chain's fact (the chain checked the address's signature; the resolver checked that the forge
account published it); the log keeps each one, and each replacement (a rotated key, a renamed login), with its
chain coordinates, so anyone can audit who could be paid for whose work.
"""

from __future__ import annotations

from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.bounties.chain_events import ChainCoords, ChainEvent, coords_key
from domain.canonical import natural_id


class AccountLink(Aggregate):
    class Linked(Aggregate.Created):
        resolver: str
        forge_user_id: int
        login: str
        account: str
        coords: ChainCoords

    class Relinked(Aggregate.Event):
        login: str
        account: str
        coords: ChainCoords

    @staticmethod
    def create_id(resolver: str, forge_user_id: int) -> UUID:
        return natural_id("link", f"{resolver}:{forge_user_id}")

    @event(Linked)
    def __init__(self, resolver: str, forge_user_id: int, login: str, account: str, coords: ChainCoords) -> None:
        self.resolver, self.forge_user_id, self.login, self.account = resolver, forge_user_id, login, account
        self.seen = [coords_key(coords)]

    @classmethod
    def from_chain(cls, ev: ChainEvent) -> AccountLink:
        d = ev.data
        return cls(resolver=d["resolver"], forge_user_id=int(d["forge_user_id"]), login=d["login"],
                   account=d["account"], coords=ev.coords)

    def observe(self, ev: ChainEvent) -> bool:
        """Record a later link of the same forge account (its address or login changed) unless already recorded."""
        if ev.key in self.seen:
            return False
        self._relinked(login=ev.data["login"], account=ev.data["account"], coords=ev.coords)
        return True

    @event(Relinked)
    def _relinked(self, login: str, account: str, coords: ChainCoords) -> None:
        self.login, self.account = login, account
        self.seen.append(coords_key(coords))


