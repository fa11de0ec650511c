"""The bounty contract's rules (v2) as pure functions over a bounty's on-chain state.

The embedded ledger executes exactly these rules; the Move module (`move/sources/bounty.move`) encodes the same
ones, check for check and in the same order (so the same call aborts with the same code on both). Each rule
either mutates the state and returns the events the chain emits, or raises `ContractAbort` with the abort code
the chain would return. What a rule needs from the chain's tables (is this worker an entrant, is this PR settled,
which address is linked to that forge account, what did this funder put in) is passed in, as the Move module
reads it from its tables.

Who can move money, and when (docs/security.md says the same):
- the sponsor cancels before any PR, or when no submitted PR is live after the deadline; never after a merge;
- a submitted PR keeps the escrow until the resolver has seen it closed unmerged, and at most until
  `deadline + REFUND_GRACE` (no worker can freeze it longer);
- the resolver (fixed per bounty at its creation) reports a merge by naming the PR's repository id, number and
  author's forge id; the winner is the address linked to that forge account, and must have submitted that PR;
  one merged PR settles one bounty;
- during cooling the sponsor may dispute (with a reason); the resolver rules pay, refund or a split between the
  sponsor's side and the winner; an unruled dispute pays the winner after the bounty's dispute period;
- after cooling anyone triggers the payout, which goes to the winner (or the winner's split among linked
  accounts); a refund is withdrawn by each funder, their own share.
"""

from __future__ import annotations

from typing import Any

from domain.bounties.contract_args import (
    check_commit_sha,
    check_cooling_period,
    check_dispute_period,
    check_issue_hash,
    check_pr_url,
    check_reason,
    check_repo,
    check_split,
    check_terms,
)
from domain.bounties.contract_terms import (
    ABORT_CODES,
    BPS,
    DAY,
    DEFAULT_COOLING_PERIOD,
    DEFAULT_DEADLINE,
    DEFAULT_DISPUTE_PERIOD,
    DISPUTED_LABEL,
    MAX_COOLING_PERIOD,
    MAX_DEADLINE_AHEAD,
    MAX_DISPUTE_PERIOD,
    MAX_HOLD_SECONDS,
    MAX_LOGIN_BYTES,
    MAX_PAGE,
    MAX_SPLIT,
    MAX_SUBMISSIONS,
    REFUND_GRACE,
    STATUS_LABELS,
    U64_MAX,
    Abort,
    ContractAbort,
    Mode,
    Rejection,
    Status,
    SubmissionState,
)
from domain.bounties.state import (
    LIVE_STATES,
    BountyState,
    ChainConfig,
    Emitted,
    holds,
    live_workers,
    mirror_view,
    refund_share,
    split_amounts,
    state_label,
    status_after_accept,
    status_after_withdraw,
)

# the contract's public face: its terms (contract_terms), its state (state) and its rules (here), for the callers
# that speak of "the contract" as one thing
__all__ = [
    "ABORT_CODES",
    "BPS",
    "DAY",
    "DEFAULT_COOLING_PERIOD",
    "DEFAULT_DEADLINE",
    "DEFAULT_DISPUTE_PERIOD",
    "DISPUTED_LABEL",
    "LIVE_STATES",
    "MAX_COOLING_PERIOD",
    "MAX_DEADLINE_AHEAD",
    "MAX_DISPUTE_PERIOD",
    "MAX_HOLD_SECONDS",
    "MAX_PAGE",
    "MAX_SPLIT",
    "MAX_SUBMISSIONS",
    "REFUND_GRACE",
    "STATUS_LABELS",
    "U64_MAX",
    "Abort",
    "BountyState",
    "ChainConfig",
    "ContractAbort",
    "Emitted",
    "Mode",
    "Rejection",
    "Status",
    "SubmissionState",
    "live_workers",
    "mirror_view",
    "refund_share",
    "split_amounts",
    "state_label",
    "status_after_accept",
    "status_after_withdraw",
]

def _holds(state: BountyState, now: int) -> bool:
    return holds(state, now)


def _live(state: BountyState) -> bool:
    return any(s["state"] == SubmissionState.LIVE for s in state.submissions.values())


# --- the registry (admin) -------------------------------------------------------------------------

