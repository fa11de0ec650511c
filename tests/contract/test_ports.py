"""One contract per port, run against every implementation, so the embedded and real ones cannot drift.

An implementation joins by adding a factory to FORGES or CHAINS (a fixture building it against its
loopback stand-in) and its class to tests/contract/registry.py's IMPLEMENTATIONS. Each contract test names
the port members it exercises (`@covers`); the first test below fails when a member of any port
(adapters/ports.py, adapters/*/port.py) has none, the second when an implementation takes a port method's
parameters otherwise than the port declares. The Chain's entry functions and views are compared across its
implementations in tests/contract/test_chain.py; SpecWriter and LLM: test_spec_writer_and_llm.py; CodeParser:
test_code_parser.py.
"""

from __future__ import annotations

import inspect
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.keystore import Keystore
from adapters.local_forge import LocalForge
from adapters.local_ledger import LocalLedger
from adapters.ports import Chain, Forge, PullRequest, Signer
from domain.errors import Code, Code3Error
from tests.contract.registry import (
    COVERED,
    IMPLEMENTATIONS,
    covers,
    load,
    load_contract_tests,
    members,
    ports,
    qualified,
)
from tests.fakes.aptos_node import aptos_chain
from tests.fakes.github_server import github_forge
from tests.fakes.memory_forge import ForgeState, MemoryForge


def local_forge(tmp_path: Path) -> Iterator[tuple[Any, Callable[[str], None]]]:
    forge = LocalForge(tmp_path / "forge", actor="alice")
    yield forge, forge.create_repo
    forge.close()


def local_chain(tmp_path: Path) -> Iterator[tuple[Any, Callable[[str, int], None]]]:
    ledger = LocalLedger(tmp_path / "ledger.sqlite", cooling_period=100)
    yield ledger, lambda address, amount: ledger.mint(address, "USDT", amount)
    ledger.close()


def memory_forge(tmp_path: Path) -> Iterator[tuple[Any, Callable[[str], None]]]:
    forge = MemoryForge(ForgeState(), actor="alice")
    yield forge, forge.create_repo


FORGES: dict[str, Callable[[Path], Iterator[tuple[Any, Callable[[str], None]]]]] = {"local": local_forge,
                                                                                   "memory": memory_forge}
CHAINS: dict[str, Callable[[Path], Iterator[tuple[Any, Callable[[str, int], None]]]]] = {"local": local_chain,
                                                                                         "aptos": aptos_chain}
FORGES["github"] = github_forge


@pytest.fixture(params=sorted(FORGES))
def forge(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    gen = FORGES[request.param](tmp_path)
    forge, create_repo = next(gen)
    create_repo("alice/app")
    yield forge
    next(gen, None)


@pytest.fixture(params=sorted(CHAINS))
def chain(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, Callable[[str, int], None]]]:
    gen = CHAINS[request.param](tmp_path)
    yield next(gen)
    next(gen, None)


@pytest.fixture
def people(tmp_path: Path) -> dict[str, Signer]:
    keys = Keystore(tmp_path / "keys")
    return {name: keys.new(name) for name in ("alice", "bob", "carol")}


@covers(Forge, "create_issue", "find_issue", "get_issue", "update_issue_body", "set_labels")
def test_forge_finds_an_issue_by_the_marker_in_its_body_and_edits_it(forge: Any) -> None:
    created = forge.create_issue("alice/app", "title", "body with marker-123", ["code3", "open"], [])
    assert created.labels == ["code3", "open"] and created.number >= 1
    assert forge.find_issue("alice/app", "marker-123").number == created.number
    assert forge.find_issue("alice/app", "marker-456") is None
    forge.update_issue_body("alice/app", created.number, "new body marker-123")
    assert forge.get_issue("alice/app", created.number).body == "new body marker-123"
    assert forge.set_labels("alice/app", created.number, ["code3", "cooling"]) == ["code3", "cooling"]
    assert forge.get_issue("alice/app", created.number).labels == ["code3", "cooling"]


@covers(Forge, "close_issue")
def test_forge_closes_an_issue_once_and_still_finds_it(forge: Any) -> None:
    created = forge.create_issue("alice/app", "title", "body marker-789", ["code3", "paid"], [])
    assert created.state == "open"
    forge.close_issue("alice/app", created.number)
    forge.close_issue("alice/app", created.number)  # a second close changes nothing
    closed = forge.get_issue("alice/app", created.number)
    assert closed.state == "closed" and closed.labels == ["code3", "paid"] and closed.body == "body marker-789"
    assert forge.find_issue("alice/app", "marker-789").number == created.number, "a closed issue is still found"
    with pytest.raises(Code3Error) as missing:
        forge.close_issue("alice/app", 999)
    assert missing.value.code is Code.NOT_FOUND


