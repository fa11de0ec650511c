"""`spec_mcp.publish_issue_with_metadata`: the publish saga (issue → bounty → metadata write-back).

The key (`issue_hash`) is computed before any side effect. Each step is recorded as it completes and
each looks for its own effect before acting (the issue by the hash in its body, the bounty by the
hash on chain), so a retry after a crash at any point resumes without a second issue or bounty.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import Field

from adapters.event_store import Change
from adapters.files import recover
from adapters.local_forge import LocalForge
from adapters.paths import ProjectPaths
from adapters.tracking import PROCESS_OWNER, alive
from domain.bounties.amounts import display
from domain.bounties.contract import STATUS_LABELS
from domain.bounties.index import Index
from domain.bounties.issue import Issue
from domain.bounties.metadata import UNFUNDED_LABEL, BountyMeta, IssueMetadata, replace_block
from domain.bounties.open_questions import OpenQuestion, issue_section, open_questions, refuse, warning
from domain.bounties.spec import Spec
from domain.canonical import sha256_hex
from domain.errors import Code, Code3Error, present
from mcp_tools.declare import tool
from mcp_tools.lifecycle.answers import PublishAnswer
from mcp_tools.lifecycle.chain_record import bounty_change, chain_read, index_change, raise_for, register, sync_bounty
from mcp_tools.lifecycle.publish_claim import funded_labels, refuse_superseded, released_claim, repointed
from mcp_tools.lifecycle.publish_terms import (
    DEFAULT_HOLD,
    PublishTerms,
    SpecText,
    amount_warnings,
    chain_name,
    check_funding,
)
from mcp_tools.lifecycle.specs import FeatureIdArg
from mcp_tools.services import Services


@tool("spec_mcp.publish_issue_with_metadata", profiles=("client-remote",))
def publish_issue_with_metadata(
    s: Services,
    repo: Annotated[str, Field(description="owner/repo")],
    feature_id: FeatureIdArg,
    spec_path: Annotated[str, Field(description="path of spec.md relative to the project")],
    amount: Annotated[str, Field(description="bounty amount as a string of digits in the asset's smallest unit: "
                                             "\"1000000\" is 1 USDT (USDT has 6 decimals), \"10000000\" is 10 USDT")],
    asset: Annotated[str, Field(description="asset symbol")] = "USDT",
    network: Annotated[str | None, Field(description="chain network; this server's when omitted")] = None,
    labels: Annotated[list[str] | None, Field(description="issue labels")] = None,
    assignees: Annotated[list[str] | None, Field(description="issue assignees")] = None,
    deadline_seconds: Annotated[int | None, Field(description="optional: the bounty expires (and is refunded) "
                                                              "if not merged this many seconds after publishing")]
    = None,
    mode: Annotated[Literal["exclusive", "contest"], Field(
        description="exclusive (default): the first worker to accept holds the task for hold_seconds, others are "
                    "refused meanwhile; contest: several workers, the first merged PR wins")] = "exclusive",
    hold_seconds: Annotated[int | None, Field(
        description=f"exclusive: how long an accepting worker holds the task (default {DEFAULT_HOLD} s = 3 days, "
                    "at most 30 days); contest: omit")] = None,
) -> PublishAnswer:
    """Publish the spec as an issue with code3/v1 metadata and create its on-chain bounty (idempotent on issue_hash)."""
    terms = PublishTerms.parse(s, repo=repo, feature_id=feature_id, spec_path=spec_path, amount=amount, asset=asset,
                               network=network, labels=labels, assignees=assignees,
                               deadline_seconds=deadline_seconds, mode=mode, hold_seconds=hold_seconds)
    with ProjectPaths(s.project).locked_dir("specs"):
        recover(s.specs_dir, terms.feature_id)  # a write a crash interrupted is finished or undone before the read
    spec = SpecText.read(s, terms.spec_path)
    questions = open_questions(spec.text)
    if s.refuse_open_questions:
        refuse(questions, terms.spec_path)
    key = terms.issue_hash(spec.digest)
    _refuse_conflicting_publish(s, terms.feature_id, key)
    known = s.store.get(Issue, Issue.create_id(key))
    refuse_superseded(s, known)
    previous = released_claim(s, terms.feature_id, key)  # or the feature's claim on other terms refuses this
    if known is None or known.bounty_id is None:
        check_funding(s, terms, key)  # before anything public or recorded: a refusal changes nothing
    issue = _requested(s, terms, spec, key, previous)
    _refuse_other_terms(s, issue, terms)  # before any side effect of this call
    with _turn_in_process(key):  # racing publishes of one key in this process: one at a time (see below)
        if issue.bounty_id is None:
            issue = _take_turn(s, issue)  # one publish at a time opens the issue and creates the bounty
        issue = _open_issue(s, issue, spec.text, questions)
        issue = _create_bounty(s, issue, terms)
        issue = _write_back(s, issue)
    bounty_id = present(issue.bounty_id, "the bounty id")
    answer: PublishAnswer = {
        "success": True,
        "issue": {"url": present(issue.url, "the issue URL"), "number": present(issue.number, "the issue number"),
                  "issue_hash": key},
        "bounty": {"bounty_id": bounty_id, "amount": str(issue.amount), "asset": issue.asset,
                   "amount_display": display(issue.amount, issue.asset)},
        "open_questions": len(questions)}
    warnings = [*amount_warnings(s, issue.amount, issue.asset),
                *([warning(questions, terms.spec_path)] if questions else []),
                *unpushed_spec_warning(s, issue.repo, terms.spec_path, spec.text)]
    if warnings:
        answer["warnings"] = warnings
    return answer


def unpushed_spec_warning(s: Services, repo: str, spec_path: str, spec_text: str) -> list[str]:
    """Workers fork the forge's default branch: a spec missing there (or another version of it) reaches them only as
    the issue's text, fork_and_prepare writes its own copies into their branch, and the merged PR then brings those
    back over the sponsor's untracked ones (`code3 forge pull` refuses to overwrite them). The published spec itself
    is compared, not the directory's presence: another version there misleads workers as much. Embedded forge only."""
    spec_dir = PurePosixPath(spec_path).parent.as_posix()
    if not isinstance(s.forge, LocalForge) or spec_dir in ("", "."):
        return []
    branch = s.forge.get_repo(repo).default_branch
    there = s.forge.read_file(repo, branch, PurePosixPath(spec_path).as_posix())
    if there is not None and there.decode("utf-8", "replace").splitlines() == spec_text.splitlines():
        return []
    return [f"{spec_path} as published is not in {repo}'s {branch} on the embedded forge, so workers' forks start "
            f"without it (fork_and_prepare writes its own copies, which the merged PR brings back over yours): "
            f"commit {spec_dir}/ and run `code3 forge push` so workers' forks start from it"]