def initialize(cooling_period: int, dispute_period: int) -> None:
    """What `initialize` checks of its arguments (the publisher check is the chain's own)."""
    check_cooling_period(cooling_period)
    check_dispute_period(dispute_period)


def set_cooling_period(config: ChainConfig, signer: str, seconds: int) -> None:
    """For bounties created from now on; a bounty keeps the period it was created with."""
    if signer != config.admin:
        raise ContractAbort(Abort.NOT_ADMIN)
    check_cooling_period(seconds)
    config.cooling_period = seconds


def set_dispute_period(config: ChainConfig, signer: str, seconds: int) -> None:
    """For bounties created from now on."""
    if signer != config.admin:
        raise ContractAbort(Abort.NOT_ADMIN)
    check_dispute_period(seconds)
    config.dispute_period = seconds


def set_resolver(config: ChainConfig, signer: str, resolver: str) -> None:
    """For bounties created from now on: a bounty keeps the resolver it was created with (no arbiter is swapped
    in the middle of a dispute)."""
    if signer != config.admin:
        raise ContractAbort(Abort.NOT_ADMIN)
    config.resolver = resolver


# --- identity links -------------------------------------------------------------------------------

def link(signer: str, forge_user_id: int, login: str, account: str, proof_ok: bool) -> Emitted:
    """`signer` (a resolver) records that the forge account `forge_user_id` (shown as `login`) is `account`.
    `proof_ok`: the statement `domain.bounties.links.link_message(forge_user_id, account)` is signed by a key that
    authenticates `account` (checked by the chain itself, so no resolver links an address without its key).
    That the forge account published the statement is what the resolver checked on the forge. Links are kept
    per resolver: a bounty consults only its own resolver's."""
    if forge_user_id <= 0 or not 0 < len(login.encode()) <= MAX_LOGIN_BYTES:
        raise ContractAbort(Abort.INVALID_LINK)
    if not proof_ok:
        raise ContractAbort(Abort.INVALID_SIGNATURE)
    return [("AccountLinked", {"resolver": signer, "forge_user_id": forge_user_id, "login": login,
                               "account": account})]


# --- the bounty's rules ---------------------------------------------------------------------------

def create(state: BountyState, sponsor_balance: int, now: int, issue_hash_taken: bool) -> Emitted:
    """`issue_hash_taken`: this sponsor already has a bounty under this hash (hashes are keyed by sponsor, so
    nobody can squat another sponsor's hash). `repo_id` 0: the resolver compares the repository by the id the
    forge gives its name when a merge is reported."""
    check_repo(state.repo)
    check_issue_hash(state.issue_hash)
    if state.amount <= 0:
        raise ContractAbort(Abort.INVALID_AMOUNT)
    state.mode = check_terms(state.deadline, state.mode, state.hold_seconds, now)
    if issue_hash_taken:
        raise ContractAbort(Abort.ISSUE_HASH_EXISTS)
    if sponsor_balance < state.amount:
        raise ContractAbort(Abort.INSUFFICIENT_BALANCE)
    state.pool, state.funders = state.amount, 1
    return [("BountyCreated", {
        "bounty_id": state.bounty_id, "sponsor": state.sponsor, "resolver": state.resolver or "",
        "repo": state.repo, "repo_id": state.repo_id, "issue_hash": state.issue_hash, "asset": state.asset,
        "amount": state.amount, "cooling_period": state.cooling_period, "dispute_period": state.dispute_period,
        "created_at": state.created_at, "deadline": state.deadline, "mode": int(state.mode),
        "hold_seconds": state.hold_seconds,
    })]


def fund(state: BountyState, funder: str, amount: int, nonce_used: bool, balance: int, first: bool,
         nonce: int) -> Emitted:
    """Anyone adds to the pool before a merge; `nonce` (unique per funder) makes a re-signed transaction unable to
    fund twice; `first`: this funder had no contribution yet."""
    if amount <= 0:
        raise ContractAbort(Abort.INVALID_AMOUNT)
    if nonce_used:
        raise ContractAbort(Abort.NONCE_USED)
    if state.status not in LIVE_STATES:
        raise ContractAbort(Abort.INVALID_STATE)
    if balance < amount:
        raise ContractAbort(Abort.INSUFFICIENT_BALANCE)
    state.pool += amount
    if first:
        state.funders += 1
    return [("BountyFunded", {"bounty_id": state.bounty_id, "funder": funder, "amount": amount, "pool": state.pool,
                              "nonce": nonce})]


