"""A directory of named ed25519 keys: the identities a Code3 server can act as.

The acting account is never a tool argument; it is the key this process was started with.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from adapters.ports import Key, Signer
from adapters.private_files import check_entry, private_dir, read_private, write_private
from adapters.scrub import register_secret
from domain.errors import Code, Code3Error

NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
HEX64 = re.compile(r"[0-9a-f]{64}")


def address_of(public_key: bytes) -> str:
    """Aptos-style authentication key: sha3-256 of the public key and the ed25519 scheme byte."""
    return "0x" + hashlib.sha3_256(public_key + b"\x00").hexdigest()


def public_key_of(private_key_hex: str) -> bytes:
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(private_key_hex))
    return key.public_key().public_bytes_raw()


def sign(signer: Signer, message: bytes) -> bytes:
    """An ed25519 signature of `message` by the signer's key."""
    return Ed25519PrivateKey.from_private_bytes(bytes.fromhex(signer.private_key_hex)).sign(message)


def verify(public_key: bytes, signature: bytes, message: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


class Keystore:
    """Key files are mode 0600 in a 0700 directory (CODE3_HOME/keys by default, outside any work tree),
    written once and never overwritten; one that is a link, another user's or looser is refused."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, name: str) -> Path:
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise Code3Error(
                Code.VALIDATION,
                f"invalid account name {name!r}",
                "use 1-32 characters: lower-case letters, digits, '-' or '_', starting with a letter or digit",
            )
        return self.directory / f"{name}.key"

    def new(self, name: str) -> Signer:
        return self.add(name, Ed25519PrivateKey.generate().private_bytes_raw().hex())

    def add(self, name: str, private_key_hex: str) -> Signer:
        """Store a key under a new name; an existing name is never overwritten (E_EXISTS), even in a race."""
        path = self._path(name)
        if not HEX64.fullmatch(private_key_hex):
            raise Code3Error(Code.VALIDATION, "not an ed25519 private key", "a key is 32 bytes, 64 hex digits")
        if path.exists():
            raise Code3Error(Code.EXISTS, f"account {name!r} already exists", "pick another name")
        public = public_key_of(private_key_hex)
        record = {"name": name, "address": address_of(public), "public_key": public.hex(),
                  "private_key": private_key_hex}
        private_dir(self.directory, root=self.directory)
        if not write_private(path, json.dumps(record).encode(), overwrite=False, root=self.directory):
            raise Code3Error(Code.EXISTS, f"account {name!r} already exists", "pick another name")
        register_secret(private_key_hex)
        return Key(name=name, address=record["address"], private_key_hex=private_key_hex)

    def load(self, name: str) -> Signer:
        path = self._path(name)
        raw = read_private(path, root=self.directory)  # a linked, foreign or loose key is refused, never adopted
        if raw is None:
            raise Code3Error(
                Code.NOT_FOUND,
                f"no account named {name!r} in the keystore {self.directory}",
                f"create it with `code3 account new {name}` or choose another with CODE3_IDENTITY",
            )
        try:
            record = json.loads(raw)
            signer = Key(name=record["name"], address=record["address"], private_key_hex=record["private_key"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise Code3Error(Code.PRECONDITION, f"the key file {path} cannot be read ({type(exc).__name__})",
                             "restore it from a backup (`code3 account import`)") from None
        register_secret(signer.private_key_hex)
        return signer

    def find_address(self, address: str) -> str | None:
        """The name of the key whose address is `address`, if this keystore holds it."""
        for name in self.names():
            try:
                if self.load(name).address == address:
                    return name
            except Code3Error:
                continue
        return None

    def get_or_create(self, name: str) -> Signer:
        try:
            return self.load(name)
        except Code3Error as exc:
            if exc.code is not Code.NOT_FOUND:
                raise
        try:
            return self.new(name)
        except Code3Error as exc:
            if exc.code is not Code.EXISTS:  # another process created it a moment ago
                raise
            return self.load(name)

    def names(self) -> list[str]:
        if check_entry(self.directory, directory=True) is None:
            return []
        return sorted(p.stem for p in self.directory.glob("*.key"))
