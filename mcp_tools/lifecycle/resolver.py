"""The resolver's judgement: what the forge shows decides who is paid, never what a worker recorded.

The chain accepts any URL a worker's key signs into `submit_pr`, so every live submission is looked at on the
forge, by the bounty's resolver, before money moves:
- the PR must belong to the bounty's repository, by the forge's repository id (not a spelling of a URL), and
  target that repository's default branch; otherwise the submission is junk and is rejected on chain (it then
  blocks nothing: no refund waits for it, no contest slot is held);
- its author (the forge account that opened it) must be linked to the submitter's address: a submitter linked
  to another forge account is rejected; the winner of a merge is the address linked to the PR's author, which
  must have submitted that PR (so a front-runner who records someone else's PR is never paid);
- a PR closed unmerged is rejected as CLOSED (kept, so its worker may dispute during the grace that follows);
- a merged PR settles one bounty only: the chain records its (repository id, number) and refuses it for another.

An author not linked yet is looked for in the comments of the PR and of the bounty's issue: a link statement
(domain.bounties.links) written by that forge account and never edited, signed by the address's key, is recorded
on chain (the chain checks the signature). Until then the submission waits: nobody is paid for an unlinked author's PR.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from adapters.keystore import verify
from adapters.ports import PullRequest
from domain.bounties import contract
from domain.bounties.bounty import LIVE, Bounty
from domain.bounties.contract import Rejection, Status
from domain.bounties.issue import Issue
from domain.bounties.links import LinkStatement, find_statement, link_message
from domain.errors import Code, Code3Error
from mcp_tools.lifecycle.chain_record import chain_read, raise_for, record, refuse_doomed, require_bounty
from mcp_tools.lifecycle.identity import record_links
from mcp_tools.services import Services

log = logging.getLogger("code3.resolver")


@dataclass(frozen=True)
class Verdict:
    """What the forge says of one live submission: `merge` (its PR merged, written by the submitter's linked
    forge account), `reject` (with the reason), or `wait` (an open PR, or a merged one whose author is unlinked)."""

    worker: str
    pr_url: str
    action: str
    reason: Rejection | None = None
    pr: PullRequest | None = None
    note: str = ""


def review(s: Services, bounty_id: str, only_pr: str | None = None) -> list[Verdict]:
    """Judge the bounty's live submissions (only those of `only_pr` when given) and act on each verdict: merges are
    reported (the first one wins), junk and closed PRs rejected. `s` acts as the bounty's resolver. Returns the
    verdicts, acted upon."""
    bounty = require_bounty(s, bounty_id)
    if bounty.status not in (Status.STARTED, Status.PR_SUBMITTED):
        return []
    resolver = resolver_of(s, bounty)
    if resolver != s.signer.address:
        raise Code3Error(Code.UNAUTHORIZED, f"bounty {bounty_id} is resolved by {resolver}, not by this identity "
                         f"({s.signer.address})", "run the resolver with that key (CODE3_RESOLVER / the serve "
                                                   "identity that was the registry's resolver when it was created)")
    expected = _repo_id(s, bounty)
    verdicts = []
    for worker, sub in list(bounty.submissions.items()):
        if sub.get("state", LIVE) != LIVE or (only_pr is not None and sub["pr_url"] != only_pr):
            continue
        verdict = judge(s, bounty, resolver, expected, worker, sub["pr_url"])
        verdicts.append(_act(s, bounty_id, verdict))
        if verdict.action == "merge" and verdicts[-1].action == "merge":
            break  # the bounty is cooling now: the other submissions stay as they are
    return verdicts


def judge(s: Services, bounty: Bounty, resolver: str, expected_repo_id: int, worker: str, pr_url: str) -> Verdict:
    """The verdict on one live submission, from the forge and the chain's links (nothing is written here but a
    link whose statement the PR's author published)."""
    try:
        pr = s.forge.get_pr(pr_url)
    except Code3Error as exc:
        if exc.code is not Code.VALIDATION:
            raise
        pr = None  # not a PR URL of this forge at all
    if pr is None or pr.repo_id != expected_repo_id:
        return Verdict(worker, pr_url, "reject", Rejection.NOT_IN_REPO, pr,
                       f"{pr_url} is not a pull request of {bounty.repo}")
    if pr.base != pr.default_branch:
        return Verdict(worker, pr_url, "reject", Rejection.WRONG_BASE, pr,
                       f"{pr_url} targets {pr.base}, not {bounty.repo}'s default branch {pr.default_branch}")
    with chain_read():
        submitter_forge_id = s.chain.linked_forge_id(resolver, worker)
    if submitter_forge_id is not None and submitter_forge_id != pr.author_id:
        return Verdict(worker, pr_url, "reject", Rejection.NOT_AUTHOR, pr,
                       f"{pr_url} was opened by {pr.author}, whose forge account is not the submitter's")
    if pr.merged:
        with chain_read():
            settled = s.chain.settled_by(expected_repo_id, pr.number)
        if settled is not None and settled != bounty.bounty_id:
            return Verdict(worker, pr_url, "reject", Rejection.SETTLED_ELSEWHERE, pr,
                           f"{pr_url} already settled bounty {settled}")
        author = author_address(s, resolver, pr, bounty)
        if author is None:
            return Verdict(worker, pr_url, "wait", None, pr,
                           f"{pr.author} (forge id {pr.author_id}) is not linked to a chain address: the payout waits "
                           "for a link statement (`code3 account link`)")
        if author != worker:
            return Verdict(worker, pr_url, "reject", Rejection.NOT_AUTHOR, pr,
                           f"{pr_url} was opened by {pr.author}, linked to {author}, not to the submitter")
        return Verdict(worker, pr_url, "merge", None, pr)
    if pr.state == "closed":
        return Verdict(worker, pr_url, "reject", Rejection.CLOSED, pr, f"{pr_url} was closed without a merge")
    return Verdict(worker, pr_url, "wait", None, pr, f"{pr_url} is open")