@covers(Forge, "create_comment", "list_comments", "edit_comment")
def test_forge_comments_can_be_listed_and_edited(forge: Any) -> None:
    issue = forge.create_issue("alice/app", "t", "b", [], [])
    first = forge.create_comment("alice/app", issue.number, "one")
    forge.create_comment("alice/app", issue.number, "two")
    forge.edit_comment("alice/app", first, "one, edited")
    assert [c.body for c in forge.list_comments("alice/app", issue.number)] == ["one, edited", "two"]


def acting_as(forge: Any, login: str) -> Any:
    """The same forge's state through another login (a second token on GitHub)."""
    from adapters.github import GitHubForge

    if isinstance(forge, LocalForge):
        return LocalForge(forge.root, actor=login)
    if isinstance(forge, MemoryForge):
        return MemoryForge(forge.state, login)
    return GitHubForge(f"contract-token-{login}", base_url=forge.base_url, sleep=lambda _s: None)


@covers(Forge, "actor", "create_issue", "get_issue", "list_issues", "create_comment", "list_comments")
def test_forge_says_who_opened_an_issue_and_who_wrote_each_comment(forge: Any) -> None:
    issue = forge.create_issue("alice/app", "t", "b", [], [])
    assert forge.actor == "alice" and issue.author == "alice"
    assert forge.get_issue("alice/app", issue.number).author == "alice"
    assert [i.author for i in forge.list_issues("alice/app") if i.number == issue.number] in ([], ["alice"])
    bob = acting_as(forge, "bob")
    try:
        forge.create_comment("alice/app", issue.number, "by alice")
        bob.create_comment("alice/app", issue.number, "by bob")
        seen = [(c.body, c.author) for c in forge.list_comments("alice/app", issue.number)]
        assert seen == [("by alice", "alice"), ("by bob", "bob")]
        assert [(c.body, c.author) for c in bob.list_comments("alice/app", issue.number)] == seen
        assert bob.get_issue("alice/app", issue.number).author == "alice", "the opener, not the reader"
    finally:
        getattr(bob, "close", lambda: None)()


@covers(Forge, "fork", "clone", "push", "open_pr", "get_pr")
def test_forge_fork_clone_push_and_pr(forge: Any, tmp_path: Path) -> None:
    from adapters.git import commit_all, git

    if isinstance(forge, MemoryForge):
        pytest.skip("the in-memory forge keeps no git repositories (handler unit tests need none)")
    fork = forge.fork("alice/app")
    assert fork == "alice/app" or fork.endswith("/app")
    work = tmp_path / "work"
    forge.clone(fork, work)
    git("checkout", "-q", "-b", "feat/001-x", cwd=work)
    (work / "x.txt").write_text("x")
    commit_all(work, "x")
    sha = forge.push(work, "feat/001-x")
    pr = forge.open_pr("alice/app", f"{forge.actor}:feat/001-x", "main", "feat: x", "body")
    assert pr.head_sha == sha and pr.author == forge.actor and not pr.merged and pr.state == "open"
    assert forge.get_pr(pr.url) == pr


@covers(Chain, "create_bounty", "find_bounty_by_issue_hash", "accept_bounty", "claim_payout", "bounty_events",
        "events_since", "get_bounty", "is_entrant", "balance", "contribution", "list_bounty_ids")
