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

from adapters.ledger_tables import ESCROW
from adapters.offline_writer import OfflineWriter
from domain.bounties.contract import Status
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


def _world(root: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryWorld:
    """A fresh world with keys of its own (each world in its own CODE3_HOME: its people are new accounts)."""
    monkeypatch.setenv("CODE3_HOME", str(root.parent / f"{root.name}-home"))
    return MemoryWorld(root)


def _crash_free(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict[str, Any]]:
    w = _world(tmp_path / "reference", monkeypatch)
    try:
        calls, _ = _run(w, None)
        return calls, _outcome(w)
    finally:
        w.close()


def test_a_crash_after_any_port_call_of_the_lifecycle_loses_nothing_and_doubles_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls, expected = _crash_free(tmp_path, monkeypatch)
    assert expected["status"] is Status.PAID and expected["escrow"] == 0
    for at in range(1, calls + 1):
        w = _world(tmp_path / f"crash-{at}", monkeypatch)
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
    from projections.knowledge import annotations as rows

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


# --- reverse-spec and CodeNexus -----------------------------------------------------------------------------------

MODULES = {"core/base.py": "def base():\n    return 1\n",
           "util/helpers.py": "from core.base import base\n\n\ndef helper():\n    return base()\n",
           "app/main.py": "from util.helpers import helper\n\n\ndef main():\n    return helper()\n"}


def _batch_project(root: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryWorld:
    w = _world(root, monkeypatch)
    for rel, text in MODULES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return w


def _fused_batch_writes(w: MemoryWorld, fuse: Fuse, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write batch makes counts on the fuse once it is done: each spec and the index (the resolver's
    write_text), each checkpoint save, each event save."""
    from adapters.paths import ProjectPaths
    from mcp_tools.reverse_spec import batch as batch_module

    def fused(fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            fuse.tick()
            return result
        return call

    monkeypatch.setattr(ProjectPaths, "write_text", fused(ProjectPaths.write_text))
    monkeypatch.setattr(batch_module, "write_private", fused(batch_module.write_private))
    monkeypatch.setattr(w.store, "save", fused(w.store.save))


def _batch_outcome(w: MemoryWorld) -> dict[str, Any]:
    from domain.knowledge.generated_spec import GeneratedSpec
    from domain.knowledge.spec_document import parse_front

    specs_dir = w.project / "specs"
    names = sorted(p.name for p in specs_dir.iterdir())
    index = parse_front((specs_dir / "_index.spec.md").read_text())
    recorded = sorted(n for n in names if n != "_index.spec.md"
                      and w.store.get(GeneratedSpec, GeneratedSpec.create_id(f"specs/{n}")) is not None)
    return {"files": names, "index": index["relatedFiles"], "recorded": recorded}


def test_a_batch_killed_after_any_write_is_resumed_by_the_next_to_the_uninterrupted_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_tools.reverse_spec.batch import run_batch

    reference = _batch_project(tmp_path / "reference", monkeypatch)
    counting = Fuse(None)
    with monkeypatch.context() as patch:
        _fused_batch_writes(reference, counting, patch)
        first = run_batch(reference["alice"], ".")
    expected = _batch_outcome(reference)
    assert first["successful"] == ["core", "util", "app"] and counting.count >= 9
    reference.close()
    for at in range(1, counting.count + 1):
        w = _batch_project(tmp_path / f"crash-{at}", monkeypatch)
        try:
            with monkeypatch.context() as patch:
                _fused_batch_writes(w, Fuse(at), patch)
                with pytest.raises(Crash):
                    run_batch(w["alice"], ".")
            resumed = run_batch(w["alice"], ".")  # the restarted process runs the batch again
            assert not resumed["failed"], resumed
            assert _batch_outcome(w) == expected, f"a crash after write {at} left another result"
            again = run_batch(w["alice"], ".")
            assert again["successful"] == [] and sorted(again["skipped"]) == ["app", "core", "util"], (
                f"a crash after write {at} left a checkpoint that does not match the specs")
        finally:
            w.close()


def test_codenexus_writes_killed_after_their_save_and_retried_end_as_one_uninterrupted_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CodeNexus tool's effect is the save of its events (the index follows them): killed right after the
    save and retried, the index ends as after one call."""
    from mcp_tools.codenexus import resources
    from mcp_tools.codenexus.derive import derive_relationships
    from mcp_tools.codenexus.extras import describe_tag, remove_tag
    from mcp_tools.codenexus.tools import add_comment, add_tag, create_relationship

    w = _batch_project(tmp_path / "proj", monkeypatch)
    try:
        s = w["alice"]
        real_save = w.store.save
        fuse = Fuse(None)

        def saving_then_dying(*aggregates: Any, **kwargs: Any) -> Any:
            result = real_save(*aggregates, **kwargs)
            fuse.tick()
            return result

        w.store.save = saving_then_dying  # type: ignore[method-assign]
        calls: list[Callable[[], Any]] = [
            lambda: add_tag(s, "app/main.py", ["entry", "core"]),
            lambda: add_comment(s, "app/main.py", "the entry point"),
            lambda: describe_tag(s, "core", "the core of the app"),
            lambda: create_relationship(s, "app/main.py", "core/base.py", "depends_on", "through util"),
            lambda: derive_relationships(s),
            lambda: remove_tag(s, "app/main.py", ["entry"]),
        ]
        for call in calls:
            fuse.at = fuse.count + 1
            with pytest.raises(Crash):
                call()
            call()  # the restarted process retries the same call
        meta = resources.file_metadata(s, "app/main.py")
        assert meta["tags"] == ["core"] and meta["comment"] == "the entry point"
        out = resources.file_relationships(s, "app/main.py")["outgoing_relationships"]
        assert sorted((r["target"], r["type"], r["origin"]) for r in out) == [
            ("core/base.py", "depends_on", "manual"), ("util/helpers.py", "imports", "derived")]
        tags = {t["name"]: t for t in resources.all_tags(s)["tags"]}
        assert tags["core"]["description"] == "the core of the app" and tags["core"]["file_count"] == 1
        assert "entry" not in tags or tags["entry"]["file_count"] == 0
    finally:
        w.close()
