"""The Sealer for secret annotations: AES-256-GCM with a 32-byte key kept with the project's secrets.

The key file (CODE3_HOME/projects/<key>/annotations.aead.key, outside the work tree) is created on first
use, mode 0600 in a directory of mode 0700, by writing a temporary file and linking it into place (link
never replaces: when two processes race, both end up with the first one's key); an existing one that is
a link, another user's or group/world-readable is refused (adapters.private_files). A sealed text is
`aead1:` + base64url(12-byte nonce + ciphertext + tag); the associated data binds it to its purpose, so
a ciphertext made for something else does not open here.
Nothing here logs or returns the clear text or the key; a text that does not open (another key, a
damaged log) is an error that names neither.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from adapters.private_files import read_private, write_private
from domain.errors import Code, Code3Error

KEY_FILE = "annotations.aead.key"
PREFIX = "aead1:"
AAD = b"code3/annotation/v1"
NONCE_BYTES = 12
KEY_BYTES = 32


class SecretBox:
    """Implements domain.knowledge.annotation.Sealer. Builds nothing until the first seal or open."""

    def __init__(self, directory: Path, key_file: str = KEY_FILE) -> None:
        self.path = Path(directory) / key_file
        self._aead: AESGCM | None = None

    def seal(self, plaintext: str) -> str:
        nonce = os.urandom(NONCE_BYTES)
        sealed = nonce + self._cipher().encrypt(nonce, plaintext.encode("utf-8"), AAD)
        return PREFIX + base64.urlsafe_b64encode(sealed).decode("ascii")

    def open(self, sealed: str) -> str:
        try:
            if not sealed.startswith(PREFIX):
                raise ValueError
            raw = base64.urlsafe_b64decode(sealed[len(PREFIX) :].encode("ascii"))
            if len(raw) < NONCE_BYTES + 16:
                raise ValueError
            return self._cipher().decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], AAD).decode("utf-8")
        except (ValueError, InvalidTag, UnicodeError):
            raise Code3Error(Code.PRECONDITION, "a sealed annotation text cannot be opened with this keystore's key",
                             f"restore the key file {self.path.name} of the keystore that sealed it") from None

    def _cipher(self) -> AESGCM:
        if self._aead is None:
            self._aead = AESGCM(self._load_or_create())
        return self._aead

    def _load_or_create(self) -> bytes:
        key = read_private(self.path)  # a linked, foreign, loose or odd file is refused, never adopted
        if key is None:
            write_private(self.path, AESGCM.generate_key(bit_length=256), overwrite=False)
            key = read_private(self.path)  # another process may have made it first: use theirs
        if key is None or len(key) != KEY_BYTES:
            raise Code3Error(Code.PRECONDITION, f"the annotation key {self.path} is damaged",
                             "restore it from a backup; without it secret annotations cannot be read")
        return key
