"""Secrets redaction for source text sent to a model (`deep` mode adds function bodies).

Three nets, in order: known token formats (GitHub, AWS, Anthropic/OpenAI-style keys, Slack, Google,
Stripe, JWTs), PEM private-key blocks, secret-named assignments (`password = "…"`), and random-looking
string literals: 20+ characters from a token alphabet, not words and numbers joined (identifiers, model
ids, versions), mostly not made of word-like runs, with digits or mixed case and a Shannon entropy of at
least 3.5 bits per character; hex runs of 32+ always. Each match is replaced by `[REDACTED:<kind>]`; the
answer says how many of each kind were redacted, never what they were.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

TOKEN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private-key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE "
                               r"KEY-----|\Z)", re.DOTALL)),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("stripe-key", re.compile(r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}\b")),
    # begins a run of token characters: `\beyJ` also began after each `-`, so `eyJ-eyJ-…` rescanned the run from
    # each (100 KB: 4 s); a token glued to a word by a hyphen is left to the other checks
    ("jwt", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}")),
    ("aws-secret-key", re.compile(r"(?i)(?<=aws_secret_access_key)(\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{40}")),
)
_QUOTED = re.compile(r"([\"'`])([A-Za-z0-9+/=_\-.~]{20,})\1")
# a whole word naming a secret: checked by a lookahead, then taken whole without backtracking (`\w*kw\w*` tried
# every split of a word such as `secretsecret…`: 120 KB took 41 s)
_SECRET_ASSIGN = re.compile(r"(?i)\b(?=\w*?(?:secret|token|passw(?:or)?d|api_?key|private_?key|auth))(\w++)"
                            r"(\s*[:=]\s*)([\"'])([^\"'\n]{8,})\3")
ENTROPY_THRESHOLD = 4.0
# What any pattern above needs somewhere in the text (a superset): a token format's anchor, a secret's name
# with a quote (secret-named assignments assign a quoted value), or a quote opening a run of 20 token
# characters. A text without any has nothing to redact, found with substring checks on the casefolded text
# instead of twelve substitutions (skeletons redact every signature and doc comment of a tree). A new pattern
# adds its anchor here; tests/unit/test_redact_prefilter.py checks the answers are the same with and without.
_ANCHORS = ("-----begin", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "akia", "asia", "abia", "acca",
            "sk-", "xox", "aiza", "k_live_", "k_test_", "eyj", "aws_secret_access_key")
_NAMES = ("secret", "token", "passw", "apikey", "api_key", "privatekey", "private_key", "auth")
_QUOTED_RUN = re.compile(r"[\"'`][A-Za-z0-9+/=_\-.~]{20}")


def might_hold_secret(text: str) -> bool:
    lowered = text.casefold()  # as (?i) matches: the long s is an s, the Kelvin sign a k
    if any(anchor in lowered for anchor in _ANCHORS):
        return True
    quoted = '"' in text or "'" in text
    return (quoted and any(name in lowered for name in _NAMES)) or _QUOTED_RUN.search(text) is not None


def shannon_entropy(text: str) -> float:
    if not text:
        return 0.0
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


_WORD = re.compile(r"[A-Z]?[a-z]{2,}|[A-Z]{2,}(?![a-z])")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_PLAIN = re.compile(r"[a-z]+\d*|\d+[a-z]{0,2}|[A-Z]?[a-z]+")


def word_coverage(value: str) -> float:
    """The share of `value` made of word-like runs (3+ letters with a vowel): high for identifiers such as
    `LinkedOrganizationSpendLimitReachedError` or `cache_creation.input_tokens`, low for random tokens."""
    covered = sum(len(w) for w in _WORD.findall(value) if len(w) >= 3 and _VOWEL.search(w))
    return covered / len(value) if value else 0.0


def _looks_random(value: str) -> bool:
    if len(value) < 20 or " " in value:
        return False
    if re.fullmatch(r"[0-9a-f]{32,}|[0-9A-F]{32,}", value):
        return True  # a hex digest or key
    if all(_PLAIN.fullmatch(part) for part in re.split(r"[-_.]", value) if part):
        return False  # words and numbers joined: a model id, a version, a date-stamped name
    mixed = bool(re.search(r"\d", value)) or (bool(re.search(r"[a-z]", value)) and bool(re.search(r"[A-Z]", value)))
    return mixed and word_coverage(value) < 0.5 and shannon_entropy(value) >= 3.5


@dataclass
class Redaction:
    text: str
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def redact(text: str) -> Redaction:
    """`text` with secrets replaced by `[REDACTED:<kind>]`, and the count of each kind."""
    counts: Counter[str] = Counter()
    if not might_hold_secret(text):
        return Redaction(text, counts)
    for kind, pattern in TOKEN_PATTERNS:
        def sub(match: re.Match[str], kind: str = kind) -> str:
            counts[kind] += 1
            if kind == "aws-secret-key":
                return f"{match.group(1)}[REDACTED:{kind}]"
            return f"[REDACTED:{kind}]"

        text = pattern.sub(sub, text)

    def assigned(match: re.Match[str]) -> str:
        value = match.group(4)
        if value.startswith("[REDACTED:") or not _looks_secret_value(value):
            return match.group(0)
        counts["secret-assignment"] += 1
        return f"{match.group(1)}{match.group(2)}{match.group(3)}[REDACTED:secret-assignment]{match.group(3)}"

    text = _SECRET_ASSIGN.sub(assigned, text)

    def quoted(match: re.Match[str]) -> str:
        if not _looks_random(match.group(2)):
            return match.group(0)
        counts["high-entropy"] += 1
        return f"{match.group(1)}[REDACTED:high-entropy]{match.group(1)}"

    text = _QUOTED.sub(quoted, text)
    return Redaction(text, counts)


def _looks_secret_value(value: str) -> bool:
    """A value assigned to a secret-sounding name: anything but placeholders and environment look-ups."""
    lowered = value.lower()
    if any(word in lowered for word in ("example", "changeme", "xxx", "your_", "<", "${", "os.environ", "getenv")):
        return False
    return len(value) >= 8 and not value.isalpha()
