"""The web page in a real headless Chromium (Debian's chromium + chromedriver, driven by Selenium), at a
desktop's 1280 px and a phone's 390 px, with axe-core injected into every page (no serious or critical
violation).

One project for the module, run by real processes: `code3 mcp` (stdio, one per person, driven by the official
Python SDK client) publishes, accepts and submits, tags, relates and annotates files; `code3 serve` "page"
is the one the browser signs in to (`code3 serve --print-url`); `code3 serve` "hooks", started first, is the
first to receive the embedded forge's merge webhook, so the merge the page shows live is written by another
process; `code3 worker` pays the bounty after its cooling period of seconds. Screenshots land in
.cache/screenshots/ (git-ignored).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.e2e import browser
from tests.e2e.web_world import AMOUNT, REPO, Site, make_site, ok
from tests.tools_needed import need_tool

pytestmark = pytest.mark.e2e

SECRET = "the-staging-db-password-is-hunter2-0xC0FFEE"
SECRET_LATER = "the-deploy-key-passphrase-is-orange-giraffe-42"
INTERNAL = "we-ship-this-before-the-security-audit"
PAGES_SEEN: list[tuple[str, str]] = []  # (url, HTML) of every page the tests looked at
AXE_FOUND: dict[str, list[dict[str, Any]]] = {}  # page name → axe's violations (any impact)


@pytest.fixture(scope="module", autouse=True)
def _browser() -> None:
    """Chromium, chromedriver and axe-core, checked before anything is built: without them the tests skip with the
    reason, or fail under CODE3_REQUIRE_TEST_TOOLS=1 (CI; tests/tools_needed.py)."""
    missing = browser.missing()
    need_tool(missing is None, str(missing))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    home = tmp_path_factory.mktemp("web-home")
    home.chmod(0o700)
    made = make_site(tmp_path_factory.mktemp("web") / "project", home)
    yield made
    made.close()


@pytest.fixture(scope="module", autouse=True)
def _axe_report() -> Iterator[None]:
    """axe-core's findings of every impact, per page and width, kept beside the screenshots (axe.json)."""
    yield
    browser.SHOTS.mkdir(parents=True, exist_ok=True)
    (browser.SHOTS / "axe.json").write_text(json.dumps(AXE_FOUND, indent=1, sort_keys=True))


