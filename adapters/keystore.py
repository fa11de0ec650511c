"""A directory of named ed25519 keys: the identities a Code3 server can act as.

The acting account is never a tool argument; it is the key this process was started with.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from adapters.ports import Signer
from domain.errors import Code, Code3Error

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


def address_of(public_key: bytes) -> str:
    """Aptos-style authentication key: sha3-256 of the public key and the ed25519 scheme byte."""
    return "0x" + hashlib.sha3_256(public_key + b"\x00").hexdigest()


def public_key_of(private_key_hex: str) -> bytes:
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(private_key_hex))
    return key.public_key().public_bytes_raw()


class Keystore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, name: str) -> Path:
        if not NAME.match(name):
            raise Code3Error(
                Code.VALIDATION,
                f"invalid account name {name!r}",
                "use 1-32 characters: lower-case letters, digits, '-' or '_', starting with a letter or digit",
            )
        return self.directory / f"{name}.key"

    def new(self, name: str) -> Signer:
        path = self._path(name)
        if path.exists():
            raise Code3Error(Code.EXISTS, f"account {name!r} already exists", "pick another name")
        key = Ed25519PrivateKey.generate()
        private_hex = key.private_bytes_raw().hex()
        public = key.public_key().public_bytes_raw()
        record = {"name": name, "address": address_of(public), "public_key": public.hex(), "private_key": private_hex}
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(record, fh)
        os.replace(tmp, path)
        return Signer(name=name, address=record["address"], private_key_hex=private_hex)

    def load(self, name: str) -> Signer:
        path = self._path(name)
        if not path.exists():
            raise Code3Error(
                Code.NOT_FOUND,
                f"no account named {name!r} in the keystore {self.directory}",
                f"create it with `code3 account new {name}` or choose another with CODE3_IDENTITY",
            )
        record = json.loads(path.read_text())
        return Signer(name=record["name"], address=record["address"], private_key_hex=record["private_key"])

    def get_or_create(self, name: str) -> Signer:
        try:
            return self.load(name)
        except Code3Error as exc:
            if exc.code is not Code.NOT_FOUND:
                raise
            return self.new(name)

    def names(self) -> list[str]:
        if not self.directory.exists():
            return []
        return sorted(p.stem for p in self.directory.glob("*.key"))
