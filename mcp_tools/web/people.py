"""Who an address is, as people read it: a name where the serve knows one, a short address beside it.

Two sources the serve can vouch for: the keys of its keystore (`CODE3_HOME/keys`, named by the person who made
them: the serve's own identity and any other kept on this machine) and the identity links the chain recorded
after checking the address's signature (`board_links`: a forge login). A login or name is shown escaped, like
every value; the full address stays in the element's title. Nothing a stranger merely claims (a PR's author, an
issue's text) names an address.
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KEYSTORE_SOURCE = "a key in this serve's keystore"
LINK_SOURCE = "forge account linked on chain"


@dataclass(frozen=True)
class Person:
    address: str
    name: str = ""
    source: str = ""

    @property
    def short(self) -> str:
        """0x1234…abcd: enough to tell two addresses apart at a glance."""
        a = self.address
        return a if len(a) <= 14 else f"{a[:6]}…{a[-4:]}"

    @property
    def label(self) -> str:
        """The name when known, else the short address (for sentences: 'alice published the bounty')."""
        return self.name or self.short

    @property
    def title(self) -> str:
        return f"{self.address} ({self.source})" if self.source else self.address


def keystore_dir() -> Path:
    """The serve's keystore: CODE3_KEYSTORE, else CODE3_HOME/keys (as `code3.settings.Settings.keystore_dir`
    reads the same environment; this layer cannot import the composition root)."""
    from adapters.home import code3_home

    named = os.environ.get("CODE3_KEYSTORE")
    return Path(named).expanduser() if named else code3_home() / "keys"


_CACHE: dict[Path, tuple[tuple[str, ...], dict[str, str]]] = {}
_LOCK = threading.Lock()


def keystore_names(directory: Path | None = None) -> dict[str, str]:
    """address → key name for every key of the keystore; read again only when the set of names changes (a key is
    written once, never overwritten). A key that cannot be read is left out, never an error on a page."""
    from adapters.keystore import Keystore
    from domain.errors import Code3Error

    keys = Keystore(directory or keystore_dir())
    try:
        names = tuple(keys.names())
    except (OSError, Code3Error):
        return {}
    with _LOCK:
        known = _CACHE.get(keys.directory)
        if known is not None and known[0] == names:
            return known[1]
    found: dict[str, str] = {}
    for name in names:
        try:
            found[keys.load(name).address] = name
        except (OSError, Code3Error):
            continue
    with _LOCK:
        _CACHE[keys.directory] = (names, found)
    return found


class People:
    """Names the addresses of one page: keystore names first, then a linked login (under `resolver` when the link
    exists there, else any). One indexed read of the links per address, at most once per page."""

    def __init__(self, s: Any, resolver: str | None = None) -> None:
        self.s = s
        self.resolver = resolver
        from domain.errors import Code3Error

        self.keys = dict(keystore_names())
        signer = getattr(s, "signer", None)
        if signer is not None:  # the serve's own identity, whatever keystore it came from
            with contextlib.suppress(OSError, Code3Error):  # a missing key fails no page: the address is shown
                self.keys.setdefault(signer.address, signer.name)
        self._seen: dict[str, Person] = {}

    def __call__(self, address: Any) -> Person:
        address = str(address or "")
        if address in self._seen:
            return self._seen[address]
        person = Person(address)
        if address in self.keys:
            person = Person(address, self.keys[address], KEYSTORE_SOURCE)
        elif address:
            login = self._login(address)
            if login:
                person = Person(address, login, LINK_SOURCE)
        self._seen[address] = person
        return person

    def _login(self, address: str) -> str | None:
        from projections.bounties import board

        links = board.links(self.s.views, account=address)
        if not links:
            return None
        mine = [link for link in links if link["resolver"] == self.resolver]
        return str((mine or links)[0]["login"])
