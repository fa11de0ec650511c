"""The Sealer for secret annotations: AES-256-GCM with a 32-byte key kept in the keystore directory.

The key file is created on first use, mode 0600 in a directory of mode 0700, by writing a temporary
file and linking it into place (link never replaces: when two processes race, both end up with the
first one's key). A sealed text is `aead1:` + base64url(12-byte nonce + ciphertext + tag); the
associated data binds it to its purpose, so a ciphertext made for something else does not open here.
Nothing here logs or returns the clear text or the key; a text that does not open (another key, a
damaged log) is an error that names neither.
"""

from __future__ import annotations

import base64
import contextlib
import os
import stat
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from domain.errors import Code, Code3Error

KEY_FILE = "annotations.aead.key"
PREFIX = "aead1:"
AAD = b"code3/annotation/v1"
NONCE_BYTES = 12
KEY_BYTES = 32


class SecretBox:
    """Implements domain.annotation.Sealer. Builds nothing until the first seal or open."""

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
        if not self.path.exists():
            _private_dir(self.path.parent)
            _write_once(self.path, AESGCM.generate_key(bit_length=256))
        st = self.path.lstat()
        if not stat.S_ISREG(st.st_mode):
            raise Code3Error(Code.PRECONDITION, f"the annotation key {self.path} is not a regular file",
                             "replace it with the key file from a backup")
        if st.st_mode & 0o077:
            os.chmod(self.path, 0o600)  # a copied-in key is tightened, as the keystore does
        key = self.path.read_bytes()
        if len(key) != KEY_BYTES:
            raise Code3Error(Code.PRECONDITION, f"the annotation key {self.path} is damaged",
                             "restore it from a backup; without it secret annotations cannot be read")
        return key


def _private_dir(path: Path) -> None:
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            continue
        os.chmod(directory, 0o700)  # mkdir's mode is masked by the umask


def _write_once(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):  # another process made the key first: use theirs
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
