"""The event store's optimistic concurrency: a change that loses a race is redone on the newer state, and the loss
reaches the caller only when the races go on past the store's attempts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from eventsourcing.persistence import IntegrityError

from adapters.event_store import Change, open_store
from domain.bounties.issue import Issue
from domain.errors import Code3Error
from domain.values import Amount


def _issue() -> Issue:
    return Issue(issue_hash="cd" * 32, repo="alice/app", feature_id="001-x", spec_path="specs/001-x/spec.md",
                 spec_digest="ef" * 32, amount=Amount(1000), asset="USDT", network="local",
                 labels=["code3", "open"], assignees=[], effort=1, deadline=None)


def test_a_change_that_loses_races_is_redone_on_the_winner_s_state_until_it_saves(tmp_path: Path) -> None:
    (tmp_path / ".code3").mkdir(mode=0o700)
    store, rival = open_store(tmp_path), open_store(tmp_path)
    try:
        issue = _issue()
        store.save(issue)
        seen: list[list[str]] = []

        def relabel(current: Issue | None) -> Issue | None:
            assert current is not None
            seen.append(current.mirrored_labels)
            if len(seen) <= 10:  # another writer saves first, ten times
                other = rival.get(Issue, issue.id)
                assert other is not None
                other.mirror_labels(labels=[f"rival-{len(seen)}"])
                rival.save(other)
            current.mirror_labels(labels=["mine"])
            return current

        saved = store.update_all(Change(Issue, issue.id, relabel))[0]
        assert saved.mirrored_labels == ["mine"] and len(seen) == 11
        assert seen[-1] == ["rival-10"], "the last attempt ran on the winner's state"
        with pytest.raises(IntegrityError):
            seen.clear()
            store.update_all(Change(Issue, issue.id, relabel), attempts=3)
    finally:
        store.close()
        rival.close()


def test_a_step_creates_what_is_missing_skips_it_when_asked_and_says_whether_its_rule_recorded(tmp_path: Path) -> None:
    (tmp_path / ".code3").mkdir(mode=0o700)
    store = open_store(tmp_path)
    try:
        issue = _issue()
        label = Change.step(Issue, issue.id, lambda i: i.mirror_labels_once(["code3"]), create=lambda: issue)
        assert store.update_all(label)[0].version == 1 and label.recorded, "created: the creation is what it saved"
        again = Change.step(Issue, issue.id, lambda i: i.mirror_labels_once(["code3"]), create=_issue)
        assert store.update_all(again)[0].mirrored_labels == ["code3"] and again.recorded, "the rule ran on it"
        assert store.update_all(again)[0].version == 2 and not again.recorded, "a repeat records nothing"
        elsewhere = Issue.create_id("ab" * 32)
        skipped = Change.step(Issue, elsewhere, lambda i: i.mirror_labels_once(["x"]), if_present=True)
        assert store.update_all(skipped) == [None] and not skipped.recorded
        with pytest.raises(Code3Error, match="the Issue of ab"):
            store.update_all(Change.step(Issue, elsewhere, lambda i: True, what="the Issue of ab"))
    finally:
        store.close()


def test_a_store_opened_while_another_process_switches_the_file_to_wal_is_opened_again() -> None:
    """SQLite's `PRAGMA journal_mode=WAL` takes the file's lock: racing processes at start-up see it locked."""
    import sqlite3

    from adapters.event_store import _created

    tries: list[int] = []

    def build() -> Any:
        tries.append(1)
        if len(tries) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "store"

    assert _created(build) == "store" and len(tries) == 3
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        _created(lambda: (_ for _ in ()).throw(sqlite3.OperationalError("no such table: x")))
