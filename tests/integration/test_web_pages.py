"""The web page's board and bounty page (issue 21) over a real store, on SQLite and PostgreSQL: a lifecycle driven
through the handlers shows on the board (filters, sort, paging, totals), the bounty's timeline lists each step in
order with its chain coordinates, per-bounty verify holds, and its signed export passes `code3 audit check` while a
tampered copy fails."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from domain.bounty import Bounty
from mcp_tools.http_app import build_app
from mcp_tools.lifecycle import settle, work
from tests.conftest import AMOUNT, REPO, World

TOKEN = "a-serve-token-for-the-web-tests-0123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def page(world: World) -> Iterator[TestClient]:
    app = build_app(lambda: world["alice"], b"webhook-secret", token=TOKEN.encode())
    with TestClient(app, base_url="http://127.0.0.1:8765", headers=AUTH) as client:
        yield client


def submit(w: World, who: str, published: dict[str, Any]) -> str:
    s = w[who]
    feature_id = next(p.name for p in (w.project / "specs").iterdir())
    prepared = work.fork_and_prepare(s, REPO, {"schema": "code3/v1", "feature_id": feature_id,
                                               "issue_number": published["issue"]["number"]})
    (Path(prepared["workdir"]) / f"{who}.py").write_text(f"print('{who}')\n")
    pr = work.open_pr(s, REPO, prepared["branch"], f"feat: {who}", "work")
    work.submit_pr(s, published["bounty"]["bounty_id"], pr["pr_url"])
    return str(pr["pr_url"])


def paid_bounty(w: World) -> tuple[str, str]:
    published = w.published()
    bounty_id = published["bounty"]["bounty_id"]
    work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    pr = submit(w, "bob", published)
    w.stack.merge_pr(pr)
    settle.mark_merged(w["alice"], pr, delivery_id="d-web-1")
    w.stack.advance(w.stack.cooling_period)
    settle.claim_payout(w["bob"], bounty_id)
    return bounty_id, pr


def board_ids(html: str) -> list[str]:
    return re.findall(r'<tr id="bounty-(\d+)"', html)


def test_a_paid_bounty_shows_its_whole_timeline_in_order_and_verify_holds(world: World, page: TestClient) -> None:
    bounty_id, pr = paid_bounty(world)
    answer = page.get(f"/bounties/{bounty_id}")
    assert answer.status_code == 200, answer.text
    html = answer.text
    kinds = re.findall(r'data-kind="([^"]+)"', html)
    steps = ["Issue.PublishRequested", "Issue.Opened", "Bounty.Created", "Bounty.Accepted", "Bounty.PRSubmitted",
             "Bounty.Merged", "Bounty.CoolingStarted", "Bounty.Paid"]
    assert [k for k in kinds if k in steps] == steps, kinds
    audit = re.sub(r"<[^>]+>", " ", html[html.find("Audit"):html.find("Timeline")])
    assert "audit verify holds for this bounty" in html, audit
    assert pr in html, "its PR is listed"
    created = next(e for e in world["alice"].store.repository.event_store.get(Bounty.create_id(bounty_id)))
    assert created.coords["tx_hash"] in html, "chain events show their transaction hash"
    assert "1 USDT" in html and '<h1>' in html and html.count("<h1") == 1
    assert 'class="state state-paid"' in html


def test_the_bounty_export_passes_audit_check_and_a_tampered_copy_fails(world: World, page: TestClient,
                                                                        tmp_path: Path) -> None:
    from projections.audit_log import check

    bounty_id, _ = paid_bounty(world)
    answer = page.get(f"/bounties/{bounty_id}/export")
    assert answer.status_code == 200
    assert "attachment" in answer.headers["content-disposition"]
    exported = tmp_path / "bounty.jsonl"
    exported.write_bytes(answer.content)
    lines = exported.read_text().splitlines()
    trailer = json.loads(lines[-1])
    assert trailer["trailer"] and trailer["scope"] == {"bounty_id": bounty_id}
    assert trailer["count"] == len(lines) - 1 >= 8
    from code3.cli import main

    assert main(["audit", "check", str(exported), "--project", str(world.project),
                 "--key", world.address("alice")]) == 0, "what `code3 audit check` says of the download"
    assert check(exported).ok

    records = [json.loads(line) for line in lines]
    records[2]["data"]["amount"] = records[2]["data"].get("amount", 0) + 1
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in records))
    assert not check(tampered).ok
    assert main(["audit", "check", str(tampered), "--project", str(world.project)]) == 1
    dropped = tmp_path / "dropped.jsonl"
    dropped.write_text("\n".join(lines[:3] + lines[4:]) + "\n")
    assert not check(dropped).ok


def test_an_unknown_or_malformed_bounty_is_a_404_page(page: TestClient) -> None:
    for path in ("/bounties/999999", "/bounties/abc", "/bounties/999999/export"):
        answer = page.get(path)
        assert answer.status_code == 404 and "text/html" in answer.headers["content-type"], path


def test_the_board_lists_filters_sorts_and_totals(world: World, page: TestClient) -> None:
    w = world
    ids = [w.published(amount=AMOUNT * (k + 1), description=f"Feature number {k} for the board")["bounty"]["bounty_id"]
           for k in range(3)]
    settle.cancel_bounty(w["alice"], ids[0])
    html = page.get("/").text
    assert board_ids(html) == list(reversed(ids)), "newest first by default"
    assert board_ids(page.get("/?sort=amount").text) == [ids[2], ids[1], ids[0]]
    assert board_ids(page.get("/?state=open").text) == [ids[2], ids[1]]
    assert board_ids(page.get("/?state=refunded").text) == [ids[0]]
    assert board_ids(page.get("/?state=disputed").text) == []
    assert board_ids(page.get(f"/?repo={REPO}&asset=USDT&mode=contest").text) == list(reversed(ids))
    assert board_ids(page.get("/?repo=someone/else").text) == []
    assert board_ids(page.get("/?mode=exclusive").text) == []
    # totals per asset: escrowed = the open ones (2 + 3 USDT), refunded = the cancelled one (1 USDT)
    totals = re.search(r'<tr><th scope="row">USDT</th>(.*?)</tr>', html, re.S)
    assert totals is not None
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", totals.group(1))
    assert cells[:3] == ["5 USDT", "0 USDT", "1 USDT"], cells
    assert ">refunded<" in html
    from projections import board
    from projections.board_outcomes import totals as running

    kept = {t["asset"]: {k: t[k] for k in ("escrowed", "paid", "refunded")} for t in running(w["alice"].views)}
    assert kept == board.totals(w["alice"].views), "the running totals are the board's sums"
    for bad in ("state=lost", "sort=random", "page=0", "repo=no%20slash", "mode=both"):
        assert page.get(f"/?{bad}").status_code == 400, bad


def test_the_board_pages_in_sql(world: World, page: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_tools.web import board

    monkeypatch.setattr(board, "PAGE_SIZE", 2)
    ids = [world.published(amount=AMOUNT, description=f"Paged feature {k}")["bounty"]["bounty_id"] for k in range(3)]
    first = page.get("/").text
    assert board_ids(first) == [ids[2], ids[1]] and 'rel="next"' in first
    second = page.get("/?page=2").text
    assert board_ids(second) == [ids[0]] and 'rel="next"' not in second and 'rel="prev"' in second
    assert "Bounties 1–2" in first and "Bounties 3–3" in second


def test_the_live_stream_refuses_an_unknown_topic(page: TestClient) -> None:
    assert page.get("/live?topic=everything").status_code == 400
    assert page.get("/live?topic=bounty:abc").status_code == 400
