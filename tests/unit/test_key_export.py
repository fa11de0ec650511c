"""`code3 account export|import`: a key that holds funds as a passphrase-encrypted file (scrypt + AES-GCM).
Through the CLI in a subprocess: tests/integration/test_key_export.py."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from adapters import key_export
from adapters.keystore import Keystore
from domain.errors import Code3Error

FAST = 2**14  # the tests' scrypt cost; the file records it, so import reads it back
PASS = "correct horse battery staple"


@pytest.fixture
def keys(tmp_path: Path) -> Keystore:
    keystore = Keystore(tmp_path / "a" / "keys")
    keystore.new("alice")
    return keystore


def test_export_then_import_elsewhere_gives_the_same_key(keys: Keystore, tmp_path: Path) -> None:
    out = tmp_path / "alice.code3key"
    answer = key_export.export_key(keys, "alice", out, PASS, n=FAST)
    assert answer["address"] == keys.load("alice").address
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    text = out.read_text()
    assert keys.load("alice").private_key_hex not in text, "the file holds the key encrypted only"
    assert json.loads(text)["kdf"]["name"] == "scrypt"

    other = Keystore(tmp_path / "b" / "keys")
    imported = key_export.import_key(other, out, PASS)
    assert imported["name"] == "alice" and imported["address"] == answer["address"]
    assert other.load("alice") == keys.load("alice")
    renamed = Keystore(tmp_path / "c" / "keys")
    assert key_export.import_key(renamed, out, PASS, name="savings")["name"] == "savings"
    assert renamed.load("savings").private_key_hex == keys.load("alice").private_key_hex


def test_a_wrong_passphrase_or_a_changed_file_is_a_clear_error(keys: Keystore, tmp_path: Path) -> None:
    out = tmp_path / "alice.code3key"
    key_export.export_key(keys, "alice", out, PASS, n=FAST)
    other = Keystore(tmp_path / "b" / "keys")
    with pytest.raises(Code3Error) as wrong:
        key_export.import_key(other, out, "not the passphrase")
    assert wrong.value.code.value == "E_UNAUTHORIZED" and "wrong passphrase" in wrong.value.message
    document = json.loads(out.read_text())
    document["address"] = "0x" + "00" * 32  # the header is authenticated
    out.write_text(json.dumps(document))
    with pytest.raises(Code3Error) as changed:
        key_export.import_key(other, out, PASS)
    assert changed.value.code.value == "E_UNAUTHORIZED"
    assert other.names() == [], "nothing imported"


def test_an_import_never_overwrites_a_key(keys: Keystore, tmp_path: Path) -> None:
    out = tmp_path / "alice.code3key"
    key_export.export_key(keys, "alice", out, PASS, n=FAST)
    other = Keystore(tmp_path / "b" / "keys")
    other.new("alice")
    before = (other.directory / "alice.key").read_bytes()
    with pytest.raises(Code3Error) as taken:
        key_export.import_key(other, out, PASS)
    assert taken.value.code.value == "E_EXISTS"
    assert (other.directory / "alice.key").read_bytes() == before
    with pytest.raises(Code3Error) as duplicate:
        key_export.import_key(keys, out, PASS, name="again")
    assert duplicate.value.code.value == "E_EXISTS" and "already in the keystore as 'alice'" in duplicate.value.message


def test_an_export_never_replaces_a_file_and_needs_a_real_passphrase(keys: Keystore, tmp_path: Path) -> None:
    out = tmp_path / "precious.txt"
    out.write_text("keep me")
    with pytest.raises(Code3Error) as exists:
        key_export.export_key(keys, "alice", out, PASS, n=FAST)
    assert exists.value.code.value == "E_EXISTS" and out.read_text() == "keep me"
    with pytest.raises(Code3Error) as short:
        key_export.export_key(keys, "alice", tmp_path / "k", "short", n=FAST)
    assert short.value.code.value == "E_VALIDATION" and not (tmp_path / "k").exists()


def test_the_passphrase_comes_from_the_environment_or_a_prompt_never_an_argument() -> None:
    assert key_export.passphrase(False, env={"CODE3_PASSPHRASE": PASS}) == PASS
    with pytest.raises(Code3Error) as none:
        key_export.passphrase(False, env={}, interactive=False)
    assert none.value.code.value == "E_PRECONDITION" and "CODE3_PASSPHRASE" in none.value.hint
    answers = iter([PASS, PASS])
    assert key_export.passphrase(True, env={}, interactive=True, prompt=lambda _: next(answers)) == PASS
    answers = iter([PASS, "typo"])
    with pytest.raises(Code3Error):
        key_export.passphrase(True, env={}, interactive=True, prompt=lambda _: next(answers))
