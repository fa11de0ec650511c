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
from typing import Annotated, Literal

from pydantic import Field

from adapters.event_store import Change
from adapters.files import recover
from adapters.paths import PathRefused, ProjectPaths
from adapters.redact import redact
from adapters.tracking import PROCESS_OWNER, alive
from domain.bounties.amounts import display
from domain.bounties.contract import MAX_HOLD_SECONDS, Mode
from domain.bounties.issue import Issue
from domain.bounties.metadata import BountyMeta, IssueMetadata, replace_block
from domain.bounties.spec import Spec, count_tasks
from domain.canonical import issue_hash as compute_issue_hash
from domain.canonical import sha256_hex
from domain.errors import Code, Code3Error, present
from domain.values import parse_amount, parse_duration, parse_repo
from mcp_tools.declare import tool
from mcp_tools.lifecycle.answers import PublishAnswer
from mcp_tools.lifecycle.chain_record import bounty_change, chain_read, index_change, raise_for, register, sync_bounty
from mcp_tools.lifecycle.specs import FeatureIdArg, check_feature_id
from mcp_tools.services import Services

ASSET = re.compile(r"[A-Z][A-Z0-9]{1,15}")
SEED_NETWORK = "testnet"  # seed 001's publish example names it
LOCAL_CHAIN = "code3-local"  # the embedded ledger: no real money
DEFAULT_HOLD = 3 * 24 * 3600  # exclusive: the accepting worker holds the task three days unless publish says


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
    repo = parse_repo(repo)
    check_feature_id(feature_id)
    parse_amount(amount)  # digits in the asset's smallest unit within u64: "7\n", "007" and 2^64 are refused
    if not isinstance(asset, str) or not ASSET.fullmatch(asset):
        raise Code3Error(Code.VALIDATION, f"invalid asset {asset!r}", "use the asset's symbol, e.g. USDT")
    network = network or s.chain.network
    if network not in accepted_networks(s):
        names = " or ".join(repr(n) for n in accepted_networks(s))
        raise Code3Error(Code.VALIDATION, f"this server's chain ({chain_name(s)}) answers to network {names}, "
                         f"not {network!r}", f"pass network={s.chain.network!r} (or omit it), or configure CODE3_CHAIN")
    if deadline_seconds is not None:
        parse_duration(deadline_seconds, "deadline_seconds")  # bounded: 10**30 never reaches the log
    hold = _hold_time(mode, hold_seconds)
    paths = ProjectPaths(s.project)  # never a key, the state directory or a symlink out of the project
    with paths.locked_dir("specs"):
        recover(s.specs_dir, feature_id)  # a write a crash interrupted is finished or undone before the read
    try:
        spec_file = paths.resolve(spec_path)
        spec_text = paths.read_text(spec_path)
    except PathRefused as refused:
        if refused.reason == "not_found":
            raise Code3Error(Code.NOT_FOUND, f"{spec_path} does not exist", "run spec_mcp.specify first") from None
        raise
    if redact(spec_text).total:  # the issue is public to whoever can read the repository
        raise Code3Error(Code.VALIDATION, f"{spec_path} holds a credential (a token, key or password)",
                         "remove it from the spec: publish posts the spec on the issue, for anyone to read")
    key = compute_issue_hash(repo=repo, feature_id=feature_id, spec_digest=sha256_hex(spec_text),
                             amount=amount, asset=asset, network=network)
    _refuse_conflicting_publish(s, feature_id, key)
    tasks_md = spec_file.parent / "tasks.md"
    effort = max(1, count_tasks(paths.read_text(paths.relative(tasks_md)))) if tasks_md.exists() else 1
    wanted_labels = sorted({*(labels or ["code3", "open"]), "code3", "open"})

    issue = present(s.store.update_all(Change(Issue, Issue.create_id(key), lambda current: None if current else Issue(
        issue_hash=key, repo=repo, feature_id=feature_id, spec_path=spec_path, spec_digest=sha256_hex(spec_text),
        amount=amount, asset=asset, network=network, labels=wanted_labels, assignees=list(assignees or []),
        effort=effort, deadline=s.chain.now() + deadline_seconds if deadline_seconds else None)),
        # one set of terms per feature, claimed before any side effect: a crashed publish retried with another
        # amount is refused here instead of opening a second issue and bounty
        index_change("publish", feature_id, key))[0], "the publish's Issue")
    _refuse_other_terms(s, issue, mode, hold)  # before any side effect of this call
    with _turn_in_process(key):  # racing publishes of one key in this process: one at a time (see below)
        if issue.bounty_id is None:
            issue = _take_turn(s, issue)  # one publish at a time opens the issue and creates the bounty
        issue = _open_issue(s, issue, spec_text)
        issue = _create_bounty(s, issue, mode, hold)
        issue = _write_back(s, issue)
    return {"success": True,
            "issue": {"url": issue.url, "number": issue.number, "issue_hash": key},
            "bounty": {"bounty_id": issue.bounty_id, "amount": issue.amount, "asset": issue.asset,
                       "amount_display": display(issue.amount, issue.asset)}}


