"""`code3 loom add|list|show|edit|rm|stitch|verify`: the same handlers as the tools; a secret comment shown
only by `show --reveal`; refusals as one coded line and a hint, exit 1, no traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapters.keystore import Keystore
from code3.cli import main
from code3.settings import Settings
from code3.wiring import build_services
from tests.integration.test_ai_loom_tools import SECRET, SOURCE


@pytest.fixture
def root(tmp_path: Path) -> Path:
    Keystore(Settings(project=tmp_path).keystore_dir).new("alice")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(SOURCE)
    (tmp_path / "src" / "db.py").write_text(f"PASSWORD = '{SECRET}'\nUSER = 'app'\n")
    return tmp_path


def loom(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["loom", *args, "--project", str(root), "--identity", "alice"])
    out, err = capsys.readouterr()
    return code, out, err


def answer(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> Any:
    code, out, err = loom(capsys, root, *args)
    assert code == 0, err
    return json.loads(out)


def events(root: Path) -> int:
    s = build_services(Settings(project=root, identity="alice"))
    try:
        return int(s.store.recorder.max_notification_id() or 0)
    finally:
        s.close()


def test_add_list_show_edit_stitch_rm(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    made = answer(capsys, root, "add", "src/app.py", "12", "14", "需要分页加载", "--tags", "perf,db",
                  "--priority", "P0")
    assert made["id"].startswith("ann_") and made["tags"] == ["perf", "db"] and made["priority"] == "P0"
    again = answer(capsys, root, "add", "src/app.py", "2", "2", "keyed", "--key", "k-1")
    assert answer(capsys, root, "add", "src/app.py", "2", "2", "keyed", "--key", "k-1")["id"] == again["id"]
    listed = answer(capsys, root, "list", "--limit", "1")
    assert [i["id"] for i in listed["items"]] == [made["id"]] and listed["nextOffset"] == 1
    assert answer(capsys, root, "list", "--offset", "1")["items"][0]["id"] == again["id"]
    assert answer(capsys, root, "show", made["id"])["comment"] == "需要分页加载"
    edited = answer(capsys, root, "edit", made["id"], "--comment", "paged", "--tags", "", "--start", "13", "--end",
                    "13")
    assert (edited["comment"], edited["tags"], edited["startLine"], edited["endLine"]) == ("paged", [], 13, 13)
    code, prompt, stats = loom(capsys, root, "stitch", "--template", "detailed", "--max-chars", "2000",
                               "--ids", f"{made['id']},{again['id']}")
    assert code == 0 and "paged" in prompt and "line 13" in prompt
    assert json.loads(stats)["stats"] == {"annotations": 2, "chars": len(prompt) - 1, "files": 1, "truncated": False}
    assert answer(capsys, root, "rm", made["id"])["deleted"] is True
    assert answer(capsys, root, "rm", made["id"])["deleted"] is False
    assert [i["id"] for i in answer(capsys, root, "list")["items"]] == [again["id"]]


def test_a_secret_comment_is_shown_by_show_reveal_only(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    made = answer(capsys, root, "add", "src/db.py", "1", "1", f"rotate {SECRET}", "--sensitivity", "secret")
    outputs = [json.dumps(made), *loom(capsys, root, "list")[1:], *loom(capsys, root, "show", made["id"])[1:],
               *loom(capsys, root, "stitch")[1:], *loom(capsys, root, "verify")[1:],
               *loom(capsys, root, "edit", made["id"], "--priority", "P0")[1:]]
    assert not any(SECRET in text for text in outputs)
    assert answer(capsys, root, "show", made["id"], "--reveal")["comment"] == f"rotate {SECRET}"


def test_verify_records_reanchoring_once_and_shows_each_move(capsys: pytest.CaptureFixture[str],
                                                                root: Path) -> None:
    moved = answer(capsys, root, "add", "src/app.py", "20", "21", "moves down")
    gone = answer(capsys, root, "add", "src/db.py", "1", "1", "the file goes")
    assert answer(capsys, root, "verify", "--json")["counts"] == {"exact": 2}
    (root / "src" / "app.py").write_text("new\nlines\nabove\n" + SOURCE)
    (root / "src" / "db.py").unlink()
    before = events(root)
    code, out, _ = loom(capsys, root, "verify")
    assert code == 0
    lines = out.strip().splitlines()
    assert f"{moved['id']}  src/app.py:20-21 → 23-24  moved (confidence " in out
    assert f"{gone['id']}  src/db.py:1 → not found  orphaned (confidence 0.00; " in out
    assert lines[-1] == "verified 2 annotations: 1 moved, 1 orphaned" and len(lines) == 3
    assert events(root) == before + 2, "one Reanchored and one Orphaned event"
    again = answer(capsys, root, "verify", "--json")
    assert again["counts"] == {"exact": 1, "orphaned": 1}, "the anchor now follows the new text"
    assert {a["id"]: (a["from"], a["to"], a["status"], a.get("unchanged")) for a in again["annotations"]} == {
        moved["id"]: ("23-24", "23-24", "exact", True), gone["id"]: ("1", None, "orphaned", True)}
    assert events(root) == before + 2, "a repeat records nothing"
    shown = answer(capsys, root, "show", moved["id"])
    assert (shown["startLine"], shown["endLine"]) == (23, 24)
    assert answer(capsys, root, "show", gone["id"])["anchor"]["status"] == "orphaned"
    # list, after the move was recorded: the anchor is exact where it now is, and the move is shown
    listed = {item["id"]: item for item in answer(capsys, root, "list")["items"]}
    assert listed[moved["id"]]["anchor"]["status"] == "exact"
    last = listed[moved["id"]]["lastMove"]
    assert (last["from"], last["to"], last["status"]) == ("20-21", "23-24", "moved") and 0 < last["confidence"] <= 1
    assert listed[gone["id"]]["lastMove"]["to"] is None and listed[gone["id"]]["lastMove"]["status"] == "orphaned"


@pytest.mark.parametrize(("args", "code"), [
    (["show", "nope"], "VALIDATION_ERROR"),
    (["show", "ann_01M83NBMTG5DH0KMZKJHRSNKE6\n"], "VALIDATION_ERROR"),
    (["show", "ann_00000000000000000000000000"], "NOT_FOUND"),
    (["rm", "ann_00000000000000000000000000"], "NOT_FOUND"),
    (["edit", "ann_00000000000000000000000000", "--priority", "P0"], "NOT_FOUND"),
    (["add", "../etc/passwd", "1", "1", "x"], "VALIDATION_ERROR"),
    (["add", ".code3/keys/alice.key", "1", "1", "x"], "VALIDATION_ERROR"),
    (["add", "src/none.py", "1", "1", "x"], "NOT_FOUND"),
    (["add", "src/app.py", "30", "99", "x"], "VALIDATION_ERROR"),
    (["add", "src/app.py", "1", "1", "x", "--tags", "NOT OK"], "VALIDATION_ERROR"),
    (["add", "src/app.py", "1", "1", " "], "VALIDATION_ERROR"),
    (["list", "--limit", "0"], "VALIDATION_ERROR"),
    (["stitch", "--max-chars", "10"], "VALIDATION_ERROR"),
    (["stitch", "--ids", "ann_00000000000000000000000000"], "NOT_FOUND"),
])
def test_refusals_are_one_coded_line_and_a_hint(capsys: pytest.CaptureFixture[str], root: Path, args: list[str],
                                                code: str) -> None:
    before = events(root)
    status, out, err = loom(capsys, root, *args)
    assert status == 1 and out == ""
    lines = [line for line in err.strip().splitlines() if "created the identity" not in line]  # first-use notes
    assert lines[0].startswith(f"code3: {code}: ") and lines[1].startswith("  hint: ") and len(lines) == 2, err
    assert "Traceback" not in err
    assert events(root) == before, "a refusal writes nothing"
