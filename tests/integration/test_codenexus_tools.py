"""CodeNexus handlers on real stores (SQLite and PostgreSQL): the seed's answers, search, paging,
refusals with the seed's codes and nothing stored, idempotent repeats, and a rebuild equal to the live index."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from adapters.sql import SqlDb
from code3.settings import Settings
from code3.wiring import build_services
from mcp_tools.codenexus import extras, prompts, resources
from mcp_tools.codenexus.tools import add_comment, add_tag, create_relationship, query_files
from mcp_tools.services import Services
from projections.knowledge import codenexus

FILES = {"src/main.rs": "fn main() {}\n", "src/lib.rs": "pub fn run() {}\n", "src/bin/cli.rs": "fn main() {}\n",
         "config/app.toml": "[app]\n", "README.md": "# demo\n", ".env": "SECRET=1\n"}


def make_project(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def nexus(tmp_path: Path, database_url: str | None) -> Iterator[Services]:
    root = make_project(tmp_path / "project")
    s = build_services(Settings(project=root, database_url=database_url))
    yield s
    s.close()


def seed_example(s: Services) -> None:
    """The seed's own example: main.rs and lib.rs tagged and commented, main imports lib, cli calls main."""
    add_tag(s, "src/main.rs", ["backend", "core"])
    add_comment(s, "src/main.rs", "主入口文件，包含应用启动逻辑")
    add_tag(s, "src/lib.rs", ["backend", "library"])
    add_comment(s, "src/lib.rs", "核心库文件，提供主要功能")
    create_relationship(s, "src/main.rs", "src/lib.rs", "imports", "导入核心库函数")
    create_relationship(s, "src/bin/cli.rs", "src/main.rs", "calls", "CLI工具调用主函数")


def head(s: Services) -> int:
    return int(s.store.recorder.max_notification_id() or 0)


def error_code(call: Any) -> int:
    with pytest.raises(MCPError) as caught:
        call()
    data = caught.value.error.data
    assert set(data) == {"type", "details", "timestamp"} and data["timestamp"].endswith("Z")
    message = caught.value.error.message  # the label and the details' gist: a client may show the message only
    assert message.split(": ", 1)[0] in ("File not found", "Permission denied", "Validation failed"), message
    assert data["details"][:40] in message, message
    return caught.value.error.code


def test_the_write_tools_answer_in_the_seed_s_shape(nexus: Services) -> None:
    tagged = add_tag(nexus, "src/main.rs", ["backend", "core"])
    assert set(tagged) == {"success", "message", "added_tags", "total_tags", "updated_at"}
    assert tagged["success"] and tagged["added_tags"] == ["backend", "core"] and tagged["total_tags"] == 2
    assert tagged["message"] == "Successfully added 2 tags to src/main.rs"
    assert tagged["updated_at"].endswith("Z") and len(tagged["updated_at"]) == 20
    commented = add_comment(nexus, "src/main.rs", "主入口文件，包含应用启动逻辑")
    assert commented["comment_length"] == 14 and commented["message"] == "Successfully updated comment for src/main.rs"
    related = create_relationship(nexus, "./src/main.rs", "src/lib.rs", "imports", "导入核心库函数")
    assert related["relationship"] == {"source": "src/main.rs", "target": "src/lib.rs", "type": "imports",
                                       "description": "导入核心库函数", "origin": "manual"}
    assert related["message"] == "Successfully created relationship between src/main.rs and src/lib.rs"
    assert related["created_at"].endswith("Z")


def test_repeating_a_write_records_no_event(nexus: Services) -> None:
    seed_example(nexus)
    before = head(nexus)
    again = add_tag(nexus, "src/main.rs", ["core", "backend"])
    assert again["added_tags"] == [] and again["total_tags"] == 2
    add_comment(nexus, "src/main.rs", "主入口文件，包含应用启动逻辑")
    create_relationship(nexus, "src/main.rs", "src/lib.rs", "imports", "导入核心库函数")
    extras.describe_tag(nexus, "backend", "后端相关文件", "#ff6b6b")
    described = head(nexus)
    extras.describe_tag(nexus, "backend", "后端相关文件", "#ff6b6b")
    assert head(nexus) == described == before + 1