def _requested(s: Services, terms: PublishTerms, spec: SpecText, key: str, previous: str | None) -> Issue:
    """The Issue's first event, saved with the feature's claim on this key: one set of terms per feature, claimed
    before any side effect, so a crashed publish retried with another amount is refused instead of opening a
    second issue and bounty. A repeat finds the Issue it made. The one exception: a claim whose bounty the chain
    refused (an unfunded publish) is released, and this publish takes it over with its forge issue, in one save
    (the old Issue `Superseded`, this one `TookOver`, the feature's lookup repointed)."""

    def request(current: Issue | None) -> Issue | None:
        if current is not None:
            return None
        deadline = s.chain.now() + terms.deadline_seconds if terms.deadline_seconds else None
        issue = Issue(issue_hash=key, repo=terms.repo, feature_id=terms.feature_id, spec_path=terms.spec_path,
                      spec_digest=spec.digest, amount=terms.amount, asset=terms.asset, network=terms.network,
                      labels=terms.labels, assignees=terms.assignees, effort=spec.effort, deadline=deadline)
        if previous is not None:
            issue.take_over_once(previous)
        return issue

    if previous is None:
        claim: Change[Any] = index_change("publish", terms.feature_id, key)
        issue = s.store.update_all(Change(Issue, Issue.create_id(key), request), claim)[0]
    else:
        issue = s.store.update_all(
            Change(Issue, Issue.create_id(key), request), repointed("publish", terms.feature_id, key, previous),
            Change.step(Issue, Issue.create_id(previous), lambda old: old.supersede_once(key)))[0]
    return present(issue, "the publish's Issue")


