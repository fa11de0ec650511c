"""The lifecycle aggregates' rules a handler's step applies: each records its event only when it has something new
to record (a repeat, or a redo on newer state after another writer saved first, records nothing) and says whether
it did."""

from __future__ import annotations

from domain.bounties.bounty import Bounty
from domain.bounties.chain_events import ChainEvent
from domain.bounties.issue import Issue
from domain.bounties.spec import Spec
from domain.values import Amount


def _spec() -> Spec:
    return Spec(feature_id="001-csv-export", description="export as CSV", digest="a" * 64)


def _kinds(aggregate: Spec | Issue | Bounty) -> list[str]:
    return [type(e).__name__ for e in aggregate.collect_events()]


def test_a_spec_rewritten_with_what_it_holds_records_nothing() -> None:
    spec = _spec()
    assert not spec.rewrite_once("spec.md", "a" * 64)
    assert spec.rewrite_once("spec.md", "b" * 64) and not spec.rewrite_once("spec.md", "b" * 64)
    assert spec.digests["spec.md"] == "b" * 64
    assert _kinds(spec) == ["Specified", "ArtifactRewritten"]


def test_a_plan_is_recorded_again_only_when_one_of_its_files_changed() -> None:
    spec, files = _spec(), {"plan.md": "1" * 64, "research.md": "2" * 64}
    assert spec.plan_once(files, tech_constraints=None) and spec.planned
    assert not spec.plan_once(files, tech_constraints="Python 3.11"), "the same files: a repeat"
    assert spec.plan_once({**files, "plan.md": "3" * 64}, tech_constraints=None)
    assert _kinds(spec) == ["Specified", "Planned", "Planned"]


def test_a_task_list_is_recorded_again_only_when_tasks_md_changed() -> None:
    spec = _spec()
    assert spec.task_once("4" * 64, task_count=3) and spec.task_count == 3
    assert not spec.task_once("4" * 64, task_count=3)
    assert spec.task_once("5" * 64, task_count=4) and spec.task_count == 4


def test_an_issue_s_labels_are_recorded_only_when_the_forge_shows_others() -> None:
    issue = Issue(issue_hash="cd" * 32, repo="alice/app", feature_id="001-x", spec_path="specs/001-x/spec.md",
                  spec_digest="ef" * 32, amount=Amount(1000), asset="USDT", network="local", labels=["code3"],
                  assignees=[], effort=1, deadline=None)
    assert issue.mirror_labels_once(["code3", "open"]) and not issue.mirror_labels_once(["code3", "open"])
    assert issue.mirror_labels_once(["code3", "in-progress"]) and issue.mirrored_labels == ["code3", "in-progress"]


def test_a_bounty_is_noted_claimable_once() -> None:
    bounty = Bounty.from_chain(ChainEvent(
        type="BountyCreated", tx_hash="0x" + "0" * 63 + "1", version=1, index=0,
        data={"bounty_id": "1", "sponsor": "0x" + "a" * 64, "repo": "o/r", "issue_hash": "e" * 64, "asset": "USDT",
              "amount": 7, "cooling_period": 60, "created_at": 100}))
    assert not bounty.claimable
    assert bounty.note_claimable_once(at=200) and bounty.claimable
    assert not bounty.note_claimable_once(at=300), "a later tick finds it noted"
    assert _kinds(bounty) == ["Created", "BecameClaimable"]