def test_query_files_finds_by_tags_and_comment_words_on_both_stores(nexus: Services) -> None:
    seed_example(nexus)
    found = query_files(nexus, tags=["backend"])
    assert set(found) == {"success", "results", "total_count", "query_time_ms"}
    assert [r["file_path"] for r in found["results"]] == ["src/main.rs", "src/lib.rs"]
    assert found["results"][0] == {"file_path": "src/main.rs", "tags": ["backend", "core"],
                                   "comment": "主入口文件，包含应用启动逻辑", "match_reason": "tags: backend"}
    assert [r["file_path"] for r in query_files(nexus, tags=["backend", "core"])["results"]] == ["src/main.rs"]
    assert query_files(nexus, tags=["backend", "nothing"])["total_count"] == 0
    started = query_files(nexus, comment_contains="启动")
    assert [r["file_path"] for r in started["results"]] == ["src/main.rs"]
    assert started["results"][0]["match_reason"] == "comment contains: 启动"
    for words, expected in (("核心库", ["src/lib.rs"]), ("文件", ["src/main.rs", "src/lib.rs"]),
                            ("启", ["src/main.rs"]), ("应用启动逻辑", ["src/main.rs"]),
                            ("启动 逻辑", ["src/main.rs"]), ("启动 核心", []),
                            ("逻辑启动", [])):
        assert [r["file_path"] for r in query_files(nexus, comment_contains=words)["results"]] == expected, words
    add_comment(nexus, "README.md", "Start HERE: the Quick-start guide")
    for words in ("quick-start", "START here", "here:"):
        assert [r["file_path"] for r in query_files(nexus, comment_contains=words)["results"]] == ["README.md"]
    both = query_files(nexus, tags=["backend"], comment_contains="启动")
    assert both["results"][0]["match_reason"] == "tags: backend; comment contains: 启动"


def test_query_files_follows_relationships_in_both_directions(nexus: Services) -> None:
    seed_example(nexus)
    around_main = query_files(nexus, related_to="src/main.rs")
    assert {r["file_path"]: r["match_reason"] for r in around_main["results"]} == {
        "src/lib.rs": "src/main.rs imports this file", "src/bin/cli.rs": "calls src/main.rs"}
    assert [r["file_path"] for r in query_files(nexus, related_to="src/main.rs", relationship_type="calls")[
        "results"]] == ["src/bin/cli.rs"]
    assert {r["file_path"] for r in query_files(nexus, relationship_type="imports")["results"]} == {
        "src/main.rs", "src/lib.rs"}
    assert query_files(nexus, related_to="README.md")["total_count"] == 0  # exists, no metadata
    assert error_code(lambda: query_files(nexus, related_to="src/gone.rs")) == -32000


def test_query_files_pages_with_limit_and_offset(nexus: Services) -> None:
    for i in range(7):
        path = nexus.project / f"pkg/m{i}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text("x = 1\n")
        add_tag(nexus, f"pkg/m{i}.py", ["module"])
    first = query_files(nexus, tags=["module"], limit=3)
    assert first["total_count"] == 7 and len(first["results"]) == 3 and first["next_offset"] == 3
    pages = [first, query_files(nexus, tags=["module"], limit=3, offset=3),
             query_files(nexus, tags=["module"], limit=3, offset=6)]
    assert "next_offset" not in pages[2]
    assert [r["file_path"] for p in pages for r in p["results"]] == [f"pkg/m{i}.py" for i in range(7)]
    assert query_files(nexus)["total_count"] == 7 and len(query_files(nexus)["results"]) == 7
    assert query_files(nexus, tags=["module"], offset=50)["results"] == []
    for bad in (0, 101, True, -1):
        assert error_code(lambda b=bad: query_files(nexus, limit=b)) == -32002