def author_address(s: Services, resolver: str, pr: PullRequest, bounty: Bounty) -> str | None:
    """The address linked to the PR's author under `resolver`; a statement the author published in the PR's or the
    issue's comments is recorded on chain first (then the link exists for every later bounty)."""
    with chain_read():
        found = s.chain.linked_account(resolver, pr.author_id)
    if found is not None or pr.author_id == 0:
        return found
    places = [(pr.repo, pr.number)]
    issue = s.store.get(Issue, Issue.create_id(bounty.issue_hash))
    if issue is not None and issue.number is not None:
        places.append((issue.repo, issue.number))
    statement = published_statement(s, pr.author_id, places)
    if statement is None:
        return None
    link(s, statement, pr.author)
    with chain_read():
        return s.chain.linked_account(resolver, pr.author_id)


def published_statement(s: Services, forge_user_id: int, places: list[tuple[str, int]]) -> LinkStatement | None:
    """The newest valid link statement written by `forge_user_id` in the comments of `places`: unedited (on GitHub
    anyone with push access may edit a comment), naming that forge account, signed by the key it names."""
    for repo, number in places:
        for comment in reversed(s.forge.list_comments(repo, number)):
            if comment.author_id != forge_user_id or comment.edited:
                continue
            statement = find_statement(comment.body)
            if statement is not None and statement.forge_user_id == forge_user_id and signed(statement):
                return statement
    return None


def signed(statement: LinkStatement) -> bool:
    """The statement's signature is its key's, over the message the chain rebuilds (the chain also checks that the
    key authenticates the account)."""
    try:
        message = link_message(statement.forge_user_id, statement.account)
        return verify(bytes.fromhex(statement.public_key), bytes.fromhex(statement.signature), message)
    except ValueError:
        return False


