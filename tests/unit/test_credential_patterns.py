"""One set of credential patterns (adapters/scrub.py with adapters/redact.py's token formats) for what Code3
logs, stores and hands a model; `bears_credential` is what the ai-loom sealer asks (issue 18, class 6)."""

from __future__ import annotations

import pytest

from adapters.redact import redact
from adapters.scrub import bears_credential, scrub
from adapters.sealing import CredentialSealer

GITHUB = "ghp_" + "Zq7XcV2bN4mK8pL1rT6yW3sD9fG5hJ0aQeRt"
CREDENTIALS = [f"GITHUB_TOKEN = '{GITHUB}'", f"token: {GITHUB}", "AWS_KEY=AKIAQWERTYUIOPASDFGH",
               "key sk-ant-api03-abcdefghijklmnopqrstuv", "https://bob:hunter22@example.com/x",
               "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----"]
PLAIN = ["def total(items):", "    return sum(i.price for i in items)", "TIMEOUT = 30", "see the token docs"]


@pytest.mark.parametrize("text", CREDENTIALS)
def test_credentials_are_found_and_scrubbed(text: str) -> None:
    assert bears_credential(text)
    cleaned = scrub(text)
    assert GITHUB not in cleaned and "AKIAQWERTYUIOPASDFGH" not in cleaned and "hunter22" not in cleaned
    assert "abcdefghijklmnopqrstuv" not in cleaned and "b3Blbn" not in cleaned


@pytest.mark.parametrize("text", PLAIN)
def test_ordinary_code_bears_none(text: str) -> None:
    assert not bears_credential(text) and scrub(text) == text


def test_the_model_bound_redaction_and_the_sealer_agree_on_token_formats() -> None:
    class Box:
        def seal(self, plaintext: str) -> str:
            return plaintext[::-1]

        def open(self, sealed: str) -> str:
            return sealed[::-1]

    sealer = CredentialSealer(Box())
    for text in (f"x = '{GITHUB}'", "id = 'AKIAQWERTYUIOPASDFGH'"):
        assert sealer.must_seal(text) and redact(text).total == 1
    assert sealer.open(sealer.seal("x")) == "x" and not sealer.must_seal("x = 1")
