"""redact()'s one-search prefilter never changes what is redacted: on texts holding every kind of secret the
patterns know, pieces of them, and ordinary code, the answer is the same as without the prefilter."""

from __future__ import annotations

import random

import pytest

from adapters import redact as redaction

PIECES = [
    "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzAB",
    "AKIA" + "Z7QW3RTY5UIO1PAS", "ASIA" + "Z7QW3RTY5UIO1PAS", "sk-ant-api03-" + "Xy7_Qw3-Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1",
    "sk-proj-" + "Xy7Qw3Er5Ty7Ui9Op1As3Df5", "xoxb-" + "123456789012-1234567890123-AbCdEf", "AIza" + "Sy" + "A" * 33,
    "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "rk_test_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36P",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJ\n-----END RSA PRIVATE KEY-----",
    "AWS_SECRET_ACCESS_KEY = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYab",
    'db_password = "hunter2-prod!"', 'Token: "abcdefgh1234"', 'myAuthHeader = "Zq8Lw2Nv5Rt9"',
    '"Zq8Lw2Nv5Rt9Xk3Hb7Jm1Pc4Fg6Ds0Ay"', "'0123456789abcdef0123456789abcdef'", "`Zq8Lw2Nv5Rt9Xk3Hb7Jm1Pc4Fg`",
    '\u017fecret = "hunter2-prod!"', 'private_\u212aey = "hunter2-prod!"',  # (?i): the long s, the Kelvin sign
    "my_token = abcdefgh12345", "authToken: string",
    "def f(x: int) -> int:", "class Shape:", '"""A doc comment."""', "return x + 1", "import os", "// note",
    '"src/components/user_profile_card.tsx"', "claude-sonnet-4-5-20250929", "-----", "gh", "sk", "eyJ", "xo",
]


def unfiltered(text: str, monkeypatch: pytest.MonkeyPatch) -> redaction.Redaction:
    with monkeypatch.context() as patched:
        patched.setattr(redaction, "might_hold_secret", lambda text: True)  # every text goes through the nets
        return redaction.redact(text)


@pytest.mark.parametrize("piece", PIECES)
def test_each_piece_redacts_the_same_with_and_without_the_prefilter(piece: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for text in (piece, f"x = {piece}\n", f"value: {piece!r}"):
        expected = unfiltered(text, monkeypatch)
        got = redaction.redact(text)
        assert (got.text, got.counts) == (expected.text, expected.counts), text


def test_random_mixtures_redact_the_same_and_plain_code_is_passed_by(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(19)
    redacted = 0
    for _ in range(400):
        text = rng.choice([" ", "\n", " = ", ", "]).join(rng.choice(PIECES) for _ in range(rng.randint(1, 6)))
        expected = unfiltered(text, monkeypatch)
        got = redaction.redact(text)
        assert (got.text, got.counts) == (expected.text, expected.counts), text
        redacted += bool(got.counts)
    assert redacted > 50  # the mixtures did hold secrets
    assert not redaction.might_hold_secret("def render(name: str) -> str:\n    return f'hello {name}'\n")