def link(s: Services, statement: LinkStatement, login: str) -> None:
    """Record the link on chain, as this resolver (a repeat records the same link again, harmlessly)."""
    receipt = raise_for(s.chain.link_account(
        s.signer, statement.forge_user_id, login[:contract.MAX_LOGIN_BYTES], statement.account,
        bytes.fromhex(statement.public_key), bytes.fromhex(statement.signature)), f"link of {login}")
    record_links(s, receipt.events)
    log.info("linked forge account %s (%s) to %s", login, statement.forge_user_id, statement.account)


def _act(s: Services, bounty_id: str, verdict: Verdict) -> Verdict:
    """Send the transaction a verdict calls for, refused first on a fresh read if the chain would refuse it (another
    resolver process may have acted meanwhile: then the chain's state is recorded and the verdict answered as is)."""
    if verdict.action == "wait":
        return verdict
    if verdict.action == "reject":
        reason = verdict.reason
        assert reason is not None
        try:
            refuse_doomed(s, bounty_id, lambda state, now: contract.reject_submission(
                state, s.signer.address, verdict.worker, int(reason), now), f"bounty {bounty_id}")
            raise_for(s.chain.reject_submission(s.signer, bounty_id, verdict.worker, int(reason)),
                      f"bounty {bounty_id}")
        except Code3Error as exc:
            if exc.code not in (Code.NOT_FOUND, Code.INVALID_STATE):
                raise
        record(s, bounty_id)
        log.info("bounty %s: %s's submission rejected (%s): %s", bounty_id, verdict.worker, reason.label, verdict.note)
        return verdict
    pr = verdict.pr
    assert pr is not None
    try:
        refuse_doomed(s, bounty_id, lambda state, now: _merge_rule(s, state, verdict, pr, now), f"bounty {bounty_id}")
        raise_for(s.chain.mark_merged(s.signer, bounty_id, verdict.pr_url, pr.author_id, pr.repo_id, pr.number),
                  f"bounty {bounty_id}")
    except Code3Error as exc:
        bounty = record(s, bounty_id)[0]
        if bounty.merged_pr is not None:  # merged meanwhile by another reporter: the chain's merge is the answer
            return Verdict(verdict.worker, verdict.pr_url, "merged-already", None, pr)
        if exc.code is Code.IDEMPOTENT_REJECTED:  # settled another bounty meanwhile (one PR, one bounty)
            return _act(s, bounty_id, Verdict(verdict.worker, verdict.pr_url, "reject", Rejection.SETTLED_ELSEWHERE,
                                              pr, "settled another bounty meanwhile"))
        raise
    record(s, bounty_id)
    log.info("bounty %s: %s merged (author %s, forge id %s); cooling starts", bounty_id, verdict.pr_url, pr.author,
             pr.author_id)
    return verdict


def _merge_rule(s: Services, state: contract.BountyState, verdict: Verdict, pr: PullRequest, now: int) -> Any:
    """The contract's mark_merged on a copy of the chain's state, with the chain's own table lookups."""
    resolver = state.resolver or s.chain.config().resolver
    state.resolver = resolver
    winner = s.chain.linked_account(resolver, pr.author_id) if resolver else None
    settled = s.chain.settled_by(pr.repo_id, pr.number) is not None
    return contract.mark_merged(state, s.signer.address, verdict.pr_url, pr.author_id, pr.repo_id, pr.number, now,
                                winner, settled)


def resolver_of(s: Services, bounty: Bounty) -> str | None:
    """The bounty's resolver: fixed at its creation (an embedded ledger's bounty created before any resolver was
    recorded takes the registry's, once, as the chain does)."""
    if bounty.resolver:
        return bounty.resolver
    with chain_read():
        state = s.chain.get_bounty(bounty.bounty_id)
        return (state.resolver if state and state.resolver else None) or s.chain.config().resolver


def _repo_id(s: Services, bounty: Bounty) -> int:
    """The bounty's repository by the forge's id: as created on chain, or (0, a bounty of the v1 contract) the id the
    forge gives its name now."""
    return bounty.repo_id or s.forge.get_repo(bounty.repo).id
