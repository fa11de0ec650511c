"""The embedded forge's issues and pull requests on the serve's own pages (`/forge/<owner>/<repo>/issues|pull/<n>`):
every link the board and the bounty page show answers 200; a stranger's comment is marked as not the author's and
its Markdown is inert; a PR's diff is shown with its credentials redacted; a malformed or unknown path is a 404 page
and every route is behind the web gate."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from mcp_tools.http.app import build_app
from mcp_tools.lifecycle import work
from tests.conftest import REPO, World

TOKEN = "a-serve-token-for-the-web-tests-0123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
HOSTILE = ("Looks good! <script>alert(1)</script> [click](javascript:alert(1)) ![pixel](https://evil.example/x.png) "
           "<img src=x onerror=alert(1)> [data](data:text/html;base64,PHNjcmlwdD4=)")
TOKEN_IN_DIFF = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def page(world: World) -> Iterator[TestClient]:
    app = build_app(lambda: world["alice"], b"webhook-secret", token=TOKEN.encode())
    with TestClient(app, base_url="http://127.0.0.1:8765", headers=AUTH) as client:
        yield client


def bob_submits(w: World) -> tuple[str, int, str]:
    """bob accepts the published bounty and submits a PR whose change holds a GitHub token: (bounty id, issue number,
    PR URL)."""
    published = w.published()
    bounty_id, number = published["bounty"]["bounty_id"], published["issue"]["number"]
    bob = w["bob"]
    work.accept_task(bob, f"{REPO}#{number}")
    feature_id = next(p.name for p in (w.project / "specs").iterdir())
    prepared = work.fork_and_prepare(bob, REPO, {"schema": "code3/v1", "feature_id": feature_id,
                                                 "issue_number": number})
    (Path(prepared["workdir"]) / "export.py").write_text(f"def export_csv():\n    upload('{TOKEN_IN_DIFF}')\n")
    pr = work.open_pr(bob, REPO, prepared["branch"], "feat: CSV export", "Adds **CSV** export. <b>bold?</b>")
    work.submit_pr(bob, bounty_id, pr["pr_url"])
    return bounty_id, number, str(pr["pr_url"])


def links_in(html: str) -> set[str]:
    return {unescape(h) for h in re.findall(r'href="([^"]+)"', html)}


def test_every_link_of_the_board_and_the_bounty_page_opens(world: World, page: TestClient) -> None:
    bounty_id, number, pr = bob_submits(world)
    seen = set()
    for start in ("/", f"/bounties/{bounty_id}"):
        html = page.get(start).text
        assert "local://" not in re.sub(r'title="[^"]*"', "", html), f"{start}: a dead local:// link"
        seen |= {h for h in links_in(html) if h.startswith("/") and not h.startswith("/static/")}
    assert f"/forge/{REPO}/issues/{number}" in seen and f"/forge/{REPO}/pull/{pr.rsplit('/', 1)[1]}" in seen, seen
    for href in sorted(seen):
        assert page.get(href).status_code == 200, href


def test_the_issue_page_marks_whose_words_each_text_is_and_renders_a_strangers_markdown_inert(
        world: World, page: TestClient) -> None:
    _, number, _ = bob_submits(world)
    world["alice"].forge.create_comment(REPO, number, "Thanks for taking it, **bob**")
    world["bob"].forge.create_comment(REPO, number, HOSTILE)
    answer = page.get(f"/forge/{REPO}/issues/{number}")
    assert answer.status_code == 200, answer.text
    html = answer.text
    title = world["alice"].forge.get_issue(REPO, number).title
    assert unescape(re.search(r'<h1 id="forge-title">(.*?)</h1>', html, re.S).group(1)) == title
    assert "Feature Specification" in html and "code3-meta" not in html
    comments = re.findall(r'<li id="comment-\d+" class="([^"]*)">(.*?)</li>', html, re.S)
    stranger = [body for cls, body in comments if "by-other" in cls]
    assert len(stranger) == 1 and "bob" in stranger[0] and "not the author of this issue" in stranger[0]
    mine = [body for cls, body in comments if "by-other" not in cls]
    assert len(mine) == 1 and "who opened this issue" in mine[0] and "<strong>bob</strong>" in mine[0], \
        "the sponsor's comment is the issue author's (alice's forge account), its Markdown rendered"
    tags = re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)\b([^>]*)>", html)
    assert not [t for t, _ in tags if t.lower() in ("img", "iframe", "object", "embed")], "nothing embedded"
    assert [t for t, _ in tags if t.lower() == "script"] == [], "no script (this page has no live updates)"
    attributes = " ".join(a for _, a in tags)
    assert not re.search(r"\son[a-z]+\s*=", attributes), "no event handler attribute"
    assert not re.search(r'(href|src)="\s*(javascript|data|vbscript):', attributes, re.I), "no script or data URL"
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in stranger[0], "raw HTML is shown as text"
    assert 'href="https://evil.example/x.png"' in stranger[0] and "image: pixel" in stranger[0], \
        "a remote image is a link, never fetched"


def test_the_pull_request_page_shows_its_description_and_a_redacted_diff(world: World, page: TestClient) -> None:
    _, _, pr = bob_submits(world)
    answer = page.get(f"/forge/{REPO}/pull/{pr.rsplit('/', 1)[1]}")
    assert answer.status_code == 200, answer.text
    html = answer.text
    assert "feat: CSV export" in html and "<strong>CSV</strong>" in html and "&lt;b&gt;bold?&lt;/b&gt;" in html
    diff = unescape(re.search(r'<pre class="diff"[^>]*>(.*?)</pre>', html, re.S).group(1))
    assert "+++ b/export.py" in diff and "+def export_csv():" in diff, diff
    assert TOKEN_IN_DIFF not in html and "[REDACTED:github-token]" in diff, "credentials redacted as the tools do"
    world.stack.merge_pr(pr)
    merged = page.get(f"/forge/{REPO}/pull/{pr.rsplit('/', 1)[1]}").text
    assert "state-merged" in merged and "+++ b/export.py" in unescape(merged) and TOKEN_IN_DIFF not in merged


def test_a_malformed_or_unknown_forge_path_is_a_404_page_behind_the_gate(world: World, page: TestClient) -> None:
    _, number, pr = bob_submits(world)
    pr_number = pr.rsplit("/", 1)[1]
    for path in (f"/forge/{REPO}/issues/999", f"/forge/{REPO}/pull/999", f"/forge/{REPO}/issues/{pr_number}",
                 f"/forge/{REPO}/pull/{number}", f"/forge/{REPO}/issues/0", f"/forge/{REPO}/issues/1e3",
                 f"/forge/{REPO}/issues/-1", "/forge/-bad/name/issues/1",
                 f"/forge/{REPO}/issues/{'9' * 30}", "/forge/nobody/nothing/issues/1"):
        answer = page.get(path)
        assert answer.status_code == 404 and "text/html" in answer.headers["content-type"], (path, answer.status_code)
    bare = TestClient(page.app, base_url="http://127.0.0.1:8765")
    for path in (f"/forge/{REPO}/issues/{number}", f"/forge/{REPO}/pull/{pr_number}"):
        assert bare.get(path).status_code == 401, path
        assert page.post(path).status_code == 405, path
        assert page.get(path, headers={"Origin": "http://evil.example"}).status_code == 403, path
    answer = page.get(f"/forge/{REPO}/issues/{number}")
    assert "default-src 'none'" in answer.headers["content-security-policy"]
