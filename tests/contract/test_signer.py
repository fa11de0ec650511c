"""The Signer port against its implementations: a key as the keystore holds it (`Key`) and the acting identity
loaded on first use (`LazySigner`, code3.wiring). Both name the account, give the address its private key
derives, and never show the private key in their repr (a log line or an error message may print one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from adapters.keystore import Keystore, address_of
from adapters.ports import Signer
from code3.settings import Settings
from code3.wiring import LazySigner
from tests.contract.registry import covers


@pytest.fixture(params=["key", "lazy"])
def signer(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("CODE3_HOME", str(tmp_path / "home"))
    settings = Settings(project=tmp_path, identity="alice")
    key = Keystore(settings.keystore_dir).new("alice")
    return key if request.param == "key" else LazySigner(settings)


@covers(Signer, "name", "address", "private_key_hex")
def test_a_signer_names_its_account_and_the_address_its_key_derives(signer: Any) -> None:
    assert signer.name == "alice"
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(signer.private_key_hex))
    assert signer.address == address_of(private.public_key().public_bytes_raw())
    assert signer.private_key_hex not in repr(signer)
