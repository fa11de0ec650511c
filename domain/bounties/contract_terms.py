"""The contract's vocabulary: bounds, statuses, modes, submission states, rejection reasons and abort codes.

Every number here is also a constant of the Move module (`move/sources/bounty.move`) and of its ABI file
(`adapters/aptos_abi.json`); tests/unit/test_move_abi.py keeps the three equal. The package is immutable, so
from its first publish on these numbers are fixed: a change is a new package at a new address.
"""

from __future__ import annotations

from enum import IntEnum

from domain.errors import Code

U64_MAX = 2**64 - 1
DAY = 86_400
DEFAULT_COOLING_PERIOD = 7 * DAY  # seconds: seven days, as in the Code3 design
MAX_COOLING_PERIOD = 90 * DAY  # bounded at initialize and by set_cooling_period (and > 0)
DEFAULT_DISPUTE_PERIOD = 7 * DAY  # an unruled dispute during cooling pays the winner after this
MAX_DISPUTE_PERIOD = 90 * DAY
REFUND_GRACE = 7 * DAY  # after the deadline (or a PR closed unmerged), a worker's time to dispute before a refund
DEFAULT_DEADLINE = 30 * DAY  # what a publish that names no deadline gets
MAX_DEADLINE_AHEAD = 365 * DAY  # a deadline lies in (now, now + this]
MAX_HOLD_SECONDS = 30 * DAY  # exclusive: 0 < hold_seconds <= this; contest: hold_seconds == 0
MAX_SUBMISSIONS = 64  # submissions kept per bounty (live or closed); junk is rejected and frees its place
MAX_SPLIT = 10  # recipients of one payout
MAX_SHARE = 1_000_000  # one recipient's share of a split (shares are relative: 60 and 40, or 3 and 2)
BPS = 10_000  # a ruling's share for the claimant, in basis points (10 000: the whole pool)
MAX_REPO_BYTES = 140
MAX_PR_URL_BYTES = 300
MAX_REASON_BYTES = 500
MAX_LOGIN_BYTES = 39  # GitHub's longest login
MAX_PAGE = 100  # ids or bounties one paged view returns at most
ISSUE_HASH_DIGITS = 64  # sha256, lowercase hex
COMMIT_SHA_DIGITS = (40, 64)  # git's sha1 or sha256 object ids, lowercase hex
LINK_PREFIX = b"CODE3::LINK::v1::"  # what an account signs to be linked to a forge account (see domain.bounties.links)


class Status(IntEnum):
    OPEN = 0
    STARTED = 1
    PR_SUBMITTED = 2
    MERGED = 3
    COOLING_DOWN = 4
    PAID = 5
    CANCELLED = 6

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Status.OPEN: "open",
    Status.STARTED: "in-progress",
    Status.PR_SUBMITTED: "in-progress",
    Status.MERGED: "merged",
    Status.COOLING_DOWN: "cooling",
    Status.PAID: "paid",
    Status.CANCELLED: "cancelled",
}
DISPUTED_LABEL = "disputed"  # shown beside the state label while a dispute is open
STATUS_LABELS = frozenset({*_LABELS.values(), DISPUTED_LABEL})


class Mode(IntEnum):
    """How workers take a bounty, chosen at publish (u8 on chain)."""

    EXCLUSIVE = 0  # the first accepted worker holds the task for `hold_seconds`; others are refused meanwhile
    CONTEST = 1  # any number of workers; the first merged PR of a linked author wins

    @property
    def label(self) -> str:
        return self.name.lower()


class SubmissionState(IntEnum):
    LIVE = 0  # the PR counts: it may merge, and a refund waits for it
    CLOSED = 1  # the resolver saw it closed unmerged: its worker may dispute during the grace that follows


class Rejection(IntEnum):
    """Why the resolver rejected a submission, having looked at the forge (u8 on chain)."""

    NOT_IN_REPO = 1  # no such PR in the bounty's repository (another repository, a fork, junk)
    WRONG_BASE = 2  # the PR targets another branch than the repository's default branch
    NOT_AUTHOR = 3  # the PR's author is linked to another address than the submitter's
    CLOSED = 4  # closed without merging (kept, as CLOSED: its worker may dispute)
    SETTLED_ELSEWHERE = 5  # merged, and already settled another bounty

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", "-")