def test_bad_input_answers_its_seed_code_and_stores_nothing(nexus: Services) -> None:
    seed_example(nexus)
    root = nexus.project
    (root / "escape").symlink_to(root.parent)
    (root / "outside.rs").symlink_to(root.parent / "elsewhere.rs")
    (root.parent / "elsewhere.rs").write_text("x")
    before = head(nexus)
    cases = {
        -32001: [lambda: add_tag(nexus, "../project/src/main.rs", ["ok"]),
                 lambda: add_tag(nexus, str(root / "src/main.rs"), ["ok"]),
                 lambda: add_tag(nexus, "/etc/passwd", ["ok"]),
                 lambda: add_tag(nexus, "src/../../x", ["ok"]),
                 lambda: add_tag(nexus, "outside.rs", ["ok"]),
                 lambda: add_tag(nexus, "escape/elsewhere.rs", ["ok"]),
                 lambda: add_tag(nexus, ".code3/events.sqlite", ["ok"]),
                 lambda: add_comment(nexus, ".env", "secret"),
                 lambda: create_relationship(nexus, "src/main.rs", ".git/config", "imports")],
        -32000: [lambda: add_tag(nexus, "src/nope.rs", ["ok"]),
                 lambda: create_relationship(nexus, "src/main.rs", "src/nope.rs", "imports")],
        -32002: [lambda: add_tag(nexus, "src/main.rs", ["Backend"]),
                 lambda: add_tag(nexus, "src/main.rs", ["x"]),
                 lambda: add_tag(nexus, "src/main.rs", []),
                 lambda: add_tag(nexus, "src", ["ok"]),
                 lambda: add_tag(nexus, "src/main\x00.rs", ["ok"]),
                 lambda: add_comment(nexus, "src/main.rs", "长" * 2001),
                 lambda: create_relationship(nexus, "src/main.rs", "src/lib.rs", "uses"),
                 lambda: create_relationship(nexus, "src/main.rs", "src/lib.rs", "calls", "d" * 501),
                 lambda: create_relationship(nexus, "src/main.rs", "./src/main.rs", "imports"),
                 lambda: create_relationship(nexus, "src/main.rs", "src/lib.rs", "imports", "a different text"),
                 lambda: query_files(nexus, relationship_type="uses"),
                 lambda: query_files(nexus, tags=["NOPE"]),
                 lambda: extras.describe_tag(nexus, "backend", "x", "red")],
    }
    for expected, calls in cases.items():
        for i, call in enumerate(calls):
            assert error_code(call) == expected, (expected, i)
    assert head(nexus) == before, "a refused call stored nothing"


def test_the_extra_tools_untag_unrelate_and_describe(nexus: Services) -> None:
    seed_example(nexus)
    removed = extras.remove_tag(nexus, "src/lib.rs", ["library", "absent"])
    assert removed["removed_tags"] == ["library"] and removed["total_tags"] == 1
    gone = extras.remove_relationship(nexus, "src/main.rs", "src/lib.rs", "imports")
    assert gone["removed"] and not extras.remove_relationship(nexus, "src/main.rs", "src/lib.rs", "imports")["removed"]
    assert resources.file_relationships(nexus, "src/lib.rs")["relationship_count"] == {
        "outgoing": 0, "incoming": 0, "total": 0}
    extras.describe_tag(nexus, "backend", "后端相关文件", "#FF6B6B")
    tags = {t["name"]: t for t in resources.all_tags(nexus)["tags"]}
    assert tags["backend"]["description"] == "后端相关文件" and tags["backend"]["color"] == "#ff6b6b"
    assert tags["backend"]["file_count"] == 2 and "library" not in tags
    assert error_code(lambda: extras.remove_tag(nexus, "src/gone.rs", ["x1"])) == -32000


