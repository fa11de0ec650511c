"""Crash campaign: the lifecycle is run once without a crash, counting every port call (forge and chain);
then once per call N, with the process "killed" right after the N-th call returns (a BaseException no
handler catches). The step that died is retried by a fresh process, and the run goes on.

Every run must end where the crash-free run ends (the bounty's state, the balances, the issue and its
labels), `audit verify` must pass, and money is conserved: balances plus escrow equal what was minted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adapters.local_ledger import ESCROW
from adapters.offline_writer import OfflineWriter
from domain.contract import Status
from mcp_tools.lifecycle import audit, publish, settle, specs, work
from mcp_tools.lifecycle.chain_record import require_bounty
from mcp_tools.services import Services
from tests.unit.handler_world import AMOUNT, REPO, MemoryWorld


class Crash(BaseException):
    """The process died: no `except Exception` in the code under test can stop it."""


class Fuse:
    def __init__(self, at: int | None) -> None:
        self.at, self.count = at, 0

    def tick(self) -> None:
        self.count += 1
        if self.count == self.at:
            raise Crash(f"killed after port call {self.count}")


class Crashing:
    """A port whose every method call counts on the fuse once it has returned."""

    def __init__(self, target: Any, fuse: Fuse) -> None:
        self._target, self._fuse = target, fuse

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            self._fuse.tick()
            return result

        return call


def _services(w: MemoryWorld, name: str, fuse: Fuse) -> Services:
    """A fresh process acting as `name`, its ports wired through the fuse."""
    base = w[name]
    return Services(store=w.store, forge=Crashing(base.forge, fuse), chain=Crashing(w.ledger, fuse),
                    signer=base.signer, writer=OfflineWriter(), project=w.project, workspace=base.workspace,
                    views=w.views)


Step = tuple[str, Callable[[Services, dict[str, Any]], None]]


def _lifecycle() -> list[Step]:
    def spec(s: Services, ctx: dict[str, Any]) -> None:
        made = specs.specify(s, "Users can export their to-do list as CSV", feature_id="001-csv-export",
                             allow_overwrite=True)
        ctx["feature"], ctx["spec_path"] = made["feature_id"], made["paths"]["spec"]

    def publish_(s: Services, ctx: dict[str, Any]) -> None:
        answer = publish.publish_issue_with_metadata(s, repo=REPO, feature_id=ctx["feature"],
                                                     spec_path=ctx["spec_path"], amount=str(AMOUNT), asset="USDT",
                                                     network=s.chain.network)
        ctx["task"], ctx["bounty"] = f"{REPO}#{answer['issue']['number']}", answer["bounty"]["bounty_id"]

    def accept(s: Services, ctx: dict[str, Any]) -> None:
        work.accept_task(s, ctx["task"])

    def open_pr(s: Services, ctx: dict[str, Any]) -> None:
        existing = [pr for pr in s.forge._target.state.prs.values() if pr.head == "bob:feat/001-csv-export"]
        ctx["pr"] = existing[0].url if existing else work.open_pr(s, REPO, "feat/001-csv-export", "feat", "b")[
            "pr_url"]

    def submit(s: Services, ctx: dict[str, Any]) -> None:
        work.submit_pr(s, ctx["bounty"], ctx["pr"])

    def merge(s: Services, ctx: dict[str, Any]) -> None:
        s.forge._target.merge_pr(ctx["pr"]) if not s.forge.get_pr(ctx["pr"]).merged else None
        settle.mark_merged(s, ctx["pr"], delivery_id="delivery-1")

    def claim(s: Services, ctx: dict[str, Any]) -> None:
        s.chain._target.advance(200) if s.chain.now() < require_bounty(s, ctx["bounty"]).cooling_until else None
        settle.claim_payout(s, ctx["bounty"])

    return [("alice", spec), ("alice", publish_), ("bob", accept), ("bob", open_pr), ("bob", submit),
            ("alice", merge), ("bob", claim)]


def _run(w: MemoryWorld, crash_at: int | None) -> tuple[int, bool]:
    """The whole lifecycle; returns the port calls made and whether the crash happened."""
    fuse, ctx, crashed = Fuse(crash_at), {}, False
    for name, step in _lifecycle():
        try:
            step(_services(w, name, fuse), ctx)
        except Crash:
            crashed = True
            step(_services(w, name, Fuse(None)), ctx)  # the restarted process retries the same call
    return fuse.count, crashed


def _outcome(w: MemoryWorld) -> dict[str, Any]:
    alice, bob = w["alice"], w["bob"]
    bounties = w.ledger.list_bounties()
    bounty = require_bounty(alice, bounties[0].bounty_id)
    issues = list(w.forge_state.issues.values())
    names = {w[n].signer.address: n for n in ("alice", "bob", "carol")}
    return {
        "bounties": len(bounties), "status": Status(bounty.status), "winner": names.get(bounty.winner or ""),
        "issues": len(issues), "labels": [i.labels for i in issues], "prs": len(w.forge_state.prs),
        "alice": w.ledger.balance(alice.signer.address, "USDT"), "bob": w.ledger.balance(bob.signer.address, "USDT"),
        "escrow": w.ledger.balance(ESCROW, "USDT"),
    }


def _crash_free(tmp_path: Path) -> tuple[int, dict[str, Any]]:
    w = MemoryWorld(tmp_path / "reference")
    try:
        calls, _ = _run(w, None)
        return calls, _outcome(w)
    finally:
        w.close()


def test_a_crash_after_any_port_call_of_the_lifecycle_loses_nothing_and_doubles_nothing(tmp_path: Path) -> None:
    calls, expected = _crash_free(tmp_path)
    assert expected["status"] is Status.PAID and expected["escrow"] == 0
    for at in range(1, calls + 1):
        w = MemoryWorld(tmp_path / f"crash-{at}")
        try:
            _, crashed = _run(w, at)
            assert crashed, f"the fuse at call {at} never blew"
            assert _outcome(w) == expected, f"a crash after port call {at} changed the outcome"
            verdict = audit.verify(w["alice"])
            assert verdict.ok, f"crash after call {at}: {verdict.problems}"
            total = sum(w.ledger.balance(w[n].signer.address, "USDT") for n in ("alice", "bob", "carol"))
            assert total + w.ledger.balance(ESCROW, "USDT") == 10 * AMOUNT, "money is conserved"
        finally:
            w.close()


@pytest.mark.parametrize("at", [1])
def test_the_fuse_counts_port_calls_and_blows_once(at: int) -> None:
    fuse = Fuse(at)
    with pytest.raises(Crash):
        fuse.tick()
    fuse.tick()
    assert fuse.count == 2


def test_ai_loom_writes_killed_after_their_save_and_retried_end_as_one_uninterrupted_call(tmp_path: Path) -> None:
    """The ai-loom tools' only effect is the save of the annotation's events: killed right after it and
    retried (a create with its client key), the store ends as after one call."""
    from mcp_tools.ai_loom import tools as loom
    from projections import annotations as rows

    w = MemoryWorld(tmp_path)
    try:
        (w.project / "src").mkdir()
        (w.project / "src" / "a.py").write_text("".join(f"line {n}\n" for n in range(1, 30)))
        s = w["alice"]
        real_save = w.store.save
        fuse = Fuse(1)

        def saving_then_dying(*aggregates: Any, **kwargs: Any) -> Any:
            result = real_save(*aggregates, **kwargs)
            fuse.tick()
            return result

        w.store.save = saving_then_dying  # type: ignore[method-assign]
        args = {"filePath": "src/a.py", "startLine": 3, "endLine": 4, "comment": "c", "clientKey": "k-crash"}
        with pytest.raises(Crash):
            loom.annotate(s, **args)
        made = loom.annotate(s, **args)  # the restarted process retries the same call
        fuse.at = fuse.count + 1
        with pytest.raises(Crash):
            loom.edit(s, id=made["id"], comment="d")
        assert loom.edit(s, id=made["id"], comment="d")["comment"] == "d"
        fuse.at = fuse.count + 1
        with pytest.raises(Crash):
            loom.delete(s, id=made["id"])
        assert loom.delete(s, id=made["id"])["deleted"] is False
        loom.list_contexts(s)
        assert [r[0] for r in rows.dump(s.views)] == [made["id"]], "one annotation, however many retries"
    finally:
        w.close()