class Abort(IntEnum):
    """Move abort codes of `code3::bounty` v2, each mapped to the error code a client sees."""

    BOUNTY_NOT_FOUND = 1
    INVALID_STATE = 2
    NOT_SPONSOR = 3
    NOT_RESOLVER = 4
    COOLING = 5
    NOT_ACCEPTED = 6
    ISSUE_HASH_EXISTS = 7
    INSUFFICIENT_BALANCE = 8
    INVALID_AMOUNT = 9
    PR_NOT_SUBMITTED = 10
    SPONSOR_CANNOT_ACCEPT = 11
    PR_ALREADY_SUBMITTED = 12
    NOT_ADMIN = 13
    NOT_LINKED = 14
    HELD_BY_OTHER = 15
    HOLD_EXPIRED = 16
    PR_ALREADY_SETTLED = 17
    DEADLINE_NOT_REACHED = 18
    DISPUTE_WINDOW_CLOSED = 19
    TOO_MANY_SUBMISSIONS = 20
    INVALID_DEADLINE = 21
    INVALID_MODE = 22
    INVALID_HOLD = 23
    INVALID_COOLING_PERIOD = 24
    INVALID_REPO = 25
    INVALID_ISSUE_HASH = 26
    INVALID_PR_URL = 27
    INVALID_COMMIT_SHA = 28
    SUBMISSION_LIVE = 29
    DISPUTED = 30
    NO_DISPUTE = 31
    INVALID_REASON = 32
    INVALID_SHARE = 33
    NONCE_USED = 34
    NO_REFUND = 35
    INVALID_SPLIT = 36
    INVALID_SIGNATURE = 37
    INVALID_LINK = 38
    WRONG_REPO = 39
    CLOSED_RECENTLY = 40
    NOT_WINNER = 41
    INVALID_DISPUTE_PERIOD = 42