def test_chain_runs_the_bounty_contract_and_reports_events_with_coordinates(
        chain: tuple[Any, Callable[[str, int], None]], people: dict[str, Signer]) -> None:
    ledger, fund = chain
    alice, bob = people["alice"], people["bob"]
    fund(alice.address, 1000)
    issue_hash = "ab" * 32  # the contract takes a sha256 in lowercase hex
    created = ledger.create_bounty(alice, "alice/app", issue_hash, "USDT", 400)
    assert created.success and created.events[0].type == "BountyCreated"
    bounty_id = str(created.events[0].data["bounty_id"])
    assert ledger.find_bounty_by_issue_hash(alice.address, issue_hash).bounty_id == bounty_id
    assert ledger.find_bounty_by_issue_hash(bob.address, issue_hash) is None, "issue hashes are keyed by sponsor"
    accepted = ledger.accept_bounty(bob, bounty_id)
    assert accepted.success and accepted.version > created.version
    refused = ledger.claim_payout(bob, bounty_id)
    assert not refused.success and refused.abort_code == 2
    events = ledger.bounty_events(bounty_id)
    assert [e.type for e in events] == ["BountyCreated", "BountyAccepted"]
    assert [e.tx_hash for e in events] == [created.tx_hash, accepted.tx_hash]
    assert ledger.events_since(created.version) == events[1:]
    assert ledger.get_bounty(bounty_id).entrants == 1 and ledger.is_entrant(bounty_id, bob.address)
    assert not ledger.is_entrant(bounty_id, alice.address)
    assert ledger.balance(alice.address, "USDT") == 600
    assert ledger.contribution(bounty_id, alice.address) == 400 and ledger.list_bounty_ids(1, 100) == [bounty_id]


# --- every member of every port, on every implementation ------------------------------------------------------------

def test_every_member_of_every_port_has_a_contract_test() -> None:
    load_contract_tests()
    found = ports()
    assert set(found) == set(IMPLEMENTATIONS), "a port without implementations listed in tests/contract/registry.py"
    missing = {name: sorted(members(port) - COVERED[port]) for name, port in found.items()}
    missing = {name: names for name, names in missing.items() if names}
    assert not missing, f"port members no contract test exercises (name them with @covers): {missing}"


@pytest.mark.parametrize("implementation", [i for names in IMPLEMENTATIONS.values() for i in names])
def test_each_implementation_takes_each_port_method_s_parameters_by_name_and_in_order(implementation: str) -> None:
    """Extra parameters are allowed after the port's own, with a default (GitHubForge.list_comments' `retried`)."""
    port = load(next(p for p, names in IMPLEMENTATIONS.items() if implementation in names))
    cls = load(implementation)
    wrong = []
    for name in sorted(members(port)):
        declared = inspect.getattr_static(port, name, None)
        if not callable(declared) or isinstance(declared, property):
            continue  # an attribute or a property: the contract tests read it on instances
        found = inspect.getattr_static(cls, name, None)
        if not callable(found):
            wrong.append(f"{name}: missing")
            continue
        expected = list(inspect.signature(declared).parameters.values())
        actual = list(inspect.signature(found).parameters.values())
        same = [(p.name, p.kind, p.default) for p in actual[:len(expected)]] == [
            (p.name, p.kind, p.default) for p in expected]
        extra_ok = all(p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                       for p in actual[len(expected):])
        if not (same and extra_ok):
            wrong.append(f"{name}{inspect.signature(found)} is not {name}{inspect.signature(declared)}")
    assert not wrong, f"{qualified(cls)} against {qualified(port)}: {wrong}"


# --- the forge's remaining members ------------------------------------------------------------------------------------

def opened_pr(forge: Any, tmp_path: Path, branch: str = "feat/001-x") -> PullRequest:
    """A PR of `forge.actor`'s fork's branch against alice/app (the in-memory forge keeps no git: it opens it alone)."""
    from adapters.git import commit_all, git

    if not isinstance(forge, MemoryForge):
        fork = forge.fork("alice/app")
        work = tmp_path / "work"
        forge.clone(fork, work)
        git("checkout", "-q", "-b", branch, cwd=work)
        (work / "x.txt").write_text("x")
        commit_all(work, "x")
        forge.push(work, branch)
    return forge.open_pr("alice/app", f"{forge.actor}:{branch}", "main", "feat: x", "body")


@covers(Forge, "actor", "actor_id", "get_repo", "repo_url")
def test_forge_names_its_actor_and_its_repositories_by_id(forge: Any) -> None:
    assert forge.actor == "alice" and isinstance(forge.actor_id, int) and forge.actor_id > 0
    repo = forge.get_repo("alice/app")
    assert repo.full_name == "alice/app" and repo.id > 0 and repo.default_branch == "main"
    assert forge.get_repo("alice/app") == repo, "the id is stable"
    with pytest.raises(Code3Error) as caught:
        forge.get_repo("alice/nothing-here")
    assert caught.value.code is Code.NOT_FOUND
    assert "://" in forge.repo_url("alice/app") and forge.repo_url("alice/app").endswith("/alice/app")


