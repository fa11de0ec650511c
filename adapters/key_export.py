"""A keystore key as a passphrase-encrypted file: the backup of an identity that holds funds.

scrypt (N=2^17, r=8, p=1) derives a 256-bit key from the passphrase and a random salt; AES-256-GCM
encrypts the private key under a random nonce, with the file's header (format, name, address, public
key, KDF parameters) as associated data, so no header field can be changed without the decryption
failing. The passphrase never appears in argv: it comes from CODE3_PASSPHRASE or a terminal prompt.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from adapters.keystore import Keystore, address_of, public_key_of
from adapters.ports import Signer
from adapters.private_files import write_private
from domain.canonical import canonical_json
from domain.errors import Code, Code3Error

FORMAT = "code3-key/1"
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**17, 8, 1
MIN_PASSPHRASE = 8
MAX_FILE = 64 * 1024
PASSPHRASE_ENV = "CODE3_PASSPHRASE"


def _kdf(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(passphrase.encode())


def encrypt(signer: Signer, passphrase: str, n: int = SCRYPT_N) -> dict[str, Any]:
    if len(passphrase) < MIN_PASSPHRASE:
        raise Code3Error(Code.VALIDATION, f"the passphrase is shorter than {MIN_PASSPHRASE} characters",
                         "choose a longer passphrase: this file alone can spend the account's funds")
    public = public_key_of(signer.private_key_hex)
    salt = os.urandom(16)
    header = {"format": FORMAT, "name": signer.name, "address": address_of(public), "public_key": public.hex(),
              "kdf": {"name": "scrypt", "n": n, "r": SCRYPT_R, "p": SCRYPT_P, "salt": salt.hex()},
              "cipher": "aes-256-gcm"}
    nonce = os.urandom(12)
    key = _kdf(passphrase, salt, n, SCRYPT_R, SCRYPT_P)
    ciphertext = AESGCM(key).encrypt(nonce, bytes.fromhex(signer.private_key_hex), canonical_json(header).encode())
    return {**header, "nonce": nonce.hex(), "ciphertext": ciphertext.hex()}


def _bad_file(path: Path, why: str) -> Code3Error:
    return Code3Error(Code.VALIDATION, f"{path} is not a Code3 key export ({why})",
                      "pass a file written by `code3 account export`")


def decrypt(document: dict[str, Any], passphrase: str, path: Path) -> tuple[str, str]:
    """(name, private key hex) from an export; a wrong passphrase or a changed file is E_UNAUTHORIZED."""
    try:
        header = {k: document[k] for k in ("format", "name", "address", "public_key", "kdf", "cipher")}
        kdf = header["kdf"]
        salt, nonce = bytes.fromhex(kdf["salt"]), bytes.fromhex(document["nonce"])
        ciphertext = bytes.fromhex(document["ciphertext"])
        n, r, p = int(kdf["n"]), int(kdf["r"]), int(kdf["p"])
    except (KeyError, TypeError, ValueError) as exc:
        raise _bad_file(path, f"missing or malformed {exc}") from None
    if header["format"] != FORMAT or kdf.get("name") != "scrypt" or header["cipher"] != "aes-256-gcm":
        raise _bad_file(path, f"format {header['format']!r}, expected {FORMAT}")
    if not (2**14 <= n <= 2**20 and n & (n - 1) == 0 and 1 <= r <= 32 and 1 <= p <= 16):
        raise _bad_file(path, "KDF parameters out of range")
    try:
        key = _kdf(passphrase, salt, n, r, p)
        private = AESGCM(key).decrypt(nonce, ciphertext, canonical_json(header).encode())
    except (InvalidTag, ValueError):
        raise Code3Error(Code.UNAUTHORIZED, f"cannot decrypt {path}: wrong passphrase, or the file was changed",
                         f"check the passphrase ({PASSPHRASE_ENV} or the prompt)") from None
    private_hex = private.hex()
    if address_of(public_key_of(private_hex)) != header["address"]:
        raise _bad_file(path, "the key does not match its address")
    return str(header["name"]), private_hex


def export_key(keystore: Keystore, name: str, out: Path, passphrase: str, n: int = SCRYPT_N) -> dict[str, str]:
    """Write `name`'s key, encrypted, to `out` (0600); an existing file is never replaced."""
    signer = keystore.load(name)
    document = encrypt(signer, passphrase, n)
    if out.is_dir():
        raise Code3Error(Code.VALIDATION, f"{out} is a directory", "pass the file to write, e.g. alice.code3key")
    if not out.parent.is_dir():
        raise Code3Error(Code.NOT_FOUND, f"no directory {out.parent}", "create it first, or choose another path")
    if not write_private(out, (json.dumps(document, indent=2) + "\n").encode(), overwrite=False):
        raise Code3Error(Code.EXISTS, f"{out} already exists", "choose another file; an export never replaces one")
    return {"name": signer.name, "address": signer.address, "file": str(out)}


def read_export(path: Path) -> dict[str, Any]:
    try:
        if path.stat().st_size > MAX_FILE:
            raise _bad_file(path, "too large")
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise Code3Error(Code.NOT_FOUND, f"no file {path}", "pass the file written by `code3 account export`") \
            from None
    except IsADirectoryError:
        raise _bad_file(path, "a directory") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise _bad_file(path, type(exc).__name__) from None
    if not isinstance(document, dict):
        raise _bad_file(path, "not a JSON object")
    return document


def import_key(keystore: Keystore, path: Path, passphrase: str, name: str | None = None) -> dict[str, str]:
    """Add the exported key under `name` (default: its exported name); never overwrites an existing key."""
    document = read_export(path)
    exported_name, private_hex = decrypt(document, passphrase, path)
    name = name or exported_name
    keystore._path(name)  # validates the name before anything is written
    address = address_of(public_key_of(private_hex))
    holder = keystore.find_address(address)
    if holder is not None:
        raise Code3Error(Code.EXISTS, f"the key of {address} is already in the keystore as {holder!r}",
                         "nothing to import; use that name")
    signer = keystore.add(name, private_hex)
    return {"name": signer.name, "address": signer.address, "keystore": str(keystore.directory)}


def passphrase(confirm: bool, env: dict[str, str] | None = None,
               prompt: Callable[[str], str] | None = None, interactive: bool | None = None) -> str:
    """The passphrase from CODE3_PASSPHRASE, else asked on the terminal (twice when `confirm`)."""
    environ = os.environ if env is None else env
    if environ.get(PASSPHRASE_ENV):
        return environ[PASSPHRASE_ENV]
    if interactive is None:
        interactive = sys.stdin.isatty()
    if not interactive:
        raise Code3Error(Code.PRECONDITION, "no passphrase: CODE3_PASSPHRASE is not set and there is no terminal",
                         f"set {PASSPHRASE_ENV} in the environment (never pass a passphrase as an argument)")
    if prompt is None:
        import getpass

        prompt = getpass.getpass
    first = prompt("Passphrase: ")
    if confirm and prompt("Passphrase again: ") != first:
        raise Code3Error(Code.VALIDATION, "the two passphrases differ", "type the same passphrase twice")
    return first
