"""The code knowledge pages on real stores: a file's tags, comment, relationships (and their graph) and its
annotations beside its lines; a secret annotation as a place only, an internal one as the server's setting
says; paths the resolver refuses are a 404 whatever is known of them; the list pages and filters by tag."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from adapters.keystore import Keystore
from code3.settings import Settings
from code3.wiring import build_services
from mcp_tools.ai_loom import tools as loom
from mcp_tools.codenexus.tools import add_comment, add_tag, create_relationship
from mcp_tools.services import Services
from mcp_tools.web import knowledge

SECRET = "the-db-password-is-hunter2"
INTERNAL = "we-ship-this-before-the-audit"
SOURCE = "\n".join(f"line {n} <b>" for n in range(1, 31)) + "\n"


@pytest.fixture
def s(tmp_path: Path, database_url: str | None) -> Iterator[Services]:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(SOURCE)
    (root / "src" / "util.py").write_text("def helper():\n    return 1\n")
    (root / "src" / "cli.py").write_text("import app\n")
    Keystore(Settings(project=root).keystore_dir).new("alice")
    services = build_services(Settings(project=root, identity="alice", database_url=database_url))
    add_tag(services, "src/app.py", ["backend", "entry"])
    add_comment(services, "src/app.py", "The application's entry point")
    add_tag(services, "src/util.py", ["backend"])
    create_relationship(services, "src/app.py", "src/util.py", "imports", "helpers")
    create_relationship(services, "src/cli.py", "src/app.py", "calls", "")
    loom.annotate(services, filePath="src/app.py", startLine=3, endLine=5, comment="paginate here", tags=["perf"])
    loom.annotate(services, filePath="src/app.py", startLine=10, endLine=12, comment=SECRET, tags=["keys"],
                  sensitivity="secret")
    loom.annotate(services, filePath="src/app.py", startLine=20, endLine=20, comment=INTERNAL,
                  sensitivity="internal")
    yield services
    services.close()


class Web:
    """What knowledge.routes needs of mcp_tools.web.app.Web: reads through one set of services."""

    def __init__(self, s: Services) -> None:
        self.s = s

    async def read(self, fn: Any) -> Any:
        return fn(self.s)


def client(s: Services) -> TestClient:
    return TestClient(Starlette(routes=knowledge.routes(Web(s))))


def test_a_files_page_shows_tags_comment_relationships_and_annotations_beside_their_lines(s: Services) -> None:
    view = knowledge.file_view(s, "src/app.py")
    assert view is not None and view.tags == ["backend", "entry"] and view.comment == "The application's entry point"
    assert [(r["target"], r["type"]) for r in view.outgoing] == [("src/util.py", "imports")]
    assert [(r["source"], r["type"]) for r in view.incoming] == [("src/cli.py", "calls")]
    assert view.lines is not None and len(view.lines) == 30
    starts = {line.number: [n.sensitivity for n in line.notes] for line in view.lines if line.notes}
    assert starts == {3: ["public"], 10: ["secret"], 20: ["internal"]}
    assert [line.number for line in view.lines if line.marked] == [3, 4, 5, 10, 11, 12, 20]
    assert {line.number: line.side for line in view.lines if line.side != 1} == {3: 3, 4: 0, 5: 0, 10: 3, 11: 0,
                                                                                12: 0}
    html = client(s).get("/files/src/app.py").text
    for shown in ("backend", "entry point", "src/util.py", "src/cli.py", "imports", "paginate here", 'id="L30"',
                  "line 7 &lt;b&gt;", "<svg", "<title id=\"graph-title\">Relationships of src/app.py</title>"):
        assert shown in html, shown
    assert 'href="/files/src/util.py"' in html and 'href="/files/src/cli.py"' in html


def test_notes_beside_their_lines_share_a_cell_up_to_the_next_note_and_stay_inside_the_file() -> None:
    def note(start: int, end: int) -> knowledge.Note:
        return knowledge.Note(start, end, "public", "P1", f"{start}-{end}")

    lines = knowledge.lines_with_notes("x\n" * 12, [note(3, 10), note(5, 6), note(5, 8), note(11, 40), note(50, 60)])
    assert {line.number: [n.comment for n in line.notes] for line in lines if line.notes} == {
        3: ["3-10"], 5: ["5-6", "5-8"], 11: ["11-40"], 12: ["50-60"]}
    assert [line.side for line in lines] == [1, 1, 2, 0, 4, 0, 0, 0, 1, 1, 1, 1]
    assert sum(line.side for line in lines) == len(lines)  # every row has exactly one side cell over it


def test_a_secret_annotation_is_a_place_only_and_an_internal_one_as_the_server_says(s: Services) -> None:
    [secret] = [n for n in knowledge.file_view(s, "src/app.py").notes if n.sensitivity == "secret"]
    assert (secret.start_line, secret.end_line, secret.comment, secret.tags, secret.priority) == (10, 12, None, (),
                                                                                                 None)
    html = client(s).get("/files/src/app.py").text
    assert SECRET not in html and "hunter2" not in html and "keys" not in html
    assert INTERNAL not in html and "this server does not share internal notes" in html
    s.loom_share_internal = True
    assert INTERNAL in client(s).get("/files/src/app.py").text
    assert SECRET not in client(s).get("/files/src/app.py").text


@pytest.mark.parametrize("path", ["../outside.py", ".code3/events.sqlite", "src/server.key", "src/out.py",
                                  "src/nothing.py", "src", "%2e%2e/outside.py"])
def test_a_path_the_resolver_refuses_or_nothing_is_known_of_is_a_404(s: Services, path: str) -> None:
    (s.project.parent / "outside.py").write_text("secret = 1\n")
    (s.project / "src" / "server.key").write_text("-----BEGIN PRIVATE KEY-----\n")
    (s.project / "src" / "out.py").symlink_to(s.project.parent / "outside.py")
    answer = client(s).get(f"/files/{path}")
    assert answer.status_code == 404, answer.text[:300]
    assert "secret = 1" not in answer.text and "PRIVATE KEY" not in answer.text


def test_a_file_gone_from_the_tree_keeps_its_knowledge_page_and_a_big_one_shows_no_lines(s: Services) -> None:
    (s.project / "src" / "util.py").unlink()
    gone = knowledge.file_view(s, "src/util.py")
    assert gone is not None and gone.lines is None and gone.tags == ["backend"] and "work tree" in (gone.unshown or "")
    (s.project / "src" / "big.py").write_text("x = 1\n" * (knowledge.MAX_SHOWN_BYTES // 6 + 10))
    add_tag(s, "src/big.py", ["huge"])
    big = knowledge.file_view(s, "src/big.py")
    assert big is not None and big.lines is None and big.tags == ["huge"]


def test_the_list_pages_and_filters_by_tag(s: Services) -> None:
    listed = knowledge.file_list(s, None, 0)
    assert [r.path for r in listed.rows] == ["src/app.py", "src/util.py", "src/cli.py"] and listed.total == 3
    assert [r.path for r in knowledge.file_list(s, "entry", 0).rows] == ["src/app.py"]
    html = client(s).get("/files?tag=backend").text
    assert "src/app.py" in html and "src/util.py" in html and "src/cli.py" not in html
    assert client(s).get("/files?tag=Not%20a%20tag").status_code == 400
    assert client(s).get("/files?offset=-1").status_code == 400


def test_the_file_page_reads_the_project_only_through_the_resolver(s: Services) -> None:
    """The resolver-only audit (tests/integration/test_resolver_only.py) over the page's reads: every file-system
    call under the project is the resolver's (or the state the allow-list names), none reaches outside."""
    from tests.audit_watch import watching
    from tests.integration.test_resolver_only import ALLOWED

    outside = s.project.parent / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text("stolen = 1\n")
    (s.project / "src" / "evil.py").symlink_to(outside / "evil.py")
    (s.project / "linked").symlink_to(outside, target_is_directory=True)
    knowledge.file_view(s, "src/app.py")  # the stores opened and caught up before the watch
    with watching(s.project, outside, ALLOWED) as watch:
        assert knowledge.file_view(s, "src/app.py") is not None
        for refused in ("src/evil.py", "linked/evil.py", ".code3/events.sqlite", "../outside/evil.py"):
            assert knowledge.file_view(s, refused) is None
        knowledge.file_list(s, "backend", 0)
    assert not watch.escaped and not watch.seen, (watch.escaped, watch.seen)
    assert watch.vouched >= 1


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_a_symlink_inside_the_project_shows_its_target(s: Services) -> None:
    (s.project / "src" / "alias.py").symlink_to(s.project / "src" / "app.py")
    view = knowledge.file_view(s, "src/alias.py")
    assert view is not None and view.path == "src/app.py" and view.tags == ["backend", "entry"]