def test_resources_answer_in_the_seed_s_shape_with_both_directions(nexus: Services) -> None:
    seed_example(nexus)
    meta = resources.file_metadata(nexus, "src/main.rs")
    assert set(meta) == {"file_path", "hash", "tags", "comment", "relationships", "updated_at"}
    assert meta["hash"].startswith("sha256:") and meta["tags"] == ["backend", "core"]
    assert meta["relationships"] == [{"target": "src/lib.rs", "type": "imports", "description": "导入核心库函数",
                                      "origin": "manual"}]
    rel = resources.file_relationships(nexus, "src/main.rs")
    assert rel["outgoing_relationships"][0]["target"] == "src/lib.rs"
    assert rel["incoming_relationships"] == [{"source": "src/bin/cli.rs", "type": "calls",
                                              "description": "CLI工具调用主函数", "origin": "manual"}]
    assert rel["relationship_count"] == {"outgoing": 1, "incoming": 1, "total": 2}
    bare = resources.file_metadata(nexus, "README.md")
    assert bare["tags"] == [] and bare["relationships"] == [] and bare["updated_at"] is None
    tags = resources.all_tags(nexus)
    assert tags["total_count"] == 3 and tags["tags"][0]["name"] == "backend" and tags["tags"][0]["file_count"] == 2
    assert error_code(lambda: resources.file_metadata(nexus, "src/gone.rs")) == -32000
    assert error_code(lambda: resources.file_relationships(nexus, "../x")) == -32001


def test_prompts_are_filled_with_real_numbers(nexus: Services) -> None:
    seed_example(nexus)
    text = prompts.analyze_file_relationships(nexus, "src/main.rs")
    assert "分析文件 src/main.rs 的关系和依赖" in text and "- 标签：backend, core" in text
    assert "- 出向关系：src/lib.rs (imports: 导入核心库函数)" in text
    assert "- 入向关系：src/bin/cli.rs (calls: CLI工具调用主函数)" in text
    project = prompts.suggest_refactoring(nexus, "project")
    assert "- 文件数量：3" in project and "2 relationships" in project and "backend: 2" in project
    module = prompts.suggest_refactoring(nexus, "src/bin")
    assert "module src/bin" in module and "- 文件数量：1" in module and "crossing its boundary" in module
    assert "file src/lib.rs" in prompts.suggest_refactoring(nexus, "file:src/lib.rs")
    assert error_code(lambda: prompts.suggest_refactoring(nexus, "nowhere/at/all")) == -32000


def test_another_process_s_writes_are_read_at_once(nexus: Services, database_url: str | None) -> None:
    other = build_services(Settings(project=nexus.project, database_url=database_url))
    try:
        add_tag(other, "src/main.rs", ["backend"])
        assert query_files(nexus, tags=["backend"])["total_count"] == 1
        add_tag(nexus, "src/lib.rs", ["backend"])
        assert query_files(other, tags=["backend"])["total_count"] == 2
    finally:
        other.close()


def test_a_rebuild_from_the_log_equals_the_live_index(nexus: Services, tmp_path: Path) -> None:
    seed_example(nexus)
    extras.describe_tag(nexus, "core", "核心功能文件", "#4ecdc4")
    extras.remove_tag(nexus, "src/lib.rs", ["library"])
    add_comment(nexus, "src/lib.rs", "核心库文件，提供主要功能 (rewritten)")
    extras.remove_relationship(nexus, "src/bin/cli.rs", "src/main.rs", "calls")
    query_files(nexus)  # catch up
    live = codenexus.dump(nexus.views)
    answers = query_files(nexus, comment_contains="核心"), resources.all_tags(nexus)
    fresh = SqlDb.sqlite(tmp_path / "rebuilt.sqlite")
    codenexus.catch_up(nexus.store, fresh)
    assert codenexus.dump(fresh) == live
    fresh.close()
    codenexus.rebuild(nexus.store, nexus.views)
    assert codenexus.dump(nexus.views) == live
    assert (query_files(nexus, comment_contains="核心")["results"], resources.all_tags(nexus)) == (
        answers[0]["results"], answers[1])


