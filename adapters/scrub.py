"""Scrubbing of secrets from text that came from elsewhere (a GitHub error, git's stderr, a node's answer)
before it reaches a log line, an exception message or a tool answer.

Two nets: the exact secrets this process holds (the GitHub token and its Basic form, the keystore's
private keys), registered by the adapters that hold them; and patterns for anything that looks like a
credential (GitHub token prefixes, `Bearer …`/`token …`/`Basic …` authorizations, PEM private keys,
Aptos `ed25519-priv-0x…` keys, `"private_key": "…"` fields, passwords in URLs), with the token formats
the model-bound redaction knows (adapters/redact.py: AWS, Anthropic/OpenAI-style, Slack, Google, Stripe
keys, JWTs), so one set of patterns guards what is logged, stored and handed to a model.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

from adapters.redact import TOKEN_PATTERNS

REDACTED = "***"

_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.DOTALL),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{16,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{16,}"),
    re.compile(r"(?i)\b(?:bearer|token|basic)\s+[A-Za-z0-9._~+/=-]{16,}"),
    re.compile(r"(?i)\b(?:ed25519|secp256k1)-priv-(?:0x)?[0-9a-f]{32,}"),
    re.compile(r"(?i)(\"?(?:private_key|privatekey|secret|password|passphrase|token)\"?\s*[:=]\s*)"
               r"(\"[^\"]*\"|'[^']*'|[^\s,;}&]+)"),
    re.compile(r"(?i)(?<=://)[^/@\s:]+:[^/@\s]+(?=@)"),  # user:password@host
    *(pattern for _kind, pattern in TOKEN_PATTERNS),
]

_lock = threading.Lock()
_known: set[str] = set()


def register_secret(*values: str | bytes | None) -> None:
    """Remember exact secrets this process holds, so that they are scrubbed wherever they appear."""
    with _lock:
        for value in values:
            if isinstance(value, bytes):
                value = value.decode(errors="ignore")
            if value and len(value) >= 6:
                _known.add(value)


def _pattern_sub(match: re.Match[str]) -> str:
    if match.re.groups == 2:  # key = value: keep the key
        return match.group(1) + REDACTED
    return REDACTED


def scrub(text: Any, *extra: str | None) -> str:
    """`text` as a string with every registered or extra secret and every credential-looking string replaced."""
    out = text if isinstance(text, str) else str(text)
    with _lock:
        known = sorted(_known | {e for e in extra if e}, key=len, reverse=True)
    for secret in known:
        if secret in out:
            out = out.replace(secret, REDACTED)
    for pattern in _PATTERNS:
        out = pattern.sub(_pattern_sub, out)
    return out


def bears_credential(text: str) -> bool:
    """Whether `text` holds a registered secret or anything credential-shaped (what `scrub` would replace)."""
    return scrub(text) != text


def scrubbed_error(exc: Any) -> Any:
    """A Code3Error with its message and hint scrubbed (the same object when there was nothing to scrub)."""
    message, hint = scrub(exc.message), scrub(exc.hint)
    if message == exc.message and hint == exc.hint:
        return exc
    return type(exc)(exc.code, message, hint)


class ScrubFilter(logging.Filter):
    """A logging filter that scrubs the formatted message (and the exception text) of every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        cleaned = scrub(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            said = str(exc)
            if scrub(said) != said:
                record.exc_text = f"{type(exc).__name__}: {scrub(said)} (traceback withheld: it held a secret)"
                record.exc_info = None
        return True
