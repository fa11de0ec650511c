"""ai-loom against a hostile model and a hostile file (issue 18): a sensitivity only rises over MCP and REST
and is lowered by the owner at the CLI (class 2); a credential in an annotated line or a comment is never in
the event store, the audit export or an answer, and re-anchoring still finds it (class 6); a clientKey
replay is no guessing oracle and ids are not derivable from the key, and racing edits all land (class 7)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from adapters.keystore import Keystore
from code3.cli import main
from code3.settings import Settings
from code3.wiring import build_services
from domain.knowledge.annotation import Annotation
from domain.knowledge.annotation_rules import format_ann_id, parse_ann_id
from mcp_tools.ai_loom import access, owner, reanchoring
from mcp_tools.ai_loom import tools as loom
from mcp_tools.ai_loom.rest import build_rest
from mcp_tools.binding import Runtime
from mcp_tools.services import Services
from projections.audit_log import export
from projections.knowledge import annotations as rows
from tests.answers import error_of, error_text
from tests.integration.test_ai_loom_tools import SECRET, SOURCE, call, ok

TOKEN = "ghp_" + "Zq7XcV2bN4mK8pL1rT6yW3sD9fG5hJ0aQeRt"  # a GitHub token's shape: ghp_ and 36 characters
AWS = "AKIA" + "QWERTYUIOPASDFGH"
CONFIG = "\n".join(["import os", "", "DEBUG = False", f"GITHUB_TOKEN = '{TOKEN}'", "TIMEOUT = 30", ""]) + SOURCE


def project(tmp_path: Path) -> Path:
    keys = Keystore(Settings(project=tmp_path).keystore_dir)
    if "alice" not in keys.names():
        keys.new("alice")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(SOURCE)
    (tmp_path / "src" / "db.py").write_text(f"PASSWORD = '{SECRET}'\nUSER = 'app'\n")
    (tmp_path / "src" / "config.py").write_text(CONFIG)
    return tmp_path


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Services]:
    services = build_services(Settings(project=project(tmp_path), identity="alice"))
    yield services
    services.close()


def stored(s: Services) -> bytes:
    """Every row of the event store as it is on disk (the notification log)."""
    rows = s.store.recorder.select_notifications(start=1, limit=100_000)
    return b"\n".join(n.state for n in rows)


def events(s: Services) -> int:
    return int(s.store.recorder.max_notification_id() or 0)


def secret_one(s: Services, sensitivity: str = "secret") -> dict[str, Any]:
    return ok(call(s, "ai-loom.annotate", {"filePath": "src/db.py", "startLine": 1, "endLine": 1,
                                          "comment": f"rotate {SECRET}", "sensitivity": sensitivity}))


# class 2: the model cannot lower a sensitivity


@pytest.mark.parametrize(("level", "lower"), [("secret", "public"), ("secret", "internal"), ("internal", "public")])
def test_over_mcp_a_sensitivity_only_rises(s: Services, level: str, lower: str) -> None:
    made = secret_one(s, level)
    before = events(s)
    refused = call(s, "ai-loom.edit", {"id": made["id"], "sensitivity": lower, "comment": "and this too"})
    error = error_of(refused)
    assert error["code"] == "VALIDATION_ERROR" and f"code3 loom lower {made['id']} --to {lower}" in error["hint"]
    assert SECRET not in error_text(refused)
    assert events(s) == before, "a refused lowering changes nothing"
    shown = ok(call(s, "ai-loom.get_context", {"id": made["id"]}))
    assert shown["sensitivity"] == level and shown["comment"] is None and SECRET not in json.dumps(shown)
    assert SECRET.encode() not in stored(s)


def test_over_mcp_a_sensitivity_may_rise(s: Services) -> None:
    made = ok(call(s, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": 2, "endLine": 2, "comment": "c"}))
    raised = ok(call(s, "ai-loom.edit", {"id": made["id"], "sensitivity": "internal"}))
    assert raised["sensitivity"] == "internal" and raised["comment"] is None, "internal is not shared by default"


def test_over_rest_a_lowering_is_refused_and_changes_nothing(s: Services) -> None:
    api = TestClient(build_rest(Runtime(lambda: s).run))
    made = secret_one(s)
    before = events(s)
    for lower in ("public", "internal"):
        answer = api.patch(f"/annotations/{made['id']}", json={"sensitivity": lower})
        assert answer.status_code == 422 and answer.json()["code"] == "VALIDATION_ERROR"
        assert "code3 loom lower" in answer.json()["hint"] and SECRET not in answer.text
    assert events(s) == before
    assert api.get(f"/annotations/{made['id']}").json()["sensitivity"] == "secret"


def cli(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["loom", *args, "--project", str(root), "--identity", "alice"])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_owner_lowers_at_the_cli_explicitly_and_it_is_recorded(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    root = project(tmp_path)
    s = build_services(Settings(project=root, identity="alice"))
    try:
        made = secret_one(s)
        before = events(s)
    finally:
        s.close()
    code, out, err = cli(capsys, root, "edit", made["id"], "--sensitivity", "public")
    assert code == 1 and "VALIDATION_ERROR" in err and "code3 loom lower" in err, "edit never lowers, at the CLI too"
    code, out, err = cli(capsys, root, "lower", made["id"], "--to", "public")  # stdin is not a terminal here
    assert code == 1 and "confirmation" in err and "--yes" in err and out == ""
    code, out, err = cli(capsys, root, "lower", made["id"], "--to", "public", "--yes")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["from"] == "secret" and answer["to"] == "public" and answer["lowered"] is True
    assert "alice" in answer["by"] and SECRET not in out + err
    s = build_services(Settings(project=root, identity="alice"))
    try:
        assert events(s) == before + 1
        [*_, last] = s.store.repository.event_store.get(parse_ann_id(made["id"]))
        assert type(last).__name__ == "SensitivityLowered" and last.to_sensitivity == "public" and "alice" in last.by
        assert SECRET.encode() not in stored(s), "the text stays sealed in the log once lowered"
        shown = ok(call(s, "ai-loom.get_context", {"id": made["id"]}))
        assert shown["sensitivity"] == "public" and shown["comment"] == f"rotate {SECRET}"
    finally:
        s.close()


# class 6: credentials in what Code3 stores or sends


def test_a_credential_in_annotated_lines_or_a_comment_is_stored_sealed_and_never_sent(s: Services,
                                                                                      tmp_path: Path) -> None:
    made = ok(call(s, "ai-loom.annotate", {"filePath": "src/config.py", "startLine": 3, "endLine": 5,
                                          "comment": f"move the token to the environment (and {AWS})"}))
    plain = ok(call(s, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": 1, "endLine": 1,
                                           "comment": "nothing secret"}))
    edited = ok(call(s, "ai-loom.edit", {"id": plain["id"], "comment": f"someone pasted {TOKEN} here"}))
    answers = [made, edited, ok(call(s, "ai-loom.get_context", {"id": made["id"]})),
               ok(call(s, "ai-loom.list_contexts", {})), ok(call(s, "ai-loom.stitch", {"templateId": "detailed"})),
               ok(call(s, "ai-loom.stitch", {"annotationIds": [made["id"]], "templateId": "concise"}))]
    for answer in answers:
        text = json.dumps(answer)
        assert TOKEN not in text and AWS not in text and "ghp_" not in text
    assert "REDACTED" in json.dumps(answers[4]) and "move the token" in json.dumps(answers[4])
    assert TOKEN.encode() not in stored(s) and AWS.encode() not in stored(s), "the event store holds them sealed"
    ok(call(s, "ai-loom.list_contexts", {}))  # the annotation store has caught up
    views = json.dumps([list(map(str, row)) for row in rows.dump(s.views)])
    assert made["id"] in views and TOKEN not in views and AWS not in views, "nor does the annotation store"
    out = tmp_path / "audit.jsonl"
    export(s.store, out, s.signer)
    assert TOKEN not in out.read_text() and AWS not in out.read_text()
    # re-anchoring still finds the sealed lines by their quoted text
    (s.project / "src" / "config.py").write_text("# header\n# more\n" + CONFIG)
    reanchoring.verify_all(s)
    stored_one = s.store.get(Annotation, parse_ann_id(made["id"]))
    assert stored_one is not None and (stored_one.start_line, stored_one.end_line) == (5, 7)
    assert stored_one.status != "orphaned" and TOKEN.encode() not in stored(s)
    assert owner.reveal(s, made["id"])["comment"].endswith(f"{AWS})"), "the owner's CLI still opens it"


# class 7: no guessing oracle in a clientKey replay; racing edits


def test_a_replay_answers_the_same_whether_a_guess_at_a_secret_is_right_or_wrong(s: Services) -> None:
    args = {"filePath": "src/db.py", "startLine": 1, "endLine": 1, "comment": f"rotate {SECRET}",
            "sensitivity": "secret", "clientKey": "db-password"}
    first = ok(call(s, "ai-loom.annotate", args))
    before = events(s)
    right = ok(call(s, "ai-loom.annotate", args))
    wrong = ok(call(s, "ai-loom.annotate", {**args, "comment": "rotate hunter3"}))
    assert right == wrong and right["id"] == first["id"], "a wrong guess and the right one answer alike"
    assert events(s) == before
    public = {"filePath": "src/app.py", "startLine": 2, "endLine": 2, "comment": "readable", "clientKey": "p-1"}
    ok(call(s, "ai-loom.annotate", public))
    assert error_of(call(s, "ai-loom.annotate", {**public, "comment": "other"}))["code"] == "VALIDATION_ERROR", \
        "a text the caller can read anyway is still checked"


def test_ids_are_not_derivable_from_the_client_key(s: Services, tmp_path_factory: pytest.TempPathFactory) -> None:
    from domain.canonical import natural_id

    made = ok(call(s, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": 3, "endLine": 3, "comment": "c",
                                          "clientKey": "k-1"}))
    assert made["id"] != format_ann_id(natural_id("annotation", "k-1"))
    other = build_services(Settings(project=project(tmp_path_factory.mktemp("other")), identity="alice"))
    try:
        there = ok(call(other, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": 3, "endLine": 3,
                                                    "comment": "c", "clientKey": "k-1"}))
    finally:
        other.close()
    assert there["id"] != made["id"], "keyed by each project's own secret"


def test_racing_edits_all_land(tmp_path: Path) -> None:
    root = project(tmp_path)
    setup = build_services(Settings(project=root, identity="alice"))
    made = ok(call(setup, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": 4, "endLine": 4,
                                              "comment": "start"}))
    setup.close()
    racers = 12
    answers: list[Any] = [None] * racers
    go = threading.Barrier(racers)

    def racer(n: int) -> None:
        s = build_services(Settings(project=root, identity="alice"))
        try:
            go.wait()
            answers[n] = loom.edit(s, id=made["id"], comment=f"racer {n}", tags=[f"r{n:02d}"])
        except Exception as exc:  # recorded, asserted below
            answers[n] = exc
        finally:
            s.close()

    threads = [threading.Thread(target=racer, args=(n,)) for n in range(racers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    failed = [a for a in answers if not isinstance(a, dict)]
    assert failed == [], f"every racer lands: {failed}"
    check = build_services(Settings(project=root, identity="alice"))
    try:
        history = check.store.repository.event_store.get(parse_ann_id(made["id"]))
        assert [type(e).__name__ for e in history].count("Edited") == racers, "each edit recorded once"
    finally:
        check.close()


def test_re_anchoring_racing_an_edit_keeps_the_edit_and_records_the_move(s: Services,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    made = ok(call(s, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": 6, "endLine": 6, "comment": "c"}))
    stale = s.store.get(Annotation, parse_ann_id(made["id"]))  # what the worker loaded before the edit landed
    ok(call(s, "ai-loom.edit", {"id": made["id"], "comment": "edited meanwhile", "priority": "P0"}))
    (s.project / "src" / "app.py").write_text("inserted\n" + SOURCE)
    monkeypatch.setattr(access, "load", lambda _s, _id: stale)
    counts = reanchoring.verify_all(s)  # its first save conflicts with the edit: retried on the edit's result
    assert sum(counts.values()) == 1 and "orphaned" not in counts, counts
    now = s.store.get(Annotation, parse_ann_id(made["id"]))
    assert now is not None and now.comment == "edited meanwhile" and now.priority == "P0" and now.start_line == 7


def test_an_annotation_keyed_before_keyed_ids_is_still_found_by_its_key(s: Services) -> None:
    from datetime import UTC, datetime

    from domain.knowledge.anchor import Anchor

    old = Annotation.create(file_path="src/app.py", anchor=Anchor.capture(SOURCE, 7, 7), comment="old",
                            at=datetime.now(UTC), client_key="legacy-key")  # the id the raw key gave
    s.store.save(old)
    before = events(s)
    again = ok(call(s, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": 7, "endLine": 7, "comment": "old",
                                           "clientKey": "legacy-key"}))
    assert again["id"] == old.ann_id and events(s) == before