def chain_name(s: Services) -> str:
    """Which ledger really holds the escrow, as the issue's metadata says (`bounty.chain`)."""
    return LOCAL_CHAIN if s.chain.network == "local" else "aptos"


def accepted_networks(s: Services) -> tuple[str, ...]:
    """The embedded ledger also answers to the seed's network name, so the seed's examples run verbatim."""
    return (s.chain.network, SEED_NETWORK) if s.chain.network == "local" else (s.chain.network,)


def _refuse_conflicting_publish(s: Services, feature_id: str, key: str) -> None:
    spec = s.store.get(Spec, Spec.create_id(feature_id))
    if spec is None or spec.published_as in (None, key):
        return
    other = s.store.get(Issue, Issue.create_id(spec.published_as))
    where = f" as {other.url} (bounty {other.bounty_id})" if other else ""
    raise Code3Error(Code.IDEMPOTENT_REJECTED,
                     f"feature {feature_id} was already published{where} with other terms",
                     "reuse the existing issue and bounty; a changed spec or amount is a new feature_id")


def _metadata(issue: Issue, chain: str) -> IssueMetadata:
    return IssueMetadata(
        repo=issue.repo, issue_number=issue.number, issue_hash=issue.issue_hash, feature_id=issue.feature_id,
        task_id=issue.task_id, bounty=BountyMeta(network=issue.network, chain=chain, asset=issue.asset,
                                                 amount=issue.amount, bounty_id=issue.bounty_id,
                                                 deadline=issue.deadline),
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
        issue = present(s.store.update(Issue, issue.id, _claim_opening), "the Issue")
        if issue.bounty_id is not None or issue.opening_owner == PROCESS_OWNER:
            return issue
        if time.monotonic() > give_up:
            raise Code3Error(Code.PRECONDITION, "another publish of this issue is still opening it",
                             "retry in a minute: the same call resumes it")
        time.sleep(0.05)


def _claim_opening(current: Issue | None) -> Issue | None:
    """Claim the turn unless the bounty is linked or a live claim (this process's included) holds it."""
    current, now = present(current, "the Issue"), time.time()
    held = current.opening_owner is not None and current.opening_until > now
    if current.bounty_id is not None or (held and (current.opening_owner == PROCESS_OWNER
                                                or alive(current.opening_owner or ""))):
        return None
    current.claim_opening(owner=PROCESS_OWNER, until=now + OPENING_CLAIM_S)
    return current


def _open_issue(s: Services, issue: Issue, spec_text: str) -> Issue:
    if issue.number is None:
        found = s.forge.find_issue(issue.repo, issue.issue_hash)
        if found is None:
            title = f"[code3] {issue.feature_id}: {_title(spec_text, issue.feature_id)}"
            body = f"{spec_text.rstrip()}\n\n{_metadata(issue, chain_name(s)).to_block()}\n"
            found = s.forge.create_issue(issue.repo, title, body, issue.labels, issue.assignees)
        task_id = f"{issue.repo}#{found.number}"

        def change(current: Issue | None) -> Issue | None:
            current = present(current, "the Issue")
            if current.number is not None:
                return None
            current.open(number=found.number, url=found.url, task_id=task_id)
            return current

        # the issue's number and its task-id lookup: one save
        return s.store.update_all(Change(Issue, issue.id, change, known=issue),
                                  index_change("task", task_id, issue.issue_hash))[0]
    # a resumed publish: make sure the lookup exists
    register(s, "task", present(issue.task_id, "the task id"), issue.issue_hash)
    return issue


def _hold_time(mode: str, hold_seconds: int | None) -> int:
    """The publish's hold time: a term of the bounty (compared on a repeat like the amount, not hashed)."""
    if mode not in ("exclusive", "contest"):
        raise Code3Error(Code.VALIDATION, f"unknown mode {mode!r}", "use exclusive (the default) or contest")
    if mode == "contest":
        if hold_seconds not in (None, 0):
            raise Code3Error(Code.VALIDATION, "a contest takes no hold_seconds",
                             "omit hold_seconds, or publish with mode exclusive")
        return 0
    hold = DEFAULT_HOLD if hold_seconds is None else parse_duration(hold_seconds, "hold_seconds")
    if hold > MAX_HOLD_SECONDS:
        raise Code3Error(Code.VALIDATION, f"hold_seconds {hold} is more than {MAX_HOLD_SECONDS} (30 days)",
                         f"pass 1 to {MAX_HOLD_SECONDS} seconds, or omit it for {DEFAULT_HOLD} (3 days)")
    return hold


def _refuse_other_terms(s: Services, issue: Issue, mode: str, hold: int) -> None:
    """A repeat of a publish whose bounty exists must ask for the same mode and hold time."""
    with chain_read():
        state = (s.chain.get_bounty(issue.bounty_id) if issue.bounty_id is not None
                 else s.chain.find_bounty_by_issue_hash(s.signer.address, issue.issue_hash))
    if state is None or (Mode(state.mode).label, state.hold_seconds) == (mode, hold):
        return
    raise Code3Error(Code.IDEMPOTENT_REJECTED,
                     f"{issue.url or issue.feature_id} was published with mode {Mode(state.mode).label} and "
                     f"hold_seconds {state.hold_seconds}, not {mode} and {hold}",
                     "repeat the publish with its original mode and hold_seconds to get the same issue and bounty; "
                     "other terms are a new feature_id")


def _create_bounty(s: Services, issue: Issue, mode: str = "exclusive", hold: int = DEFAULT_HOLD) -> Issue:
    if issue.bounty_id is not None:
        sync_bounty(s, issue.bounty_id)
        return issue
    with chain_read():
        state = s.chain.find_bounty_by_issue_hash(s.signer.address, issue.issue_hash)
    if state is None:
        repo_id = s.forge.get_repo(issue.repo).id  # the resolver pays for PRs of this repository id only
        receipt = raise_for(s.chain.create_bounty(s.signer, issue.repo, issue.issue_hash, issue.asset,
                                                  int(issue.amount), deadline=issue.deadline, mode=mode,
                                                  hold_seconds=hold, repo_id=repo_id),
                            f"sponsor {s.signer.name} ({s.signer.address})")
        bounty_id = str(receipt.events[0].data["bounty_id"])
    else:  # publish links a bounty only when its terms are this publish's (sponsor by the lookup, amount, asset)
        if (state.amount, state.asset) != (int(issue.amount), issue.asset):
            raise Code3Error(Code.IDEMPOTENT_REJECTED,
                             f"bounty {state.bounty_id} carries this issue hash with other terms "
                             f"({state.amount} {state.asset})", "publish under another feature id")
        bounty_id = state.bounty_id
    sync = present(bounty_change(s, bounty_id, new=state is None), f"bounty {bounty_id}'s BountyCreated event")

    def change(current: Issue | None) -> Issue | None:
        current = present(current, "the Issue")
        if current.bounty_id is not None:
            return None
        current.link_bounty(bounty_id=bounty_id)
        return current

    return s.store.update_all(sync, Change(Issue, issue.id, change, known=issue))[1]  # bounty and link: one save


def _write_back(s: Services, issue: Issue) -> Issue:
    if issue.metadata_written:
        return issue
    current = s.forge.get_issue(issue.repo, present(issue.number, "the issue number"))
    body = replace_block(current.body, _metadata(issue, chain_name(s)))
    if body != current.body:
        s.forge.update_issue_body(issue.repo, issue.number, body)

    def change(i: Issue | None) -> Issue | None:
        i = present(i, "the Issue")
        if i.metadata_written:
            return None
        i.write_metadata(body_digest=sha256_hex(body))
        return i

    key, spec_id = issue.issue_hash, Spec.create_id(issue.feature_id)
    return s.store.update_all(Change(Issue, issue.id, change, known=issue),
                              Change(Spec, spec_id, lambda spec: _mark_published(spec, key)))[0]


def _mark_published(spec: Spec | None, key: str) -> Spec | None:
    if spec is None or spec.published_as == key:
        return None
    spec.publish(issue_hash=key)
    return spec


def _title(spec_text: str, feature_id: str) -> str:
    match = re.search(r'^\*\*Input\*\*: (?:User description: )?"(.+)"$', spec_text, re.MULTILINE)
    text = match.group(1) if match else feature_id
    return text if len(text) <= 80 else text[:77] + "..."