def accept(state: BountyState, worker: str, now: int, entered: bool) -> Emitted:
    """Exclusive: the worker becomes the holder unless another's hold runs (a running hold's holder accepting
    again changes nothing; an expired one renews it). Contest: the worker enters (`entered`: already in); no cap,
    so no crowd of throw-away accounts can lock an honest worker out."""
    if worker == state.sponsor:
        raise ContractAbort(Abort.SPONSOR_CANNOT_ACCEPT)
    exclusive = state.mode is Mode.EXCLUSIVE
    allowed = (Status.OPEN, Status.STARTED) if exclusive else LIVE_STATES
    if state.status not in allowed:
        raise ContractAbort(Abort.INVALID_STATE)
    hold_until = 0
    if exclusive:
        if _holds(state, now):
            if state.holder == worker:
                return []
            raise ContractAbort(Abort.HELD_BY_OTHER)
        hold_until = now + state.hold_seconds
        state.holder, state.hold_until, state.entrants = worker, hold_until, 1
    else:
        if entered:
            return []
        state.entrants += 1
    state.status = status_after_accept(state.status)
    return [("BountyAccepted", {"bounty_id": state.bounty_id, "worker": worker, "hold_until": hold_until})]


def withdraw(state: BountyState, worker: str, entered: bool) -> Emitted:
    """A worker gives the task back (exclusive: releases the hold; contest: leaves) while no PR of theirs is live."""
    if state.status not in (Status.STARTED, Status.PR_SUBMITTED):
        raise ContractAbort(Abort.INVALID_STATE)
    accepted = state.holder == worker if state.mode is Mode.EXCLUSIVE else entered
    if not accepted:
        raise ContractAbort(Abort.NOT_ACCEPTED)
    mine = state.submissions.get(worker)
    if mine is not None and mine["state"] == SubmissionState.LIVE:
        raise ContractAbort(Abort.INVALID_STATE)
    if state.mode is Mode.EXCLUSIVE:
        state.holder, state.hold_until = None, None
    state.entrants -= 1
    state.status = status_after_withdraw(state.status, state.entrants)
    return [("TaskWithdrawn", {"bounty_id": state.bounty_id, "worker": worker})]


def submit_pr(state: BountyState, worker: str, pr_url: str, commit_sha: str, now: int, entered: bool) -> Emitted:
    """One live PR per worker; several workers may name the same PR (only its linked author can win, so a
    front-runner locks nobody out); exclusive: the holder only, while the hold runs. The same PR again changes
    nothing; a worker whose PR was closed may submit another."""
    check_pr_url(pr_url)
    check_commit_sha(commit_sha)
    if state.status not in (Status.STARTED, Status.PR_SUBMITTED):
        raise ContractAbort(Abort.INVALID_STATE)
    previous = state.submissions.get(worker)
    if previous is not None and previous["state"] == SubmissionState.LIVE:
        if previous["pr_url"] == pr_url:
            return []
        raise ContractAbort(Abort.PR_ALREADY_SUBMITTED)
    accepted = state.holder == worker if state.mode is Mode.EXCLUSIVE else entered
    if not accepted:
        raise ContractAbort(Abort.NOT_ACCEPTED)
    if state.mode is Mode.EXCLUSIVE and not _holds(state, now):
        raise ContractAbort(Abort.HOLD_EXPIRED)
    if previous is None and len(state.submissions) >= MAX_SUBMISSIONS:
        raise ContractAbort(Abort.TOO_MANY_SUBMISSIONS)
    state.submissions[worker] = {"pr_url": pr_url, "commit_sha": commit_sha, "submitted_at": now,
                                 "state": int(SubmissionState.LIVE)}
    state.status = Status.PR_SUBMITTED
    return [("PRSubmitted", {
        "bounty_id": state.bounty_id, "worker": worker, "pr_url": pr_url, "commit_sha": commit_sha,
    })]


