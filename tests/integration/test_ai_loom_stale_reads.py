"""A read answers without searching a big file (issue 18, class 4): list_contexts, get_context and stitch
settle the cheap cases, answer the rest `stale` at the lines last found, and the worker's pass records
where they are; a small file is still searched on read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.keystore import Keystore
from code3.settings import Settings
from code3.wiring import worker as build_worker
from domain.knowledge.anchor import Anchor, search_cost
from mcp_tools.ai_loom import access, reading
from mcp_tools.ai_loom import tools as loom
from scheduler.worker import Worker

LINES = 100_000
BIG = "".join(f"value_{i} = compute({i}, {i * 7 % 13})\n" for i in range(1, LINES + 1))
RANGES = [(50_000, 51_000), (10, 12)] + [(1_000 * n, 1_000 * n + 5) for n in range(20, 28)]  # 10, one of 1 001 lines


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[Worker]:
    Keystore(Settings(project=tmp_path).keystore_dir).new("alice")
    (tmp_path / "big.py").write_text(BIG)
    (tmp_path / "small.py").write_text("".join(f"small_{i} = {i}\n" for i in range(1, 41)))
    found = build_worker(Settings(project=tmp_path, identity="alice"))
    found.reanchor_every = 0.0
    yield found
    found.close()


def _annotate_big(w: Worker) -> dict[str, tuple[int, int]]:
    made = {}
    for start, end in RANGES:
        answer = loom.annotate(w.s, filePath="big.py", startLine=start, endLine=min(end, start + 999), comment="c")
        made[answer["id"]] = (answer["startLine"], answer["endLine"])
    return made


def _anchors(w: Worker) -> dict[str, tuple[str, int, int]]:
    items = loom.list_contexts(w.s, limit=200)["items"]
    return {i["id"]: (i["anchor"]["status"], i["startLine"], i["endLine"]) for i in items}


def test_a_page_of_anchors_on_a_changed_100k_line_file_is_answered_stale_then_recorded_by_the_worker(
        worker: Worker) -> None:
    made = _annotate_big(worker)
    assert len(made) == 10
    assert {status for status, _, _ in _anchors(worker).values()} == {"exact"}
    (worker.s.project / "big.py").write_text("# one\n# two\n# three\n" + BIG)  # every block moves down 3 lines
    anchors = _anchors(worker)
    assert {ann: (s, a, b) for ann, (s, a, b) in anchors.items()} == {
        ann: ("stale", a, b) for ann, (a, b) in made.items()}, "the last known lines, not a guess"
    one = next(iter(made))
    view = loom.get_context(worker.s, id=one)
    assert view["anchor"]["status"] == "stale" and "worker" in view["anchor"]["reason"]
    prompt = loom.stitch_contexts(worker.s, templateId="detailed")["prompt"]
    assert "anchor: stale" in prompt and "not searched for again yet" in prompt
    assert worker.tick()["annotations_reanchored"] == 10  # the worker's pass searches and records
    assert _anchors(worker) == {ann: ("exact", a + 3, b + 3) for ann, (a, b) in made.items()}


def test_a_big_file_changed_away_from_the_block_is_settled_on_read_without_a_search(
        worker: Worker, monkeypatch: pytest.MonkeyPatch) -> None:
    made = _annotate_big(worker)
    (worker.s.project / "big.py").write_text(BIG + "appended = 1\n")

    def no_search(*_args: object) -> None:
        raise AssertionError("a read searched")

    monkeypatch.setattr(reading, "reanchor", no_search)
    assert _anchors(worker) == {ann: ("exact", a, b) for ann, (a, b) in made.items()}


def test_a_small_changed_file_is_still_searched_on_read(worker: Worker) -> None:
    made = loom.annotate(worker.s, filePath="small.py", startLine=20, endLine=22, comment="c")
    text = (worker.s.project / "small.py").read_text()
    (worker.s.project / "small.py").write_text("# new\n" + text)
    assert _anchors(worker)[made["id"]] == ("moved", 21, 23)


def test_a_read_stops_searching_when_its_allowance_is_spent(worker: Worker, monkeypatch: pytest.MonkeyPatch) -> None:
    first = loom.annotate(worker.s, filePath="small.py", startLine=5, endLine=6, comment="c")
    second = loom.annotate(worker.s, filePath="small.py", startLine=30, endLine=31, comment="c")
    text = (worker.s.project / "small.py").read_text()
    (worker.s.project / "small.py").write_text("# new\n" + text)
    one = search_cost(Anchor.capture(text, 5, 6), "# new\n" + text)
    monkeypatch.setattr(reading, "SEARCH_CHARS", one * 3 // 2)  # room for one search of this file, not two
    anchors = _anchors(worker)
    assert sorted([anchors[first["id"]][0], anchors[second["id"]][0]]) == ["moved", "stale"]


def test_a_read_past_its_time_opens_no_more_files(worker: Worker, monkeypatch: pytest.MonkeyPatch) -> None:
    made = loom.annotate(worker.s, filePath="small.py", startLine=3, endLine=4, comment="c")
    opened: list[str] = []
    real = access.text

    def counting(s: object, path: str) -> str | None:
        opened.append(path)
        return real(s, path)  # type: ignore[arg-type]

    monkeypatch.setattr(access, "text", counting)
    monkeypatch.setattr(reading, "READ_SECONDS", 0.0)
    assert _anchors(worker)[made["id"]] == ("stale", 3, 4)
    assert "anchor: stale" in loom.stitch_contexts(worker.s, templateId="detailed")["prompt"]
    assert opened == [], "no file opened once the read's time is spent"
