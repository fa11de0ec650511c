"""ai-loom over MCP: the seed's three tools in the seed's shapes, the writes beside them, re-anchoring
recorded only by verify, and a secret annotation's text in no answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from adapters.keystore import Keystore
from code3.settings import Settings
from code3.wiring import build_services
from domain.knowledge.annotation import Annotation
from domain.knowledge.annotation_rules import parse_ann_id
from mcp_tools.ai_loom.reanchoring import verify_all
from mcp_tools.server import build_server
from mcp_tools.services import Services
from projections.knowledge import annotations as rows
from projections.knowledge.annotations import AnnotationIndex
from projections.runner import follow
from tests.answers import error_of

SOURCE = "\n".join(f"line {n}" for n in range(1, 41)) + "\n"
SECRET = "the-db-password-is-hunter2"


@pytest.fixture
def s(tmp_path: Path, database_url: str | None) -> Iterator[Services]:
    Keystore(Settings(project=tmp_path).keystore_dir).new("alice")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(SOURCE)
    services = build_services(Settings(project=tmp_path, identity="alice", database_url=database_url))
    yield services
    services.close()


def call(s: Services, tool: str, arguments: dict[str, Any], profile: str = "all") -> Any:
    async def go() -> Any:
        async with Client(build_server(lambda: s, profile=profile, version="t"), mode="legacy") as client:
            return await client.call_tool(tool, arguments)

    return anyio.run(go)


def ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def test_the_ai_loom_profile_exposes_exactly_the_seeds_three_read_only_tools(s: Services) -> None:
    async def go() -> Any:
        async with Client(build_server(lambda: s, profile="ai-loom", version="t"), mode="legacy") as client:
            return client.server_info, (await client.list_tools()).tools

    info, tools = anyio.run(go)
    assert info.name == "ai-loom"
    assert sorted(t.name for t in tools) == ["ai-loom.get_context", "ai-loom.list_contexts", "ai-loom.stitch"]
    assert all(t.annotations.read_only_hint for t in tools)


def test_list_get_and_stitch_answer_in_the_seeds_shapes(s: Services) -> None:
    made = ok(call(s, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": 12, "endLine": 14,
                                          "comment": "需要分页加载，避免大目录阻塞", "tags": ["perf"]}))
    assert made["id"].startswith("ann_") and made["priority"] == "P1"
    page = ok(call(s, "ai-loom.list_contexts", {"kind": "annotation", "limit": 10}))
    assert [i["id"] for i in page["items"]] == [made["id"]] and "nextOffset" not in page
    item = page["items"][0]
    assert {k: item[k] for k in ("filePath", "startLine", "endLine", "comment", "tags", "priority")} == {
        "filePath": "src/app.py", "startLine": 12, "endLine": 14, "comment": "需要分页加载，避免大目录阻塞",
        "tags": ["perf"], "priority": "P1"}
    assert ok(call(s, "ai-loom.get_context", {"id": made["id"]}))["comment"] == made["comment"]
    stitched = ok(call(s, "ai-loom.stitch", {"templateId": "concise", "maxChars": 2000}))
    assert set(stitched["stats"]) == {"annotations", "chars", "files", "truncated"}
    assert stitched["stats"]["annotations"] == 1 and "line 12" in stitched["prompt"]
    assert len(stitched["prompt"]) <= 2000 and stitched["stats"]["chars"] == len(stitched["prompt"])


def test_list_pages_with_next_offset(s: Services) -> None:
    for n in range(1, 6):
        ok(call(s, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": n, "endLine": n, "comment": f"c{n}"}))
    first = ok(call(s, "ai-loom.list_contexts", {"limit": 2}))
    assert len(first["items"]) == 2 and first["nextOffset"] == 2
    last = ok(call(s, "ai-loom.list_contexts", {"limit": 2, "offset": 4}))
    assert len(last["items"]) == 1 and "nextOffset" not in last


@pytest.mark.parametrize(("tool", "arguments", "code"), [
    ("ai-loom.get_context", {"id": "ann_00000000000000000000000000"}, "NOT_FOUND"),
    ("ai-loom.get_context", {"id": "nope"}, "VALIDATION_ERROR"),
    ("ai-loom.stitch", {"maxChars": 10}, "VALIDATION_ERROR"),
    ("ai-loom.list_contexts", {"limit": 0}, "VALIDATION_ERROR"),
    ("ai-loom.annotate", {"filePath": "../etc/passwd", "startLine": 1, "endLine": 1, "comment": "x"},
     "VALIDATION_ERROR"),
    ("ai-loom.annotate", {"filePath": ".code3/keys/alice.key", "startLine": 1, "endLine": 1, "comment": "x"},
     "VALIDATION_ERROR"),
    ("ai-loom.annotate", {"filePath": "src/app.py", "startLine": 30, "endLine": 99, "comment": "x"},
     "VALIDATION_ERROR"),
])
def test_errors_carry_the_seeds_codes_and_store_nothing(s: Services, tool: str, arguments: dict[str, Any],
                                                       code: str) -> None:
    before = s.store.recorder.max_notification_id()
    result = call(s, tool, arguments)
    assert error_of(result)["code"] == code
    assert s.store.recorder.max_notification_id() == before


def test_a_secret_annotations_text_appears_in_no_answer_and_not_in_the_log(s: Services) -> None:
    (s.project / "src" / "db.py").write_text(f"PASSWORD = '{SECRET}'\nUSER = 'app'\n")
    made = ok(call(s, "ai-loom.annotate", {"filePath": "src/db.py", "startLine": 1, "endLine": 1,
                                          "comment": f"rotate {SECRET}", "sensitivity": "secret"}))
    answers = [made, ok(call(s, "ai-loom.get_context", {"id": made["id"]})),
               ok(call(s, "ai-loom.list_contexts", {})), ok(call(s, "ai-loom.stitch", {"templateId": "detailed"})),
               ok(call(s, "ai-loom.stitch", {"annotationIds": [made["id"]]}))]
    for answer in answers:
        assert SECRET not in json.dumps(answer, ensure_ascii=False)
    logged = [json.dumps(vars(e), default=str) for e in s.store.repository.event_store.get(parse_ann_id(made["id"]))]
    assert not any(SECRET in line for line in logged), "the event log holds the secret sealed, never in clear"


def test_an_idempotent_create_answers_the_same_annotation(s: Services) -> None:
    args = {"filePath": "src/app.py", "startLine": 3, "endLine": 4, "comment": "c", "clientKey": "k-1"}
    first, again = ok(call(s, "ai-loom.annotate", args)), ok(call(s, "ai-loom.annotate", args))
    assert first["id"] == again["id"]
    assert error_of(call(s, "ai-loom.annotate", {**args, "comment": "other"}))["code"] == "VALIDATION_ERROR"


def test_read_tools_show_the_current_anchor_and_only_verify_records_it(s: Services) -> None:
    made = ok(call(s, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": 20, "endLine": 21, "comment": "x"}))
    (s.project / "src" / "app.py").write_text("new first line\nanother\n" + SOURCE)
    events = s.store.recorder.max_notification_id()
    shown = ok(call(s, "ai-loom.get_context", {"id": made["id"]}))
    assert (shown["startLine"], shown["endLine"]) == (22, 23) and shown["anchor"]["status"] != "orphaned"
    assert s.store.recorder.max_notification_id() == events, "a read tool records nothing"
    assert sum(verify_all(s).values()) == 1
    stored = s.store.get(Annotation, parse_ann_id(made["id"]))
    assert stored is not None and (stored.start_line, stored.end_line) == (22, 23)


def test_edit_and_delete(s: Services) -> None:
    made = ok(call(s, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": 5, "endLine": 5, "comment": "x"}))
    edited = ok(call(s, "ai-loom.edit", {"id": made["id"], "comment": "y", "priority": "P0"}))
    assert edited["comment"] == "y" and edited["priority"] == "P0"
    assert ok(call(s, "ai-loom.delete", {"id": made["id"]}))["deleted"] is True
    assert ok(call(s, "ai-loom.delete", {"id": made["id"]}))["deleted"] is False
    assert error_of(call(s, "ai-loom.get_context", {"id": made["id"]}))["code"] == "NOT_FOUND"


def test_the_annotation_store_rebuilt_from_the_log_equals_the_live_one(s: Services, tmp_path: Path) -> None:
    for n in range(1, 4):
        ok(call(s, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": n, "endLine": n + 1, "comment": f"{n}"}))
    ok(call(s, "ai-loom.list_contexts", {}))
    from adapters.sql import SqlDb

    fresh = SqlDb.sqlite(tmp_path / "rebuild.sqlite")
    try:
        follow(s.store, fresh, AnnotationIndex(s.store))
        assert rows.dump(fresh) == rows.dump(s.views)
    finally:
        fresh.close()