ABORT_CODES: dict[Abort, tuple[Code, str]] = {
    Abort.BOUNTY_NOT_FOUND: (Code.NOT_FOUND, "no bounty with that id on chain"),
    Abort.INVALID_STATE: (Code.INVALID_STATE, "the bounty is not in a state that allows this"),
    Abort.NOT_SPONSOR: (Code.UNAUTHORIZED, "only the bounty's sponsor may do this"),
    Abort.NOT_RESOLVER: (Code.UNAUTHORIZED, "only the bounty's resolver may do this"),
    Abort.COOLING: (Code.COOLING, "the cooling period has not ended"),
    Abort.NOT_ACCEPTED: (Code.INVALID_STATE, "the worker has not accepted this bounty"),
    Abort.ISSUE_HASH_EXISTS: (Code.EXISTS, "this sponsor already has a bounty for this issue hash"),
    # seed 001 answers balance problems with E_CHAIN_TX_FAILED ("重试/检查 Gas/余额/网络")
    Abort.INSUFFICIENT_BALANCE: (Code.CHAIN_TX_FAILED, "the balance cannot cover the amount"),
    Abort.INVALID_AMOUNT: (Code.VALIDATION, "the amount must be a positive integer"),
    Abort.PR_NOT_SUBMITTED: (Code.NOT_FOUND, "no live submission of that PR by that worker for this bounty"),
    Abort.SPONSOR_CANNOT_ACCEPT: (Code.UNAUTHORIZED, "a sponsor cannot accept their own bounty"),
    Abort.PR_ALREADY_SUBMITTED: (Code.IDEMPOTENT_REJECTED, "this worker already submitted another PR"),
    Abort.NOT_ADMIN: (Code.UNAUTHORIZED, "only the contract's admin may do this"),
    Abort.NOT_LINKED: (Code.PRECONDITION, "the account is not linked to a forge account under this bounty's "
                                          "resolver"),
    Abort.HELD_BY_OTHER: (Code.INVALID_STATE, "another worker holds this task"),
    Abort.HOLD_EXPIRED: (Code.INVALID_STATE, "the worker's hold on this task has expired"),
    Abort.PR_ALREADY_SETTLED: (Code.IDEMPOTENT_REJECTED, "this merged PR already settled another bounty"),
    Abort.DEADLINE_NOT_REACHED: (Code.PRECONDITION, "a PR was submitted: the bounty can be cancelled only after "
                                                    "its deadline"),
    Abort.DISPUTE_WINDOW_CLOSED: (Code.PRECONDITION, "the time for this dispute or ruling is over"),
    Abort.TOO_MANY_SUBMISSIONS: (Code.INVALID_STATE, f"the bounty already has {MAX_SUBMISSIONS} submissions"),
    Abort.INVALID_DEADLINE: (Code.VALIDATION, f"the deadline must lie after now and at most "
                                              f"{MAX_DEADLINE_AHEAD // DAY} days ahead"),
    Abort.INVALID_MODE: (Code.VALIDATION, "the mode must be exclusive (0) or contest (1)"),
    Abort.INVALID_HOLD: (Code.VALIDATION, f"an exclusive bounty holds a task for 1 s to {MAX_HOLD_SECONDS // DAY} "
                                          "days; a contest takes no hold time"),
    Abort.INVALID_COOLING_PERIOD: (Code.VALIDATION, f"the cooling period must be 1 s to {MAX_COOLING_PERIOD // DAY} "
                                                    "days"),
    Abort.INVALID_REPO: (Code.VALIDATION, f"the repository must be 1 to {MAX_REPO_BYTES} bytes"),
    Abort.INVALID_ISSUE_HASH: (Code.VALIDATION, f"the issue hash must be {ISSUE_HASH_DIGITS} lowercase hex digits"),
    Abort.INVALID_PR_URL: (Code.VALIDATION, f"the PR must be 1 to {MAX_PR_URL_BYTES} bytes of URL and a number "
                                            "above 0"),
    Abort.INVALID_COMMIT_SHA: (Code.VALIDATION, "the commit must be a full 40- or 64-digit lowercase hex id"),
    Abort.SUBMISSION_LIVE: (Code.PRECONDITION, "a submitted PR is still live: the refund waits until the resolver "
                                               "has seen it closed unmerged, or until the deadline's grace ends"),
    Abort.DISPUTED: (Code.PRECONDITION, "a dispute is open on this bounty"),
    Abort.NO_DISPUTE: (Code.INVALID_STATE, "no dispute is open on this bounty"),
    Abort.INVALID_REASON: (Code.VALIDATION, f"a reason must be 1 to {MAX_REASON_BYTES} bytes (a rejection: 1 to 5)"),
    Abort.INVALID_SHARE: (Code.VALIDATION, f"a ruling's share is 0 to {BPS} basis points"),
    Abort.NONCE_USED: (Code.IDEMPOTENT_REJECTED, "this nonce was used already by this account"),
    Abort.NO_REFUND: (Code.INVALID_STATE, "nothing to withdraw: no refund, or this funder's share was withdrawn"),
    Abort.INVALID_SPLIT: (Code.VALIDATION, f"a split names 1 to {MAX_SPLIT} different recipients, each with a share "
                                           f"of 1 to {MAX_SHARE}"),
    Abort.INVALID_SIGNATURE: (Code.UNAUTHORIZED, "the link statement is not signed by the account's key"),
    Abort.INVALID_LINK: (Code.VALIDATION, f"a link names a forge user id above 0 and a login of 1 to "
                                          f"{MAX_LOGIN_BYTES} bytes"),
    Abort.WRONG_REPO: (Code.PRECONDITION, "the PR is not in the bounty's repository"),
    Abort.CLOSED_RECENTLY: (Code.PRECONDITION, "a submitted PR was closed unmerged recently: its worker may dispute "
                                               "until the grace after its closing ends"),
    Abort.NOT_WINNER: (Code.UNAUTHORIZED, "only the bounty's winner may do this"),
    Abort.INVALID_DISPUTE_PERIOD: (Code.VALIDATION, f"the dispute period must be 1 s to {MAX_DISPUTE_PERIOD // DAY} "
                                                    "days"),
}


class ContractAbort(Exception):
    def __init__(self, abort: Abort) -> None:
        super().__init__(f"Move abort {int(abort)} ({abort.name})")
        self.abort = abort
