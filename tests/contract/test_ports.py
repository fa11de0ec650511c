"""One contract per port, run against every implementation, so the embedded and real ones cannot drift.

An implementation joins by adding a factory to FORGES or CHAINS (a fixture building it against its
loopback stand-in).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.keystore import Keystore
from adapters.local_forge import LocalForge
from adapters.local_ledger import LocalLedger
from adapters.ports import Signer
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


def test_forge_finds_an_issue_by_the_marker_in_its_body_and_edits_it(forge: Any) -> None:
    created = forge.create_issue("alice/app", "title", "body with marker-123", ["code3", "open"], [])
    assert created.labels == ["code3", "open"] and created.number >= 1
    assert forge.find_issue("alice/app", "marker-123").number == created.number
    assert forge.find_issue("alice/app", "marker-456") is None
    forge.update_issue_body("alice/app", created.number, "new body marker-123")
    assert forge.get_issue("alice/app", created.number).body == "new body marker-123"
    assert forge.set_labels("alice/app", created.number, ["code3", "cooling"]) == ["code3", "cooling"]
    assert forge.get_issue("alice/app", created.number).labels == ["code3", "cooling"]


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