def _refuse_conflicting_publish(s: Services, feature_id: str, key: str) -> None:
    spec = s.store.get(Spec, Spec.create_id(feature_id))
    if spec is None or spec.published_as in (None, key):
        return
    other = s.store.get(Issue, Issue.create_id(spec.published_as))
    where = f" as {other.url} (bounty {other.bounty_id})" if other else ""
    raise Code3Error(Code.IDEMPOTENT_REJECTED,
                     f"feature {feature_id} was already published{where} with other terms",
                     "reuse the existing issue and bounty; a changed spec or amount is a new feature_id")


def metadata_of(issue: Issue, chain: str) -> IssueMetadata:
    """The issue's code3/v1 block: the amount written as its decimal string (the contract's smallest unit), and
    `bounty.status` "unfunded" while the chain refused the bounty."""
    return IssueMetadata(
        repo=issue.repo, issue_number=issue.number, issue_hash=issue.issue_hash, feature_id=issue.feature_id,
        task_id=issue.task_id, bounty=BountyMeta(network=issue.network, chain=chain, asset=issue.asset,
                                                 amount=str(issue.amount), bounty_id=issue.bounty_id,
                                                 deadline=issue.deadline,
                                                 status=UNFUNDED_LABEL if issue.unfunded else None),
        spec_refs=[issue.spec_path], labels=issue.labels, effort=issue.effort,
    )


OPENING_CLAIM_S = 30.0


_TURNS: dict[str, tuple[threading.Lock, int]] = {}  # issue_hash -> (its lock, how many calls use it)
_TURNS_GUARD = threading.Lock()


@contextmanager
def _turn_in_process(key: str) -> Iterator[None]:
    """One publish of `key` at a time in this process. The opening claim (`_take_turn`) tells processes apart
    (PROCESS_OWNER) but not the concurrent calls of one serve, which would both hold it: the second waits here
    for the first and then resumes its saga (finding the issue and bounty made). Other keys never wait."""
    with _TURNS_GUARD:
        lock, users = _TURNS.get(key, (threading.Lock(), 0))
        _TURNS[key] = (lock, users + 1)
    try:
        if not lock.acquire(timeout=2 * OPENING_CLAIM_S):
            raise Code3Error(Code.PRECONDITION, "another publish of this issue is still opening it",
                             "retry in a minute: the same call resumes it")
        try:
            yield
        finally:
            lock.release()
    finally:
        with _TURNS_GUARD:
            lock, users = _TURNS[key]
            if users == 1:
                del _TURNS[key]
            else:
                _TURNS[key] = (lock, users - 1)


def _take_turn(s: Services, issue: Issue) -> Issue:
    """Claim the right to open the forge issue and create the bounty before touching the forge or the
    chain, so racing publishes of one issue_hash make one issue and one bounty: the claim is an event, the
    losers of the race wait for `BountyLinked` (or take over a claim whose owner died or let it expire)."""
    give_up = time.monotonic() + 2 * OPENING_CLAIM_S
    while True:
        issue = present(s.store.update_all(Change.step(Issue, issue.id, _claim_turn))[0], "the Issue")
        if issue.bounty_id is not None or issue.opening_owner == PROCESS_OWNER:
            return issue
        if time.monotonic() > give_up:
            raise Code3Error(Code.PRECONDITION, "another publish of this issue is still opening it",
                             "retry in a minute: the same call resumes it")
        time.sleep(0.05)