@pytest.fixture(autouse=True)
def _site_home(site: Site, code3_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a test runs in-process uses the module project's CODE3_HOME, as its processes do."""
    monkeypatch.setenv("CODE3_HOME", str(site.home))


class Scene:
    """The serves, and what the MCP clients made: bounty ids, PR URLs."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.hooks, self.hooks_url, _ = site.serve("serve-hooks")  # registered first: the first to be delivered
        self.page, self.url, self.port = site.serve("serve-page")
        self.bounties: dict[str, str] = {}
        self.features: dict[str, str] = {}
        self.prs: dict[str, str] = {}
        self.issue_numbers: dict[str, int] = {}


async def _lifecycle(site: Site, scene: Scene) -> None:
    async with AsyncExitStack() as stack:
        # alice over streamable HTTP to the serve the browser shows (its identity), bob and carol over stdio
        alice = await _http_client(scene, stack)
        bob, carol = [await stack.enter_async_context(Client(site.mcp(who), mode="legacy")) for who in ("bob", "carol")]
        for key, description, mode, amount in (
                ("csv", "Users can export their to-do list as CSV", "contest", AMOUNT),
                ("tags", "Users can tag their to-dos and filter by tag", "exclusive", 2_500_000)):
            spec = await ok(alice, "spec_mcp.specify", {"feature_description": description})
            fid = spec["feature_id"]
            await ok(alice, "spec_mcp.plan", {"feature_id": fid})
            await ok(alice, "spec_mcp.tasks", {"feature_id": fid})
            published = await ok(alice, "spec_mcp.publish_issue_with_metadata", {
                "repo": REPO, "feature_id": fid, "spec_path": spec["paths"]["spec"], "amount": str(amount),
                "asset": "USDT", "network": "local", "mode": mode})
            scene.features[key] = fid
            scene.bounties[key] = published["bounty"]["bounty_id"]
            scene.issue_numbers[key] = published["issue"]["number"]
        task = f"{REPO}#{scene.issue_numbers['csv']}"
        for who, worker in (("bob", bob), ("carol", carol)):
            await ok(worker, "server_mcp.accept_task", {"task_id": task})
            prepared = await ok(worker, "server_mcp.fork_and_prepare", {
                "repo": REPO, "issue_json": {"schema": "code3/v1", "feature_id": scene.features["csv"],
                                             "issue_number": scene.issue_numbers["csv"]}})
            (Path(prepared["workdir"]) / f"{who}.py").write_text(f"def export_csv():  # by {who}\n    return ''\n")
            pr = await ok(worker, "server_mcp.open_pr", {"repo": REPO, "branch": prepared["branch"],
                                                         "title": f"feat: CSV export ({who})", "body": ""})
            scene.prs[who] = pr["pr_url"]
            await ok(worker, "server_mcp.submit_pr", {"bounty_id": scene.bounties["csv"], "pr_url": pr["pr_url"]})
        await ok(alice, "add_tag", {"file_path": "src/app.py", "tags": ["backend", "entry-point"]})
        await ok(alice, "add_comment", {"file_path": "src/app.py", "comment": "Starts the to-do application"})
        await ok(alice, "add_tag", {"file_path": "src/export.py", "tags": ["backend"]})
        await ok(alice, "create_relationship", {"source_path": "src/app.py", "target_path": "src/export.py",
                                                "relationship_type": "imports", "description": "CSV export"})
        await ok(alice, "create_relationship", {"source_path": "src/app.py", "target_path": "src/store.py",
                                                "relationship_type": "imports", "description": ""})
        await ok(alice, "create_relationship", {"source_path": "tests/test_app.py", "target_path": "src/app.py",
                                                "relationship_type": "calls", "description": ""})
        for start, end, comment, sensitivity in ((6, 9, "Loads every to-do at start: page it", "public"),
                                                 (16, 16, SECRET, "secret"), (12, 13, INTERNAL, "internal")):
            await ok(alice, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": start, "endLine": end,
                                                 "comment": comment, "tags": ["review"], "sensitivity": sensitivity})


@pytest.fixture(scope="module")
def scene(site: Site) -> Iterator[Scene]:
    made = Scene(site)
    asyncio.run(_lifecycle(site, made))
    yield made


@pytest.fixture(scope="module")
def chrome(scene: Scene) -> Iterator[Any]:
    with browser.chromium(*browser.WIDTHS["desktop"]) as driver:
        driver.get(scene.site.login_url(scene.port))
        browser.wait_until("the board after signing in", lambda: driver.current_url.rstrip("/") == scene.url)
        yield driver


def look(driver: Any, url: str, name: str) -> None:
    """Open `url` at both widths: axe-core on each, no sideways scrolling, a screenshot of each, the HTML kept for the
    secret check."""
    for width_name, (width, height) in browser.WIDTHS.items():
        browser.resize(driver, width, height)
        driver.get(url)
        assert driver.execute_script("return document.documentElement.clientWidth") == width
        PAGES_SEEN.append((url, driver.page_source))
        found = browser.axe(driver)
        AXE_FOUND[f"{name}@{width_name}"] = found
        assert browser.blocking(found) == [], json.dumps(browser.blocking(found), indent=1)
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 1, f"{name}: {overflow} px wider than {width} px: {wide(driver)}"
        browser.shot(driver, f"{name}-{width_name}")
    browser.resize(driver, *browser.WIDTHS["desktop"])


# as the test drives them: bob accepts and submits, then carol
BOUNTY_STEPS = ["Bounty.Created", "Bounty.Accepted", "Bounty.PRSubmitted", "Bounty.Accepted", "Bounty.PRSubmitted"]
SETTLED = ["Bounty.Merged", "Bounty.CoolingStarted", "Bounty.Paid"]
CHAIN_STEPS = {*BOUNTY_STEPS, *SETTLED}  # the contract's transitions (MergeReported etc. are Code3's own records)


def live_on(driver: Any) -> None:
    browser.wait_until("the live stream", lambda: "live updates: on" in driver.find_element("id", "live-status").text)


def kinds(driver: Any) -> list[str]:
    """The timeline's event kinds, read in one script (live.js may swap the region between two reads)."""
    return list(driver.execute_script(
        "return Array.from(document.querySelectorAll('#timeline > li')).map(li => li.dataset.kind)"))


def logged(driver: Any) -> list[str]:
    """Every recorded event's kind, from the page's full event log (behind its <details> toggle)."""
    return list(driver.execute_script(
        "return Array.from(document.querySelectorAll('#event-log li')).map(li => li.dataset.event)"))


def alice_address(scene: Scene) -> str:
    from adapters.keystore import Keystore
    from code3.settings import Settings

    return Keystore(Settings(project=scene.site.root, home=scene.site.home).keystore_dir).load("alice").address


def test_a_lifecycle_driven_through_mcp_appears_on_the_board(scene: Scene, chrome: Any) -> None:
    look(chrome, f"{scene.url}/", "board")
    csv = chrome.find_element("id", f"bounty-{scene.bounties['csv']}").text
    tags = chrome.find_element("id", f"bounty-{scene.bounties['tags']}").text
    assert f"{REPO}#{scene.issue_numbers['csv']}" in csv and "1 USDT" in csv and "contest" in csv, csv
    assert "PR submitted" in csv or "paid" in csv, csv  # paid once the live test below has run
    assert f"{REPO}#{scene.issue_numbers['tags']}" in tags and "2.5 USDT" in tags and "open" in tags, tags
    assert "exclusive" in tags
    assert "Users can export their to-do list as CSV" in csv and "Users can tag their to-dos" in tags, "titles"
    assert "by alice" in csv and "by alice" in tags, "the sponsor by name"
    sponsor = chrome.find_element("css selector", f"#bounty-{scene.bounties['csv']} .person")
    assert sponsor.get_attribute("title").startswith(alice_address(scene)), "the full address in the title"
    issue = chrome.find_element("css selector", f"#bounty-{scene.bounties['csv']} td[data-label='Issue'] a")
    assert issue.get_attribute("href") == f"{scene.url}/forge/{REPO}/issues/{scene.issue_numbers['csv']}"


def test_the_bounty_timeline_shows_each_step_in_order(scene: Scene, chrome: Any) -> None:
    look(chrome, f"{scene.url}/bounties/{scene.bounties['csv']}", "bounty")
    found = kinds(chrome)
    steps = [k for k in found if k in CHAIN_STEPS]
    assert steps[:5] == BOUNTY_STEPS and steps[5:] in ([], SETTLED), found
    assert found.index("Issue.Opened") < found.index("Bounty.Created"), found
    assert not {"Issue.PublishRequested", "Issue.OpeningClaimed", "Issue.MetadataWritten"} & set(found), \
        "the saga's bookkeeping is not news: it is in the full event log only"
    assert {"Issue.PublishRequested", "Issue.OpeningClaimed"} <= set(logged(chrome))
    times = [t.get_attribute("datetime") for t in chrome.find_elements("css selector", "#timeline time")]
    assert times == sorted(times) and len(times) == len(found)
    for item in chrome.find_elements("css selector", "#timeline > li"):
        if item.get_attribute("data-kind") in CHAIN_STEPS:  # every chain step with its transaction and version
            assert "transaction" in item.text and "version" in item.text, item.text
    said = chrome.find_element("id", "timeline").text
    for words in ("alice published the bounty: 1 USDT escrowed", "bob accepted the task", "bob submitted PR #",
                  "carol submitted PR #", "alice opened issue #"):
        assert words in said, (words, said)
    assert not re.search(r"0x[0-9a-f]{64}", said), "people by name, not by address"
    assert "Users can export their to-do list as CSV" in chrome.find_element("css selector", "h1").text
    toggle = chrome.find_element("css selector", "#spec summary")
    assert "Read the spec, as the sponsor published it" in toggle.text
    toggle.click()
    spec = chrome.find_element("id", "spec").text
    assert "Feature Specification" in spec and "code3-meta" not in spec, spec
    pr_links = {a.get_attribute("href") for a in chrome.find_elements("css selector", "#submissions a")}
    opened = {f"{scene.url}/forge/{REPO}/pull/{url.rsplit('/', 1)[1]}" for url in scene.prs.values()}
    assert opened <= pr_links, pr_links


def test_a_merge_by_another_process_arrives_live_without_a_reload(scene: Scene, chrome: Any) -> None:
    from code3.settings import Settings
    from code3.wiring import local_forge

    bounty_url = f"{scene.url}/bounties/{scene.bounties['csv']}"
    chrome.get(bounty_url)
    chrome.switch_to.new_window("tab")
    chrome.get(f"{scene.url}/")
    tabs = chrome.window_handles
    for tab in tabs:
        chrome.switch_to.window(tab)
        live_on(chrome)
        chrome.execute_script("window.code3NotReloaded = true")
    settings = Settings(project=scene.site.root, home=scene.site.home, identity="alice")
    forge = local_forge(settings, "alice")
    try:
        forge.merge_pr(scene.prs["bob"])  # delivers the signed webhook to serve-hooks first, then serve-page
        deliveries = forge.deliveries()[-2:]
    finally:
        forge.close()
    assert [d["url"] for d in deliveries] == [f"{scene.hooks_url}/webhooks/github", f"{scene.url}/webhooks/github"]
    assert [d["status"] for d in deliveries] == [200, 200], deliveries  # the second one found the merge recorded
    chrome.switch_to.window(tabs[0])
    browser.wait_until("the merge on the bounty page", lambda: "Bounty.Merged" in kinds(chrome))
    worker = scene.site.start("worker", "worker", "--interval", "0.2")  # pays once the cooling seconds are over
    try:
        browser.wait_until("the payout on the bounty page", lambda: "Bounty.Paid" in kinds(chrome), timeout=60)
    finally:
        assert scene.site.stop(worker) == 0
    found = kinds(chrome)
    assert [k for k in found if k in CHAIN_STEPS] == BOUNTY_STEPS + SETTLED, found
    log = logged(chrome)
    assert log.index("Bounty.Merged") < log.index("Bounty.MergeReported") < log.index("Bounty.Paid"), log
    assert "Bounty.MergeReported" not in found, "a delivery handled is Code3's own record, not news"
    assert chrome.find_element("css selector", "#bounty-live .state").text == "paid"
    said = chrome.find_element("id", "timeline").text
    assert re.search(r"bob's PR #\d+ was merged: bob wins", said) and "bob was paid 1 USDT" in said, said
    assert not chrome.find_elements("id", "deadline"), "a paid bounty shows no deadline"
    browser.shot(chrome, "bounty-paid-live-desktop")
    chrome.switch_to.window(tabs[1])
    row = f"bounty-{scene.bounties['csv']}"
    browser.wait_until("the payout on the board", lambda: "paid" in chrome.find_element("id", row).text)
    for tab in tabs:
        chrome.switch_to.window(tab)
        assert chrome.execute_script("return window.code3NotReloaded === true"), "the page was reloaded"
    chrome.close()
    chrome.switch_to.window(tabs[0])


DISPUTE_REASON = "the spec changed after I started: see <em>the review</em> & its notes"


def _carol_submits_on_tags(scene: Scene) -> str:
    """Carol takes the exclusive "tags" bounty and submits a PR, in this process (the handlers the MCP tools call)."""
    from code3.settings import Settings
    from code3.wiring import build_services
    from mcp_tools.lifecycle import work

    site = scene.site
    carol = build_services(Settings(project=site.root, home=site.home, identity="carol", cooling_period=site.cooling,
                                    resolver="alice"))
    try:
        number = scene.issue_numbers["tags"]
        work.accept_task(carol, f"{REPO}#{number}")
        prepared = work.fork_and_prepare(carol, REPO, {"feature_id": scene.features["tags"], "issue_number": number})
        (Path(prepared["workdir"]) / "tags.py").write_text("def tags():  # by carol\n    return []\n")
        pr = work.open_pr(carol, REPO, prepared["branch"], "feat: tags (carol)", "")["pr_url"]
        work.submit_pr(carol, scene.bounties["tags"], pr)
        return str(pr)
    finally:
        carol.close()


def test_a_dispute_and_the_identity_links_show_in_a_real_browser(scene: Scene, chrome: Any) -> None:
    """Carol submits on the "tags" bounty and disputes it with `code3 bounty dispute` (a real process): the open bounty
    page shows the badge and the reason (as text: its markup is not markup) without a reload, the board marks the row.
    `code3 account link --on` (carol's statement on her PR, linked at once by the resolver's key in this keystore)
    puts carol on the links page, reached from the navigation."""
    from adapters.keystore import Keystore
    from code3.settings import Settings

    site, bounty_id = scene.site, scene.bounties["tags"]
    _carol_submits_on_tags(scene)
    chrome.get(f"{scene.url}/bounties/{bounty_id}")
    live_on(chrome)
    chrome.execute_script("window.code3NotReloaded = true")
    opened = json.loads(site.run("bounty", "dispute", bounty_id, "--reason", DISPUTE_REASON, identity="carol"))
    browser.wait_until("the dispute on the bounty page", lambda: bool(chrome.find_elements("id", "disputed-badge")))
    assert chrome.execute_script("return window.code3NotReloaded === true"), "the page was reloaded"
    assert chrome.find_element("id", "dispute-reason").text == DISPUTE_REASON
    assert not chrome.find_elements("css selector", "#dispute em"), "the reason's markup stays text"
    dispute = chrome.find_element("id", "dispute").text
    keys = Keystore(Settings(project=site.root, home=site.home).keystore_dir)
    carol, alice = keys.load("carol").address, keys.load("alice").address
    assert "carol" in dispute and "a worker" in dispute and opened["disputed_by"] == carol
    assert chrome.find_element("css selector", "#dispute .person").get_attribute("title").startswith(carol)
    resolver = chrome.find_element("id", "resolver")
    assert "alice" in resolver.text and resolver.find_element("css selector", ".person").get_attribute(
        "title").startswith(alice)
    look(chrome, f"{scene.url}/bounties/{bounty_id}", "bounty-disputed")
    chrome.get(f"{scene.url}/")
    row = chrome.find_element("id", f"bounty-{bounty_id}")
    assert row.find_element("css selector", ".state-disputed").text == "disputed", row.text

    linked = json.loads(site.run("account", "link", "--on", scene.prs["carol"], identity="carol"))
    assert linked["status"] == "linked", linked
    chrome.find_element("link text", "Identity links").click()
    browser.wait_until("the links page", lambda: chrome.current_url == f"{scene.url}/links")
    look(chrome, f"{scene.url}/links", "links")
    rows = [r.text for r in chrome.find_elements("css selector", "#links tbody tr")]
    mine = next((r for r in rows if r.startswith("carol")), None)
    assert mine is not None and carol in mine and alice in mine, rows
    chrome.get(f"{scene.url}/bounties/{bounty_id}")
    assert "carol" in chrome.find_element("id", "submissions").text, "the worker's forge login beside the address"


def wide(driver: Any) -> list[str]:
    """The innermost elements that reach past the right edge of the screen (what makes a page scroll sideways)."""
    return list(driver.execute_script("""
        const limit = document.documentElement.clientWidth + 1;
        const out = [];
        for (const e of document.body.querySelectorAll('*')) {
            if (e.getBoundingClientRect().right > limit
                && !Array.from(e.children).some(c => c.getBoundingClientRect().right > limit)) {
                out.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className ? '.' + e.className : ''));
            }
        }
        return out.slice(0, 8);"""))


def test_a_files_page_shows_its_tags_relationships_and_annotations(scene: Scene, chrome: Any) -> None:
    look(chrome, f"{scene.url}/files", "files")
    rows = [e.text for e in chrome.find_elements("css selector", "#files tbody th")]
    assert rows[:3] == ["src/app.py", "src/export.py", "src/store.py"], rows
    look(chrome, f"{scene.url}/files/src/app.py", "file")
    tags = [e.text for e in chrome.find_elements("css selector", "#file-tags .tag")]
    assert tags[:2] == ["backend", "entry-point"]
    assert chrome.find_element("id", "file-comment").text == "Starts the to-do application"
    graph = chrome.find_element("css selector", "svg.graph")
    assert graph.find_element("css selector", "title").get_attribute("textContent") == "Relationships of src/app.py"
    linked = {a.get_attribute("aria-label") for a in graph.find_elements("css selector", "a")}
    assert linked == {"src/export.py", "src/store.py", "tests/test_app.py"}
    notes = [e.text for e in chrome.find_elements("css selector", "#lines tr td.side .note")]
    assert len(notes) == 3 and "Loads every to-do at start: page it" in notes[0]
    marked = [e.get_attribute("id") for e in chrome.find_elements("css selector", "#lines tr.marked")]
    assert marked == ["L6", "L7", "L8", "L9", "L12", "L13", "L16"]
    secret_row = chrome.find_element("id", "L16").text
    assert "secret" in secret_row and SECRET not in secret_row
    assert INTERNAL not in chrome.page_source  # the serve does not share internal annotations (the default)
    chrome.execute_script("window.code3NotReloaded = true")
    live_on(chrome)
    asyncio.run(_tag(scene, "src/app.py", "reviewed"))  # through the serve's MCP endpoint, seen through /live
    browser.wait_until("the new tag", lambda: "reviewed" in chrome.find_element("id", "file-tags").text)
    assert chrome.execute_script("return window.code3NotReloaded === true"), "the page was reloaded"
    graph = chrome.find_element("css selector", "svg.graph")
    graph.find_element("css selector", 'a[aria-label="src/export.py"]').click()
    browser.wait_until("the neighbour's page", lambda: chrome.current_url.endswith("/files/src/export.py"))
    assert [e.text for e in chrome.find_elements("css selector", "#file-tags .tag")] == ["backend"]


def _session(scene: Scene, chrome: Any) -> dict[str, str]:
    cookie = chrome.get_cookie(f"code3_session_{scene.port}")
    assert cookie, "the browser is signed in"
    return {"Cookie": f"code3_session_{scene.port}={cookie['value']}"}


def test_every_link_on_the_board_and_the_bounty_pages_opens(scene: Scene, chrome: Any) -> None:
    """Each link the board and the two bounty pages show is followed (with the browser's session): every one answers
    200, and none is a dead local:// address."""
    headers = _session(scene, chrome)
    hrefs: set[str] = set()
    for path in ("/", *(f"/bounties/{b}" for b in scene.bounties.values())):
        chrome.get(f"{scene.url}{path}")
        hrefs |= set(chrome.execute_script("return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"))
    assert not [h for h in hrefs if not h.startswith(scene.url)], "every link opens on this serve (no local://)"
    pages = {h.split("#", 1)[0] for h in hrefs}
    assert any("/forge/" in h and "/issues/" in h for h in pages) and any("/pull/" in h for h in pages), pages
    for href in sorted(pages):
        status, body = _get(href, headers)
        assert status == 200, (href, status, body[:300])


class EvilHost:
    """A loopback server standing for a stranger's image host: it records every request it gets."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests: list[str] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def test_a_strangers_markdown_is_inert_in_a_real_browser(scene: Scene, chrome: Any) -> None:
    """carol comments on the issue and on bob's PR with raw HTML, a script link, event handlers and images from an
    "evil" host: the forge pages show the text, run no script (no alert), embed no image, and the evil host gets no
    request, even after the page has settled."""
    from selenium.common.exceptions import NoAlertPresentException

    from code3.settings import Settings
    from code3.wiring import local_forge

    evil = EvilHost()
    hostile = (f"Nice work! <script>alert('script')</script> [click me](javascript:alert('link')) "
               f"![pixel]({evil.url}/pixel.png) <img src=\"{evil.url}/raw.png\" onerror=\"alert('img')\"> "
               f"[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) "
               f"<iframe src=\"{evil.url}/frame\"></iframe>")
    forge = local_forge(Settings(project=scene.site.root, home=scene.site.home, identity="carol"), "carol")
    number, pr_number = scene.issue_numbers["csv"], int(scene.prs["bob"].rsplit("/", 1)[1])
    try:
        forge.create_comment(REPO, number, hostile)
        forge.create_comment(REPO, pr_number, hostile)
    finally:
        forge.close()
    try:
        for path, name in ((f"/forge/{REPO}/issues/{number}", "forge-issue"), (f"/forge/{REPO}/pull/{pr_number}",
                                                                             "forge-pull")):
            look(chrome, f"{scene.url}{path}", name)
            comment = chrome.find_elements("css selector", ".comment.by-other")[-1]
            assert "<script>alert('script')</script>" in comment.text and "not the author" in comment.text
            assert chrome.execute_script("return document.images.length") == 0, "no image is embedded"
            assert not chrome.find_elements("css selector", "main iframe, main script, main [onerror]")
            links = [a.get_attribute("href") for a in comment.find_elements("css selector", "a")]
            assert links == [f"{evil.url}/pixel.png"], "the image is a link; the script and data links are text"
            time.sleep(0.5)
            try:
                alert = chrome.switch_to.alert
            except NoAlertPresentException:
                alert = None
            assert alert is None, f"a script ran on {path}: {alert.text if alert else ''}"
        assert "+++ b/bob.py" in chrome.find_element("css selector", "pre.diff").text, "the PR's diff"
        assert evil.requests == [], f"the evil host was asked for {evil.requests}"
    finally:
        evil.close()


@contextmanager
def signed_out(driver: Any, scene: Scene) -> Iterator[None]:
    """The browser without its session cookie for a while (as a person who never signed in)."""
    name = f"code3_session_{scene.port}"
    kept = driver.get_cookie(name)
    driver.delete_cookie(name)
    try:
        yield
    finally:
        if kept:
            driver.add_cookie({k: kept[k] for k in ("name", "value", "path", "httpOnly", "sameSite", "expiry")
                               if k in kept})


def _get(url: str, headers: dict[str, str] | None = None, method: str = "GET") -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=15) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        with refused:
            return refused.code, refused.read().decode()


def test_requests_without_a_session_or_from_another_origin_are_refused(scene: Scene, chrome: Any) -> None:
    cookie = chrome.get_cookie(f"code3_session_{scene.port}")
    assert cookie and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    signed_in = {"Cookie": f"code3_session_{scene.port}={cookie['value']}"}
    for path in ("/", "/files", "/files/src/app.py", "/live", "/links"):
        status, body = _get(f"{scene.url}{path}")
        assert status == 401 and "code3 serve --print-url" in body, (path, status)
    assert _get(f"{scene.url}/files", signed_in)[0] == 200
    status, body = _get(f"{scene.url}/files", {**signed_in, "Origin": "http://evil.example"})
    assert status == 403, status
    assert _get(f"{scene.url}/files", {**signed_in, "Host": "evil.example"})[0] in (403, 421)
    assert _get(f"{scene.url}/files", signed_in, method="POST")[0] == 405
    other_serve = f"code3_session_{scene.port + 1}={cookie['value']}"  # a cookie is good for its own serve only
    assert _get(f"{scene.url}/files", {"Cookie": other_serve})[0] == 401
    with signed_out(chrome, scene):
        browser.resize(chrome, *browser.WIDTHS["phone"])
        try:
            chrome.get(f"{scene.url}/files/src/app.py")
            assert "Sign in" in chrome.title and "code3 serve --print-url" in chrome.page_source
            PAGES_SEEN.append((chrome.current_url, chrome.page_source))
            browser.shot(chrome, "sign-in-phone")
            found = browser.axe(chrome)
            AXE_FOUND["sign-in@phone"] = found
            assert browser.blocking(found) == [], json.dumps(browser.blocking(found), indent=1)
            assert chrome.execute_script(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 1
        finally:
            browser.resize(chrome, *browser.WIDTHS["desktop"])


def test_an_expired_session_is_refused(scene: Scene, chrome: Any) -> None:
    from mcp_tools.web import auth

    token = scene.site.token().encode()
    expired, _ = auth.new_session(token, scene.port, 12.0, now=time.time() - 13 * 3600)
    status, body = _get(f"{scene.url}/files", {"Cookie": f"code3_session_{scene.port}={expired}"})
    assert status == 401 and "code3 serve --print-url" in body
    fresh, _ = auth.new_session(token, scene.port, 12.0)
    assert _get(f"{scene.url}/files", {"Cookie": f"code3_session_{scene.port}={fresh}"})[0] == 200


def test_a_secret_annotation_is_nowhere_in_any_page_or_the_event_stream(scene: Scene, chrome: Any) -> None:
    """Every page the module looked at, the pages of the files with secret annotations, and the event stream
    while a second secret annotation is made (a page open on that file refreshes itself through /live)."""
    chrome.get(f"{scene.url}/files/src/store.py")
    live_on(chrome)
    received = _stream_while(scene, lambda: asyncio.run(_annotate_secret(scene)))
    assert b'"kind":"Annotation.Annotated"' in received, f"the stream missed the annotation: {received[:2000]!r}"
    browser.wait_until("the secret annotation's place", lambda: "lines 1–2" in chrome.find_element(
        "id", "file-annotations").text)
    PAGES_SEEN.append((chrome.current_url, chrome.page_source))
    for path in ("/", "/files", "/files/src/app.py", "/files/src/store.py", f"/bounties/{scene.bounties['csv']}"):
        chrome.get(f"{scene.url}{path}")
        PAGES_SEEN.append((chrome.current_url, chrome.page_source))
    for url, html in PAGES_SEEN:
        for secret in (SECRET, SECRET_LATER, "hunter2", "orange-giraffe"):
            assert secret not in html, f"{secret!r} in {url}"
    for secret in (SECRET, SECRET_LATER, "hunter2", "orange-giraffe"):
        assert secret.encode() not in received


async def _http_client(scene: Scene, stack: AsyncExitStack) -> Any:
    """alice's SDK client on the page serve's /mcp (streamable HTTP, the serve token as a bearer header)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    http = await stack.enter_async_context(httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {scene.site.token()}"}, timeout=60))
    return await stack.enter_async_context(Client(streamable_http_client(f"{scene.url}/mcp", http_client=http),
                                                  mode="legacy"))


async def _tag(scene: Scene, path: str, tag: str) -> None:
    async with AsyncExitStack() as stack:
        alice = await _http_client(scene, stack)
        await ok(alice, "add_tag", {"file_path": path, "tags": [tag]})


async def _annotate_secret(scene: Scene) -> None:
    async with AsyncExitStack() as stack:
        alice = await _http_client(scene, stack)
        await ok(alice, "ai-loom.annotate", {"filePath": "src/store.py", "startLine": 1, "endLine": 2,
                                             "comment": SECRET_LATER, "sensitivity": "secret"})
        await ok(alice, "add_tag", {"file_path": "src/store.py", "tags": ["storage"]})


def _stream_while(scene: Scene, act: Any, linger: float = 3.0) -> bytes:
    """The bytes /live sends (with the serve token) while `act()` runs, and for `linger` seconds after it."""
    token = scene.site.token()
    chunks: list[bytes] = []
    stop = threading.Event()
    opened = threading.Event()

    def read() -> None:
        request = urllib.request.Request(f"{scene.url}/live?topic=all", headers={"Authorization": f"Bearer {token}",
                                                                         "Accept": "text/event-stream"})
        with urllib.request.urlopen(request, timeout=60) as answer:
            opened.set()
            while not stop.is_set():
                line = answer.readline()
                if not line:
                    return
                chunks.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert opened.wait(15), "the event stream did not open"
    act()
    time.sleep(linger)
    stop.set()
    return b"".join(chunks)


def test_a_rotated_token_ends_the_session(scene: Scene, chrome: Any) -> None:
    """Last in this module: rotating the token ends every session of this project's serves."""
    chrome.get(f"{scene.url}/files")
    assert not chrome.title.startswith("Sign in"), chrome.title
    old_token = scene.site.token()
    rotated = json.loads(scene.site.run("serve", "--rotate-token"))
    assert rotated["rotated"] is True and old_token not in json.dumps(rotated)
    chrome.get(f"{scene.url}/files")
    assert chrome.title.startswith("Sign in"), chrome.title
    assert _get(f"{scene.url}/files", {"Authorization": f"Bearer {old_token}"})[0] == 401
    chrome.get(scene.site.login_url(scene.port))  # a new URL signs in again, under the new token
    browser.wait_until("the board after signing in again", lambda: chrome.current_url.rstrip("/") == scene.url)
    assert not chrome.title.startswith("Sign in")