def reject_submission(state: BountyState, signer: str, worker: str, reason: int, now: int) -> Emitted:
    """The resolver, having looked at the forge, rejects a live submission: junk (not a PR of the repository, the
    wrong base, not the submitter's own PR, settled elsewhere) is removed and blocks nothing; a PR closed
    unmerged is kept as CLOSED, so its worker may still dispute during the grace that follows."""
    if signer != state.resolver:
        raise ContractAbort(Abort.NOT_RESOLVER)
    if reason not in Rejection._value2member_map_:
        raise ContractAbort(Abort.INVALID_REASON)
    if state.status not in (Status.STARTED, Status.PR_SUBMITTED):
        raise ContractAbort(Abort.INVALID_STATE)
    mine = state.submissions.get(worker)
    if mine is None or mine["state"] != SubmissionState.LIVE:
        raise ContractAbort(Abort.PR_NOT_SUBMITTED)
    pr_url = mine["pr_url"]
    if reason == Rejection.CLOSED:
        mine["state"] = int(SubmissionState.CLOSED)
        state.last_closed_at = now
    else:
        del state.submissions[worker]
    if not _live(state):
        state.status = Status.STARTED
    return [("SubmissionRejected", {"bounty_id": state.bounty_id, "worker": worker, "pr_url": pr_url,
                                    "reason": reason})]


def mark_merged(state: BountyState, signer: str, pr_url: str, author_id: int, repo_id: int, pr_number: int,
                now: int, winner: str | None, settled: bool) -> Emitted:
    """The resolver reports that PR `pr_number` of repository `repo_id` merged, written by forge user `author_id`;
    `winner`: the address linked to that forge user under this bounty's resolver (None: not linked), who must
    have a live submission of `pr_url`; `settled`: that PR already settled a bounty. The cooling period starts;
    a worker's open dispute ends with the merge."""
    if signer != state.resolver:
        raise ContractAbort(Abort.NOT_RESOLVER)
    if state.status is not Status.PR_SUBMITTED:
        raise ContractAbort(Abort.INVALID_STATE)
    if repo_id == 0 or (state.repo_id != 0 and repo_id != state.repo_id):
        raise ContractAbort(Abort.WRONG_REPO)
    if pr_number == 0:
        raise ContractAbort(Abort.INVALID_PR_URL)
    if winner is None:
        raise ContractAbort(Abort.NOT_LINKED)
    mine = state.submissions.get(winner)
    if mine is None or mine["state"] != SubmissionState.LIVE or mine["pr_url"] != pr_url:
        raise ContractAbort(Abort.PR_NOT_SUBMITTED)
    if settled:
        raise ContractAbort(Abort.PR_ALREADY_SETTLED)
    # cooling_period <= 90 days and the clock is bounded (see LocalLedger.advance): no u64 overflow
    state.winner, state.merged_pr, state.merged_pr_number, state.merged_at = winner, pr_url, pr_number, now
    state.cooling_until = now + state.cooling_period
    state.dispute = None
    state.status = Status.COOLING_DOWN
    return [
        ("BountyMerged", {"bounty_id": state.bounty_id, "winner": winner, "pr_url": pr_url, "merged_at": now,
                          "author_id": author_id, "repo_id": repo_id, "pr_number": pr_number}),
        ("CoolingStarted", {"bounty_id": state.bounty_id, "cooling_until": state.cooling_until}),
    ]


def set_split(state: BountyState, signer: str, recipients: list[str], shares: list[int], linked: list[bool]
              ) -> Emitted:
    """During cooling the winner divides the payout among linked accounts (co-authors) by relative shares;
    `linked[i]`: recipient i is linked under this bounty's resolver. Setting it again replaces it."""
    if state.status is not Status.COOLING_DOWN:
        raise ContractAbort(Abort.INVALID_STATE)
    if signer != state.winner:
        raise ContractAbort(Abort.NOT_WINNER)
    check_split(recipients, shares)
    if not all(linked):
        raise ContractAbort(Abort.NOT_LINKED)
    state.split = {"recipients": list(recipients), "shares": list(shares)}
    return [("SplitSet", {"bounty_id": state.bounty_id, "recipients": list(recipients), "shares": list(shares)})]