@covers(Forge, "create_issue", "get_issue", "list_issues", "find_issue")
def test_forge_lists_the_code3_issues_and_refuses_an_issue_that_is_not_there(forge: Any) -> None:
    first = forge.create_issue("alice/app", "one", "body one", ["code3", "open"], [])
    second = forge.create_issue("alice/app", "two", "body two", ["code3"], [])
    assert second.number > first.number and second.url != first.url and first.state == "open"
    listed = [(i.number, i.title, i.labels) for i in forge.list_issues("alice/app")]
    assert listed == [(first.number, "one", ["code3", "open"]), (second.number, "two", ["code3"])]
    assert forge.get_issue("alice/app", second.number) == second
    with pytest.raises(Code3Error) as caught:
        forge.get_issue("alice/app", 999)
    assert caught.value.code is Code.NOT_FOUND


@covers(Forge, "create_comment", "get_comment", "list_comments", "edit_comment")
def test_forge_reads_a_comment_back_by_its_url_with_its_author_s_id_and_whether_it_was_edited(
        forge: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    issue = forge.create_issue("alice/app", "t", "b", [], [])
    comment_id = forge.create_comment("alice/app", issue.number, "first")
    [comment] = forge.list_comments("alice/app", issue.number)
    assert (comment.id, comment.body, comment.author, comment.edited) == (comment_id, "first", "alice", False)
    assert comment.author_id == forge.actor_id and f"#issuecomment-{comment_id}" in comment.url
    assert forge.get_comment(comment.url) == comment
    if not isinstance(forge, (LocalForge, MemoryForge)):  # GitHub tells an edit by its timestamps, to the second
        from tests.fakes import github_routes

        later = time.time() + 2
        monkeypatch.setattr(github_routes, "time", types.SimpleNamespace(time=lambda: later))
    forge.edit_comment("alice/app", comment_id, "first, edited")
    edited = forge.get_comment(comment.url)
    assert edited is not None and (edited.body, edited.edited) == ("first, edited", True)
    assert forge.get_comment(comment.url.replace(f"#issuecomment-{comment_id}", "#issuecomment-999999")) is None


@covers(Forge, "fork", "clone", "push", "open_pr", "get_pr", "find_pr")
def test_forge_finds_a_pr_by_number_and_url_and_nothing_where_there_is_none(forge: Any, tmp_path: Path) -> None:
    issue = forge.create_issue("alice/app", "t", "b", [], [])
    pr = opened_pr(forge, tmp_path)
    assert pr.repo == "alice/app" and pr.base == "main" and pr.default_branch == "main"
    assert pr.repo_id == forge.get_repo("alice/app").id and pr.author_id == forge.actor_id
    assert forge.find_pr("alice/app", pr.number) == pr == forge.get_pr(pr.url)
    assert forge.find_pr("alice/app", issue.number) is None, "an issue's number is no PR"
    assert forge.find_pr("alice/app", 999) is None
    assert forge.get_pr(pr.url.replace(f"/pull/{pr.number}", "/pull/999")) is None
    forge.create_comment("alice/app", pr.number, "a PR's conversation takes comments")
    assert [c.body for c in forge.list_comments("alice/app", pr.number)] == ["a PR's conversation takes comments"]


@covers(Forge, "fork", "clone", "push", "fetch_branch")
def test_forge_fetches_upstream_s_branch_into_a_fork_s_working_copy(forge: Any, tmp_path: Path) -> None:
    """A fork cloned before upstream moved on still starts a new branch from upstream's latest commit."""
    from adapters.git import commit_all, git

    if isinstance(forge, MemoryForge):
        pytest.skip("the in-memory forge keeps no git repositories (handler unit tests need none)")
    bob = acting_as(forge, "bob")
    try:
        fork = bob.fork("alice/app")
        assert fork != "alice/app"
        work = tmp_path / "bob"
        bob.clone(fork, work)
        forked_at = git("rev-parse", "HEAD", cwd=work)
        upstream = tmp_path / "alice"
        forge.clone("alice/app", upstream)
        (upstream / "later.txt").write_text("after the fork")
        later = commit_all(upstream, "later")
        forge.push(upstream, "main")
        assert later and later != forked_at
        assert bob.fetch_branch(work, "alice/app", "main") == later
        assert git("rev-parse", "refs/remotes/upstream/main", cwd=work) == later
        assert git("rev-parse", "HEAD", cwd=work) == forked_at, "fetching changes no branch of the working copy"
        with pytest.raises(Code3Error) as missing:
            bob.fetch_branch(work, "alice/nothing-here", "main")
        assert missing.value.code is Code.NOT_FOUND
    finally:
        getattr(bob, "close", lambda: None)()
