"""The event store's optimistic concurrency: a change that loses a race is redone on the newer state, and the loss
reaches the caller only when the races go on past the store's attempts."""

from __future__ import annotations

from pathlib import Path

import pytest
from eventsourcing.persistence import IntegrityError

from adapters.event_store import Change, open_store
from domain.bounties.issue import Issue
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
