"""The worker re-anchors annotations: a guarded step of `Worker.tick`, at most once per `reanchor_every`
seconds, and then only on the files whose text changed since its last pass (unchanged files' annotations
are not even loaded)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.keystore import Keystore
from code3.settings import Settings
from code3.wiring import worker as build_worker
from domain.knowledge.annotation import Annotation
from domain.knowledge.annotation_rules import parse_ann_id
from mcp_tools.ai_loom import access
from mcp_tools.ai_loom import tools as loom
from scheduler.worker import REANCHOR_EVERY_S, Worker
from tests.integration.test_ai_loom_tools import SOURCE


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[Worker]:
    Keystore(Settings(project=tmp_path).keystore_dir).new("alice")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(SOURCE)
    (tmp_path / "src" / "other.py").write_text(SOURCE)
    found = build_worker(Settings(project=tmp_path, identity="alice"))
    yield found
    found.close()


def stored(w: Worker, ann_id: str) -> Annotation:
    found = w.s.store.get(Annotation, parse_ann_id(ann_id))
    assert found is not None
    return found


def test_the_worker_records_reanchoring_at_a_bounded_rate(worker: Worker) -> None:
    assert worker.reanchor_every == REANCHOR_EVERY_S == 60.0
    made = loom.annotate(worker.s, filePath="src/app.py", startLine=20, endLine=21, comment="moves")
    other = loom.annotate(worker.s, filePath="src/other.py", startLine=5, endLine=5, comment="goes")
    assert worker.tick()["annotations_reanchored"] == 0, "nothing moved: nothing recorded"
    root = worker.s.project
    (root / "src" / "app.py").write_text("two\nnew lines\n" + SOURCE)
    (root / "src" / "other.py").unlink()
    assert worker.tick()["annotations_reanchored"] == 0, "within the minute: not yet"
    assert stored(worker, made["id"]).start_line == 20
    worker._reanchored_at = None  # the minute has passed
    assert worker.tick()["annotations_reanchored"] == 2, "one Reanchored, one Orphaned"
    assert (stored(worker, made["id"]).start_line, stored(worker, made["id"]).end_line) == (22, 23)
    assert stored(worker, other["id"]).status == "orphaned"
    worker._reanchored_at = None
    assert worker.tick()["annotations_reanchored"] == 0, "a repeat records nothing"


def test_unchanged_files_are_skipped_without_loading_their_annotations(worker: Worker,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(1, 6):
        loom.annotate(worker.s, filePath="src/app.py", startLine=n, endLine=n, comment=f"a{n}")
        loom.annotate(worker.s, filePath="src/other.py", startLine=n, endLine=n, comment=f"o{n}")
    loads: list[str] = []
    real = access.load

    def counting(s: Any, ann_id: str) -> Annotation:
        loads.append(ann_id)
        return real(s, ann_id)

    monkeypatch.setattr(access, "load", counting)
    worker.reanchor_every = 0.0
    worker.tick()
    assert len(loads) == 10, "the first pass verifies every annotation"
    loads.clear()
    worker.tick()
    assert loads == [], "no file changed: nothing loaded"
    (worker.s.project / "src" / "other.py").write_text("# header\n" + SOURCE)
    assert worker.tick()["annotations_reanchored"] == 5
    assert len(loads) == 5, "only the changed file's annotations"


def test_a_failing_reanchor_step_keeps_the_other_steps_running(worker: Worker, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    def broken(*_: Any) -> dict[str, int]:
        raise RuntimeError("boom")

    monkeypatch.setattr("scheduler.worker.verify_changed", broken)
    done = worker.tick()
    assert done["annotations_reanchored"] == -1 and done["payouts"] == 0


def test_a_long_pass_is_cut_by_the_budget_and_goes_on_at_the_next_tick(worker: Worker,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(1, 4):
        for path in ("src/app.py", "src/other.py"):
            loom.annotate(worker.s, filePath=path, startLine=n, endLine=n, comment=f"{path} {n}")
    loads: list[str] = []
    real = access.load
    monkeypatch.setattr(access, "load", lambda s, ann_id: loads.append(ann_id) or real(s, ann_id))
    worker.reanchor_budget = 2  # whole files at a time: one file of 3 per tick
    worker.tick()
    assert len(loads) == 3
    worker.tick()
    assert len(loads) == 6, "the pass goes on at the next tick, not a minute later"
    worker.tick()
    assert len(loads) == 6, "then the minute holds again"
