"""What the contract's entry functions accept: a value outside its Move type cannot even be encoded, and one
inside it but outside the contract's bounds aborts with the code the chain returns. The adapters run the same
checks before signing, so a call that would abort is refused without a transaction."""

from __future__ import annotations

import re
from typing import Any

from domain.bounties.contract_terms import (
    COMMIT_SHA_DIGITS,
    ISSUE_HASH_DIGITS,
    MAX_COOLING_PERIOD,
    MAX_DEADLINE_AHEAD,
    MAX_DISPUTE_PERIOD,
    MAX_HOLD_SECONDS,
    MAX_PR_URL_BYTES,
    MAX_REASON_BYTES,
    MAX_REPO_BYTES,
    MAX_SHARE,
    MAX_SPLIT,
    U64_MAX,
    Abort,
    ContractAbort,
    Mode,
)
from domain.errors import Code, Code3Error

_HEX = re.compile(r"[0-9a-f]*")


# --- what a transaction can carry: a value outside its Move type cannot even be encoded -------------

def u64_arg(name: str, value: Any) -> int:
    """An integer argument as the chain's u64 (amounts, deadlines, durations); refused before signing."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U64_MAX:
        raise Code3Error(Code.VALIDATION, f"{name} {value!r} does not fit the contract's u64 (0 to {U64_MAX})",
                         f"pass {name} as a whole number in that range")
    return value


def mode_arg(mode: str | int) -> int:
    """`"exclusive"`/`"contest"` (or the chain's u8) as the u8 create_bounty takes."""
    if isinstance(mode, str):
        if mode.upper() in Mode.__members__:
            return int(Mode[mode.upper()])
    elif not isinstance(mode, bool) and isinstance(mode, int) and 0 <= mode <= 255:
        return mode
    raise Code3Error(Code.VALIDATION, f"unknown bounty mode {mode!r}", "use exclusive or contest")


def parse_mode(value: int) -> Mode:
    """The chain's u8; anything but 0 or 1 is INVALID_MODE."""
    if isinstance(value, bool) or int(value) not in Mode._value2member_map_:
        raise ContractAbort(Abort.INVALID_MODE)
    return Mode(int(value))


# --- argument checks, shared with the adapters (which refuse before signing what would abort) ---------

def check_repo(repo: str) -> None:
    if not 0 < len(repo.encode()) <= MAX_REPO_BYTES:
        raise ContractAbort(Abort.INVALID_REPO)


def check_issue_hash(issue_hash: str) -> None:
    if len(issue_hash) != ISSUE_HASH_DIGITS or not _HEX.fullmatch(issue_hash):
        raise ContractAbort(Abort.INVALID_ISSUE_HASH)


def check_pr_url(pr_url: str) -> None:
    if not 0 < len(pr_url.encode()) <= MAX_PR_URL_BYTES:
        raise ContractAbort(Abort.INVALID_PR_URL)


def check_commit_sha(commit_sha: str) -> None:
    if len(commit_sha) not in COMMIT_SHA_DIGITS or not _HEX.fullmatch(commit_sha):
        raise ContractAbort(Abort.INVALID_COMMIT_SHA)


def check_cooling_period(seconds: int) -> None:
    if not 0 < seconds <= MAX_COOLING_PERIOD:
        raise ContractAbort(Abort.INVALID_COOLING_PERIOD)


def check_dispute_period(seconds: int) -> None:
    if not 0 < seconds <= MAX_DISPUTE_PERIOD:
        raise ContractAbort(Abort.INVALID_DISPUTE_PERIOD)


def check_reason(reason: str) -> None:
    if not 0 < len(reason.encode()) <= MAX_REASON_BYTES:
        raise ContractAbort(Abort.INVALID_REASON)


def check_terms(deadline: int, mode: int, hold_seconds: int, now: int) -> Mode:
    if not now < deadline <= now + MAX_DEADLINE_AHEAD:
        raise ContractAbort(Abort.INVALID_DEADLINE)
    chosen = parse_mode(mode)
    limit = (1, MAX_HOLD_SECONDS) if chosen is Mode.EXCLUSIVE else (0, 0)
    if not limit[0] <= hold_seconds <= limit[1]:
        raise ContractAbort(Abort.INVALID_HOLD)
    return chosen


def check_split(recipients: list[str], shares: list[int]) -> None:
    if not 0 < len(recipients) <= MAX_SPLIT or len(shares) != len(recipients):
        raise ContractAbort(Abort.INVALID_SPLIT)
    if len(set(recipients)) != len(recipients) or any(not 0 < share <= MAX_SHARE for share in shares):
        raise ContractAbort(Abort.INVALID_SPLIT)