@pytest.mark.skipif(not os.environ.get("CODE3_TEST_POSTGRES"), reason="set CODE3_TEST_POSTGRES to compare stores")
def test_sqlite_and_postgresql_give_the_same_answers(tmp_path: Path, database_url: str | None) -> None:
    if database_url is None:
        pytest.skip("runs once, from the PostgreSQL parameter")
    answers = []
    for url in (None, database_url):
        s = build_services(Settings(project=make_project(tmp_path / ("pg" if url else "lite")), database_url=url))
        try:
            seed_example(s)
            add_comment(s, "README.md", "Start HERE: the Quick-start guide 启动")
            found = [query_files(s, **q)["results"] for q in (
                {"tags": ["backend"]}, {"comment_contains": "启动"}, {"comment_contains": "START"},
                {"related_to": "src/main.rs"}, {"relationship_type": "calls"}, {"limit": 2, "offset": 1})]
            answers.append((found, [t | {"created_at": None} for t in resources.all_tags(s)["tags"]]))
        finally:
            s.close()
    assert answers[0] == answers[1]


def test_a_broad_count_that_needs_row_checks_is_an_estimate_and_says_so(nexus: Services, monkeypatch) -> None:
    from projections.knowledge import codenexus_queries

    monkeypatch.setattr(codenexus_queries, "SCAN_CAP", 4)
    for i in range(10):
        path = nexus.project / f"pkg/m{i}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text("x = 1\n")
        add_tag(nexus, f"pkg/m{i}.py", ["module"])
        add_comment(nexus, f"pkg/m{i}.py", "alpha" if i % 2 else "beta")
    single = query_files(nexus, tags=["module"], limit=2)
    assert single["total_count"] == 10 and "total_count_exact" not in single, "one index: an exact count"
    broad = query_files(nexus, tags=["module"], comment_contains="alpha", limit=2)
    assert broad["total_count_exact"] is False and broad["total_count"] >= 2
    assert [r["file_path"] for r in broad["results"]] == ["pkg/m1.py", "pkg/m3.py"], "the page itself is exact"
    last = query_files(nexus, tags=["module"], comment_contains="alpha", limit=10)
    assert last["total_count"] == 5 and "total_count_exact" not in last, "the last page knows the count"


def test_an_index_of_another_version_is_rebuilt_from_the_log(nexus: Services, database_url: str | None) -> None:
    from adapters.sql import open_db

    seed_example(nexus)
    query_files(nexus)
    live = codenexus.dump(nexus.views)
    with nexus.views.transaction() as cur:
        cur.execute("UPDATE projection_tracking SET version = 1 WHERE name = 'codenexus'")
        cur.execute("DELETE FROM nexus_file_tags")
    later = open_db(nexus.project, database_url)  # the next process to open the index
    try:
        codenexus.catch_up(nexus.store, later)
        assert codenexus.dump(later) == live
        assert later.query("SELECT version FROM projection_tracking WHERE name = 'codenexus'") == [(2,)]
    finally:
        later.close()


@pytest.mark.parametrize(("kept", "rebuilt"), [(2, False), (1, True)])
def test_an_index_from_before_tracked_versions_is_adopted_or_rebuilt_by_its_own_version_row(
        nexus: Services, database_url: str | None, kept: int, rebuilt: bool) -> None:
    from adapters.sql import open_db

    seed_example(nexus)
    query_files(nexus)
    live = codenexus.dump(nexus.views)
    position = codenexus.position(nexus.views)
    with nexus.views.transaction() as cur:  # as the code before tracked versions left it
        cur.execute("UPDATE projection_tracking SET version = NULL WHERE name = 'codenexus'")
        cur.execute("INSERT INTO nexus_counts (key, n) VALUES ('schema', ?)", (kept,))
        cur.execute("DELETE FROM nexus_file_tags WHERE tag = 'core'")  # a mark: gone only if rebuilt
    later = open_db(nexus.project, database_url)
    try:
        assert codenexus.catch_up(nexus.store, later) == (position if rebuilt else 0)
        tags = codenexus.dump(later)["nexus_file_tags"]
        assert (tags == live["nexus_file_tags"]) is rebuilt
        assert later.query("SELECT position, version FROM projection_tracking WHERE name = 'codenexus'") == [
            (position, 2)]
    finally:
        later.close()
