"""The issue follows its bounty: the code3-meta block rewritten from the bounty's current state (never backwards,
never rewritten when unchanged), a hand-broken block left as found, and the issue closed once paid only."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from domain.bounties.contract import Status
from domain.bounties.metadata import BountyMeta, IssueMetadata
from mcp_tools.lifecycle.issue_refresh import refresh_issue
from tests.fakes.memory_forge import ForgeState, MemoryForge

REPO = "alice/app"
BOB = "0x" + "b" * 64
PR = "https://forge.test/alice/app/pull/2"


def published(forge: MemoryForge) -> int:
    meta = IssueMetadata(repo=REPO, issue_number=1, issue_hash="h" * 64, feature_id="001-x", labels=["code3", "open"],
                         bounty=BountyMeta(network="testnet", chain="code3-local", asset="USDT", amount="1000000",
                                           bounty_id="7", deadline=None))
    return forge.create_issue(REPO, "[code3] 001-x", f"The spec.\n\n{meta.to_block()}\n", ["code3", "open"], []).number


def bounty(status: Status, **more: Any) -> Any:
    fields = {"bounty_id": "7", "winner": None, "merged_pr": None, "merged_at": None, "cooling_until": None,
              "deadline": 1_900_000_000, "dispute": None}
    return SimpleNamespace(status=status, **{**fields, **more})


class Counting(MemoryForge):
    def __init__(self) -> None:
        super().__init__(ForgeState(), actor="alice")
        self.create_repo(REPO)
        self.edits = 0

    def update_issue_body(self, repo: str, number: int, body: str) -> None:
        self.edits += 1
        super().update_issue_body(repo, number, body)


def test_a_paid_bounty_s_issue_is_closed_with_its_metadata_current() -> None:
    forge = Counting()
    number = published(forge)
    forge.set_labels(REPO, number, ["code3", "paid"])
    paid = bounty(Status.PAID, winner=BOB, merged_pr=PR, merged_at=100, cooling_until=102)
    refresh_issue(forge, REPO, number, paid)
    issue = forge.get_issue(REPO, number)
    meta = IssueMetadata.from_body(issue.body)
    assert issue.state == "closed" and issue.body.startswith("The spec.\n") and meta is not None
    assert meta.labels == ["code3", "paid"] and meta.bounty.amount == "1000000" and meta.feature_id == "001-x"
    assert (meta.bounty.status, meta.bounty.winner, meta.bounty.pr_url) == ("paid", BOB, PR)
    assert (meta.bounty.merged_at, meta.bounty.cooling_until, meta.bounty.deadline) == (100, 102, 1_900_000_000)
    refresh_issue(forge, REPO, number, paid)
    assert forge.edits == 1, "an unchanged block is not written again"


def test_a_cooling_bounty_s_issue_stays_open_and_says_so() -> None:
    forge = Counting()
    number = published(forge)
    refresh_issue(forge, REPO, number, bounty(Status.COOLING_DOWN, winner=BOB, merged_pr=PR, cooling_until=9))
    issue = forge.get_issue(REPO, number)
    meta = IssueMetadata.from_body(issue.body)
    assert issue.state == "open" and meta is not None and meta.bounty.status == "cooling"
    assert refresh_issue(forge, REPO, number, bounty(Status.COOLING_DOWN, dispute={"by": BOB})) is None
    assert IssueMetadata.from_body(forge.get_issue(REPO, number).body).bounty.status == "disputed"  # type: ignore[union-attr]


def test_a_block_someone_broke_by_hand_is_left_as_found_and_an_issue_without_one_too() -> None:
    forge = Counting()
    broken = forge.create_issue(REPO, "t", "text\n\n```code3-meta\n{not json\n```\n", ["code3"], []).number
    plain = forge.create_issue(REPO, "t", "no block here", ["code3"], []).number
    for number in (broken, plain):
        refresh_issue(forge, REPO, number, bounty(Status.PAID, winner=BOB))
        assert forge.get_issue(REPO, number).state == "closed", "paid is paid, whatever the body holds"
    assert forge.edits == 0