def _claim_turn(issue: Issue) -> bool:
    now = time.time()  # read at each attempt: a retry on newer state sees the claim's expiry afresh
    return issue.claim_opening_once(owner=PROCESS_OWNER, now=now, until=now + OPENING_CLAIM_S, alive=alive)


def _open_issue(s: Services, issue: Issue, spec_text: str, questions: list[OpenQuestion]) -> Issue:
    """The forge issue: found by the hash in its body (a crash after creating or editing it), else created, or, when
    this publish took over an unfunded one, that issue edited (body, labels) under the same number; its number and
    its task-id lookup are recorded in one save."""
    if issue.number is not None:  # a resumed publish: make sure the lookup exists
        register(s, "task", present(issue.task_id, "the task id"), issue.issue_hash)
        return issue
    found = s.forge.find_issue(issue.repo, issue.issue_hash)
    body = issue_body(spec_text, questions, metadata_of(issue, chain_name(s)))
    reused = s.store.get(Issue, Issue.create_id(issue.reuses)) if issue.reuses is not None else None
    if found is None and reused is not None:
        number = present(reused.number, "the unfunded issue's number")
        s.forge.update_issue_body(issue.repo, number, body)
        s.forge.set_labels(issue.repo, number, issue.labels)
        found = s.forge.get_issue(issue.repo, number)
    elif found is None:
        title = f"[code3] {issue.feature_id}: {_title(spec_text, issue.feature_id)}"
        found = s.forge.create_issue(issue.repo, title, body, issue.labels, issue.assignees)
    task_id = f"{issue.repo}#{found.number}"
    lookup_change: Change[Index] = (repointed("task", task_id, issue.issue_hash, reused.issue_hash)
                                    if reused is not None and reused.task_id == task_id
                                    else index_change("task", task_id, issue.issue_hash))
    opened = Change.step(Issue, issue.id, lambda i: i.open_once(number=found.number, url=found.url, task_id=task_id),
                         known=issue)
    return s.store.update_all(opened, lookup_change)[0]


def issue_body(spec_text: str, questions: list[OpenQuestion], meta: IssueMetadata) -> str:
    """The spec, its open questions (if any) under their own heading, then the code3-meta block."""
    section = issue_section(questions)
    return f"{spec_text.rstrip()}\n\n{section + chr(10) if section else ''}{meta.to_block()}\n"


def _refuse_other_terms(s: Services, issue: Issue, terms: PublishTerms) -> None:
    """A repeat of a publish whose bounty exists must ask for the same mode and hold time."""
    with chain_read():
        state = (s.chain.get_bounty(issue.bounty_id) if issue.bounty_id is not None
                 else s.chain.find_bounty_by_issue_hash(s.signer.address, issue.issue_hash))
    if state is None or state.runs_as(terms.mode, terms.hold_seconds):
        return
    raise Code3Error(Code.IDEMPOTENT_REJECTED,
                     f"{issue.url or issue.feature_id} was published with mode {state.mode.label} and "
                     f"hold_seconds {state.hold_seconds}, not {terms.mode.label} and {terms.hold_seconds}",
                     "repeat the publish with its original mode and hold_seconds to get the same issue and bounty; "
                     "other terms are a new feature_id")