def _payout(state: BountyState, to: str, amount: int, now: int) -> tuple[str, dict[str, Any]]:
    """The payment of `amount` to `to`, through the winner's split when `to` is the winner who set one."""
    if state.split is not None and to == state.winner:
        recipients = list(state.split["recipients"])
        amounts = split_amounts(amount, list(state.split["shares"]))
    else:
        recipients, amounts = [to], [amount]
    return ("BountyPaid", {"bounty_id": state.bounty_id, "winner": to, "asset": state.asset, "amount": amount,
                           "paid_at": now, "recipients": recipients, "amounts": amounts})


def claim_payout(state: BountyState, now: int) -> Emitted:
    """Once cooling is over, and any dispute's time to be ruled with it, anyone may trigger the payout (a scheduler
    needs no winner's key); the pool always goes to the winner (or the winner's split)."""
    if state.status is not Status.COOLING_DOWN:
        raise ContractAbort(Abort.INVALID_STATE)
    assert state.cooling_until is not None and state.winner is not None
    if now < state.cooling_until:
        raise ContractAbort(Abort.COOLING)
    if state.dispute is not None and now < state.dispute["rule_by"]:
        raise ContractAbort(Abort.DISPUTED)
    state.status, state.dispute = Status.PAID, None
    return [_payout(state, state.winner, state.pool, now)]


def cancel(state: BountyState, signer: str, now: int, contribution: int) -> Emitted:
    """The sponsor ends an unmerged bounty and takes their own share of the pool back at once (each other funder
    withdraws theirs). Before any live PR: at any time. With a live PR: not before the deadline, and after it
    only once the resolver has seen every submitted PR closed unmerged, or `deadline + REFUND_GRACE` has passed.
    A PR closed unmerged, or a worker's dispute, also holds the refund for the grace (never past the deadline's).
    After a merge there is no cancel: the sponsor disputes instead."""
    if signer != state.sponsor:
        raise ContractAbort(Abort.NOT_SPONSOR)
    if state.status not in LIVE_STATES:
        raise ContractAbort(Abort.INVALID_STATE)
    if now < state.deadline + REFUND_GRACE:
        if _live(state):
            if now < state.deadline:
                raise ContractAbort(Abort.DEADLINE_NOT_REACHED)
            raise ContractAbort(Abort.SUBMISSION_LIVE)
        if state.dispute is not None:
            raise ContractAbort(Abort.DISPUTED)
        if state.last_closed_at != 0 and now < state.last_closed_at + REFUND_GRACE:
            raise ContractAbort(Abort.CLOSED_RECENTLY)
    state.status, state.dispute, state.refund_total = Status.CANCELLED, None, state.pool
    return [("BountyCancelled", {"bounty_id": state.bounty_id, "refund_to": state.sponsor, "amount": state.pool,
                                 "disputed": False}),
            *_withdraw_refund(state, signer, contribution)]


def withdraw_refund(state: BountyState, funder: str, contribution: int) -> Emitted:
    """A funder of a refunded bounty takes their share (`contribution`: what they put in and have not withdrawn;
    no loop over funders, so no crowd of small funders can block a refund)."""
    if state.refund_total == 0:
        raise ContractAbort(Abort.NO_REFUND)
    if contribution == 0:
        raise ContractAbort(Abort.NO_REFUND)
    return _withdraw_refund(state, funder, contribution)


def _withdraw_refund(state: BountyState, funder: str, contribution: int) -> Emitted:
    if contribution == 0:
        return []
    share = refund_share(state, contribution)
    state.refunded += share
    state.funders -= 1
    return [("RefundWithdrawn", {"bounty_id": state.bounty_id, "funder": funder, "amount": share})]