def _create_bounty(s: Services, issue: Issue, terms: PublishTerms) -> Issue:
    """The bounty: found on chain by the sponsor and the hash (a crash after creating it), else created; the
    bounty's first event and the Issue's link are recorded in one save."""
    if issue.bounty_id is not None:
        sync_bounty(s, issue.bounty_id)
        return issue
    with chain_read():
        state = s.chain.find_bounty_by_issue_hash(s.signer.address, issue.issue_hash)
    if state is None:
        repo_id = s.forge.get_repo(issue.repo).id  # the resolver pays for PRs of this repository id only
        try:
            receipt = raise_for(s.chain.create_bounty(s.signer, issue.repo, issue.issue_hash, issue.asset,
                                                      issue.amount, deadline=issue.deadline, mode=terms.mode,
                                                      hold_seconds=terms.hold_seconds, repo_id=repo_id),
                                f"sponsor {s.signer.name} ({s.signer.address})")
        except Code3Error as refused:
            raise _unfunded(s, issue, refused) from None
        bounty_id = str(receipt.events[0].data["bounty_id"])
    elif not state.published_with(issue.amount, issue.asset):  # the lookup matched the sponsor; the rest must too
        raise Code3Error(Code.IDEMPOTENT_REJECTED,
                         f"bounty {state.bounty_id} carries this issue hash with other terms "
                         f"({state.amount} {state.asset})", "publish under another feature id")
    else:
        bounty_id = state.bounty_id
    created = present(bounty_change(s, bounty_id, new=state is None), f"bounty {bounty_id}'s BountyCreated event")
    linked = Change.step(Issue, issue.id, lambda i: i.link_bounty_once(bounty_id), known=issue)
    return s.store.update_all(created, linked)[1]


def _unfunded(s: Services, issue: Issue, refused: Code3Error) -> Code3Error:
    """The chain refused the bounty of an opened issue (its balance spent meanwhile, a node error): the issue is
    marked `unfunded` (event, state label, metadata) so nobody takes the announced amount for escrowed, and the
    refusal says how to correct it. The forge marks are idempotent and follow the event, so a retry redoes them."""
    s.store.update_all(Change.step(Issue, issue.id, lambda i: i.mark_unfunded_once(refused.message), known=issue))
    marked = s.store.get(Issue, issue.id) or issue
    number = present(marked.number, "the issue number")
    current = s.forge.get_issue(marked.repo, number)
    body = replace_block(current.body, metadata_of(marked, chain_name(s)))
    if body != current.body:
        s.forge.update_issue_body(marked.repo, number, body)
    labels = sorted({label for label in current.labels if label not in STATUS_LABELS} | {UNFUNDED_LABEL})
    if labels != sorted(current.labels):
        s.forge.set_labels(marked.repo, number, labels)
    return Code3Error(refused.code, f"{refused.message}; issue {marked.url} is marked {UNFUNDED_LABEL}: no bounty "
                      "backs it", f"{refused.hint}; then publish this feature again, with the same or a smaller "
                      "amount: the same issue is reused")


def _write_back(s: Services, issue: Issue) -> Issue:
    """The metadata block rewritten with the issue number and bounty id, and the spec marked published: one save."""
    if issue.metadata_written:
        return issue
    number = present(issue.number, "the issue number")
    current = s.forge.get_issue(issue.repo, number)
    body = replace_block(current.body, metadata_of(issue, chain_name(s)))
    if body != current.body:
        s.forge.update_issue_body(issue.repo, number, body)
    labels = funded_labels(s, issue, current.labels)
    if labels is not None:
        s.forge.set_labels(issue.repo, number, labels)

    def write(i: Issue) -> bool:  # one rule per save of the Issue: the metadata, and the labels put back
        done = [i.write_metadata_once(sha256_hex(body)), labels is not None and i.mirror_labels_once(labels)]
        return any(done)

    written = Change.step(Issue, issue.id, write, known=issue)
    key = issue.issue_hash
    published = Change.step(Spec, Spec.create_id(issue.feature_id), lambda spec: spec.publish_once(key),
                            if_present=True)
    return s.store.update_all(written, published)[0]


def _title(spec_text: str, feature_id: str) -> str:
    match = re.search(r'^\*\*Input\*\*: (?:User description: )?"(.+)"$', spec_text, re.MULTILINE)
    text = match.group(1) if match else feature_id
    return text if len(text) <= 80 else text[:77] + "..."