def dispute(state: BountyState, signer: str, reason: str, now: int) -> Emitted:
    """A dispute, with a reason, goes to the bounty's resolver. During cooling only the sponsor disputes (before
    cooling_until), and an unruled dispute pays the winner `dispute_period` later. Before a merge a worker with a
    submitted PR (live, or closed unmerged) disputes until `deadline + REFUND_GRACE`: the refund then waits for the
    ruling, but never past that time."""
    check_reason(reason)
    if state.dispute is not None:
        raise ContractAbort(Abort.DISPUTED)
    if state.status is Status.COOLING_DOWN:
        assert state.cooling_until is not None
        if signer != state.sponsor:
            raise ContractAbort(Abort.NOT_SPONSOR)
        if now >= state.cooling_until:
            raise ContractAbort(Abort.DISPUTE_WINDOW_CLOSED)
        rule_by = now + state.dispute_period
    elif state.status in (Status.STARTED, Status.PR_SUBMITTED):
        if signer not in state.submissions:
            raise ContractAbort(Abort.PR_NOT_SUBMITTED)
        if now >= state.deadline + REFUND_GRACE:
            raise ContractAbort(Abort.DISPUTE_WINDOW_CLOSED)
        rule_by = state.deadline + REFUND_GRACE
    else:
        raise ContractAbort(Abort.INVALID_STATE)
    state.dispute = {"by": signer, "reason": reason, "opened_at": now, "rule_by": rule_by}
    return [("DisputeOpened", {"bounty_id": state.bounty_id, "by": signer, "reason": reason, "rule_by": rule_by})]


def rule(state: BountyState, signer: str, share_bps: int, now: int, sponsor_contribution: int) -> Emitted:
    """The bounty's resolver rules an open dispute between the sponsor's side and the claimant (the winner during
    cooling, else the worker who disputed), before the dispute's `rule_by`: `share_bps` of the pool to the
    claimant (10 000: pay; 0: refund; between: a split), the rest refunded to the funders (the sponsor's share at
    once). Nobody else can be paid by a ruling."""
    if signer != state.resolver:
        raise ContractAbort(Abort.NOT_RESOLVER)
    if state.dispute is None:
        raise ContractAbort(Abort.NO_DISPUTE)
    if share_bps > BPS:
        raise ContractAbort(Abort.INVALID_SHARE)
    if now >= state.dispute["rule_by"]:
        raise ContractAbort(Abort.DISPUTE_WINDOW_CLOSED)
    claimant = state.winner if state.status is Status.COOLING_DOWN else state.dispute["by"]
    assert claimant is not None
    paid = state.pool * share_bps // BPS
    refunded = state.pool - paid
    state.dispute = None
    emitted: Emitted = [("DisputeRuled", {"bounty_id": state.bounty_id, "claimant": claimant, "share_bps": share_bps,
                                          "paid": paid, "refunded": refunded})]
    state.status = Status.PAID if paid > 0 else Status.CANCELLED
    if paid > 0:
        emitted.append(_payout(state, claimant, paid, now))
    if refunded > 0:
        state.refund_total = refunded
        emitted.append(("BountyCancelled", {"bounty_id": state.bounty_id, "refund_to": state.sponsor,
                                            "amount": refunded, "disputed": True}))
        emitted += _withdraw_refund(state, state.sponsor, sponsor_contribution)
    return emitted


def tip(state: BountyState, tipper: str, to: str, amount: int, nonce: int, nonce_used: bool, linked: bool,
        balance: int) -> Emitted:
    """A tip on a bounty's issue: `amount` from the tipper's own balance to a linked account, once per nonce (the
    comment id of a command): a re-signed transaction cannot tip twice."""
    if amount <= 0:
        raise ContractAbort(Abort.INVALID_AMOUNT)
    if nonce_used:
        raise ContractAbort(Abort.NONCE_USED)
    if not linked:
        raise ContractAbort(Abort.NOT_LINKED)
    if balance < amount:
        raise ContractAbort(Abort.INSUFFICIENT_BALANCE)
    return [("Tipped", {"bounty_id": state.bounty_id, "tipper": tipper, "to": to, "asset": state.asset,
                        "amount": amount, "nonce": nonce})]


def on_behalf(state: BountyState, signer: str, actor: str | None) -> str:
    """The resolver acting for the account linked to a forge user (a command in a comment, whose author's key is on
    their own machine): only the bounty's resolver, only for a linked account."""
    if signer != state.resolver:
        raise ContractAbort(Abort.NOT_RESOLVER)
    if actor is None:
        raise ContractAbort(Abort.NOT_LINKED)
    return actor
