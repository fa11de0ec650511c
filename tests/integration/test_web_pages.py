"""The web page's board and bounty page (issue 21) over a real store, on SQLite and PostgreSQL: a lifecycle driven
through the handlers shows on the board (filters, sort, paging, totals), the bounty's timeline lists each step in
order with its chain coordinates, per-bounty verify holds, and its signed export passes `code3 audit check` while a
tampered copy fails."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from domain.bounties.bounty import Bounty
from mcp_tools.http.app import build_app
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


def text_of(html: str, element_id: str) -> str:
    """The text of the element with this id (tags dropped, entities kept, spaces collapsed)."""
    found = re.search(rf'<(\w+)[^>]* id="{element_id}"[^>]*>(.*?)</\1>', html, re.S)
    assert found is not None, f"no #{element_id} in the page"
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(2)).split())


def board_row(html: str, bounty_id: str) -> str:
    found = re.search(rf'<tr id="bounty-{bounty_id}">(.*?)</tr>', html, re.S)
    assert found is not None, f"bounty {bounty_id} is not on the board"
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())


def fund(w: World, who: str, bounty_id: str, amount: int, nonce: int) -> None:
    from mcp_tools.lifecycle.chain_record import raise_for, record

    s = w[who]
    w.stack.mint(s.signer.address, amount)
    raise_for(s.chain.fund_bounty(s.signer, bounty_id, amount, nonce), "fund")
    record(s, bounty_id)


def link_from_pr(w: World, who: str, pr_url: str) -> None:
    """The resolver (alice) records `who`'s link statement, which `work.submit_pr` posted on the PR (as `code3 account
    link` does), without a merge of that PR."""
    from mcp_tools.lifecycle.resolver import link, published_statement

    forge = w[who].forge
    statement = published_statement(w["alice"], forge.actor_id, [(REPO, int(pr_url.rsplit("/", 1)[1]))])
    assert statement is not None, f"{who}'s link statement is not on {pr_url}"
    link(w["alice"], statement, forge.actor)


REASON = 'the CSV export drops <b>accents</b> & "quotes"'


def short(address: str) -> str:
    """An address as the pages show it beside a name (the full one in the title attribute)."""
    return f"{address[:6]}…{address[-4:]}"


def plain_text(html: str) -> str:
    return unescape(" ".join(re.sub(r"<[^>]+>", " ", html).split()))


def test_a_paid_bounty_shows_its_whole_timeline_in_order_and_verify_holds(world: World, page: TestClient) -> None:
    bounty_id, pr = paid_bounty(world)
    answer = page.get(f"/bounties/{bounty_id}")
    assert answer.status_code == 200, answer.text
    html = answer.text
    kinds = re.findall(r'data-kind="([^"]+)"', html)
    steps = ["Issue.Opened", "Bounty.Created", "Bounty.Accepted", "Bounty.PRSubmitted", "Bounty.Merged",
             "Bounty.CoolingStarted", "Bounty.Paid"]
    assert [k for k in kinds if k.startswith(("Issue.", "Bounty."))] == steps, "the plain list: what happened"
    logged = re.findall(r'data-event="([^"]+)"', html)
    for kept in ("Issue.PublishRequested", "Issue.OpeningClaimed", "Issue.MetadataWritten", "Bounty.MergeReported"):
        assert kept in logged and kept not in kinds, f"{kept}: in the full event log only"
    assert [k for k in logged if k in steps] == steps
    audit = re.sub(r"<[^>]+>", " ", html[html.find("Audit"):html.find("What happened")])
    assert "audit verify holds for this bounty" in html, audit
    number = pr.rsplit("/", 1)[1]
    assert f'href="/forge/{REPO}/pull/{number}"' in html and f">PR #{number}<" in html, "its PR, as a link that opens"
    assert "local://" not in re.sub(r'title="[^"]*"', "", html), "no dead local:// link or text but in titles"
    created = next(e for e in world["alice"].store.repository.event_store.get(Bounty.create_id(bounty_id)))
    assert created.coords["tx_hash"] in html, "chain events show their transaction hash"
    assert "1 USDT" in html and '<h1>' in html and html.count("<h1") == 1
    assert 'class="state state-paid"' in html
    assert 'id="deadline"' not in html and "Deadline" not in text_of(html, "bounty-live"), "no deadline once paid"
    said = plain_text(html[html.find('id="timeline"'):html.find('id="event-log"')])
    alice, bob = world.address("alice"), world.address("bob")
    for text in ("alice published the bounty: 1 USDT escrowed", "alice opened issue #", "bob accepted the task",
                 f"bob submitted PR #{number}", f"bob's PR #{number} was merged: bob wins (reported by alice)",
                 "bob was paid 1 USDT", "UTC"):
        assert text in said, (text, said)
    assert alice not in said and bob not in said, "people by name in the plain list, not by address"
    assert f'title="{bob} (a key in this serve' in html, "the full address in the title"


def test_the_bounty_page_shows_the_issue_title_and_the_sponsors_spec(world: World, page: TestClient) -> None:
    published = world.published(description="Users can export their to-do list as CSV")
    bounty_id, number = published["bounty"]["bounty_id"], published["issue"]["number"]
    html = page.get(f"/bounties/{bounty_id}").text
    title = world["alice"].forge.get_issue(REPO, number).title
    assert title.startswith("[code3] ") and title.endswith(": Users can export their to-do list as CSV")
    assert unescape(text_of(html, "issue-title")) == "Users can export their to-do list as CSV", \
        "the forge's title without the publish's [code3] marker"
    spec = text_of(html, "spec")
    assert "Read the spec, as the sponsor published it on the issue" in spec and "Feature Specification" in spec, spec
    assert "code3-meta" not in spec, "the metadata block is the machine's, not the spec"
    assert re.search(r'<section[^>]* id="spec".*?<h[3-6]>', html, re.S), "the spec's headings sit under the page's"
    assert f'href="/forge/{REPO}/issues/{number}"' in html
    board_html = page.get("/").text
    row = unescape(board_row(board_html, bounty_id))
    assert "Users can export their to-do list as CSV" in row and "[code3]" not in row and "by alice" in row, row


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
    from projections.bounties import board
    from projections.bounties.board_outcomes import totals as running

    kept = {t["asset"]: {k: t[k] for k in ("escrowed", "paid", "refunded")} for t in running(w["alice"].views)}
    assert kept == board.totals(w["alice"].views), "the running totals are the board's sums"
    for bad in ("state=lost", "sort=random", "page=0", "repo=no%20slash", "mode=both"):
        assert page.get(f"/?{bad}").status_code == 400, bad
    cancelled = page.get(f"/bounties/{ids[0]}").text
    assert "alice cancelled the bounty: 1 USDT refunded to the funders; each funder withdraws their share" in cancelled
    assert 'id="deadline"' not in cancelled, "a refunded bounty shows no deadline"
    assert "UTC" in board_row(html, ids[1]) and "UTC" not in board_row(html, ids[0]), "nor on the board"
    assert text_of(cancelled, "facts-state") == "refunded"


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


def test_a_dispute_its_ruling_and_the_money_show_on_the_bounty_page_and_the_board(world: World,
                                                                                  page: TestClient) -> None:
    """Carol funds half the amount more, bob and carol submit; carol's PR closes unmerged (rejected), bob's merges,
    bob splits 3:1 with carol, alice disputes during cooling: the page shows the pool, the logins, the rejection's
    reason and the dispute (its reason escaped), the board a "disputed" badge and the pool. The resolver rules 60%
    to bob: the page shows the ruling, the split payout, each funder's refund and a tip, and the state is paid."""
    w = world
    published = w.published()
    bounty_id = published["bounty"]["bounty_id"]
    fund(w, "carol", bounty_id, AMOUNT // 2, nonce=1)
    prs = {}
    for who in ("bob", "carol"):
        work.accept_task(w[who], f"{REPO}#{published['issue']['number']}")
        prs[who] = submit(w, who, published)
    w["carol"].forge.close_pr(prs["carol"])
    rejected = settle.mark_merged(w["alice"], prs["carol"], delivery_id="d-closed", bounty_id=bounty_id)
    assert [r["reason"] for r in rejected["rejected"]] == ["closed"], rejected
    link_from_pr(w, "carol", prs["carol"])
    w.stack.merge_pr(prs["bob"])
    settle.mark_merged(w["alice"], prs["bob"], delivery_id="d-merged", bounty_id=bounty_id)
    bob, carol, alice = w.address("bob"), w.address("carol"), w.address("alice")
    from mcp_tools.lifecycle.chain_record import raise_for, record

    raise_for(w["bob"].chain.set_split(w["bob"].signer, bounty_id, [bob, carol], [3, 1]), "split")
    record(w["bob"], bounty_id)
    opened = settle.dispute(w["alice"], bounty_id, REASON)

    html = page.get(f"/bounties/{bounty_id}").text
    assert text_of(html, "disputed-badge") == "disputed" and "cooling" in text_of(html, "facts-state")
    assert text_of(html, "pool").startswith("1.5 USDT") and "1 USDT" in html, "the pool beside the published amount"
    assert f"alice {short(alice)}" in text_of(html, "resolver") and "this serve's identity" in text_of(html, "resolver")
    assert f'title="{alice} (a key in this serve' in html
    dispute = text_of(html, "dispute")
    assert "&lt;b&gt;accents&lt;/b&gt; &amp; &#34;quotes&#34;" in dispute, dispute
    assert "<b>accents</b>" not in html, "the reason is text, never markup"
    from mcp_tools.web.render import when

    assert when(opened["rule_by"]) in dispute and "the sponsor" in dispute and "the winner is paid" in dispute
    submissions = text_of(html, "submissions")
    assert f"bob {short(bob)}" in submissions and "merged, the winner" in submissions, submissions
    assert "the PR was closed without a merge" in text_of(html, "rejections")
    assert f"carol {short(carol)}" in text_of(html, "rejections"), "the rejected worker by name"
    assert "bob" in text_of(html, "split") and "75%" in text_of(html, "split") and "25%" in text_of(html, "split")
    board = page.get("/").text
    row = board_row(board, bounty_id)
    assert "cooling disputed" in row and "pool 1.5 USDT" in row, row

    settle.rule(w["alice"], bounty_id, 6000)  # 0.9 USDT to bob's split, 0.6 USDT back to the funders
    settle.withdraw_refund(w["carol"], bounty_id)
    raise_for(w["alice"].chain.tip(w["alice"].signer, bounty_id, bob, AMOUNT // 10, 5), "tip")
    record(w["alice"], bounty_id)

    html = page.get(f"/bounties/{bounty_id}").text
    assert text_of(html, "facts-state") == "paid", "a partial ruling leaves the bounty paid"
    assert 'id="dispute"' not in html and 'id="disputed-badge"' not in html
    rulings = text_of(html, "rulings")
    assert "60%" in rulings and "0.9 USDT" in rulings and "0.6 USDT" in rulings and "&lt;b&gt;accents" in rulings
    assert text_of(html, "payouts") == f"bob {short(bob)} : 0.675 USDT carol {short(carol)} : 0.225 USDT"
    funders = text_of(html, "funders")
    assert f"alice {short(alice)} (sponsor) 1 USDT 0.4 USDT" in funders, funders
    assert f"carol {short(carol)} 0.5 USDT 0.2 USDT" in funders, funders
    assert f"alice {short(alice)} tipped bob {short(bob)} 0.1 USDT" in text_of(html, "tips")
    assert "audit verify holds for this bounty" in html
    texts = plain_text(html[html.find('id="timeline"'):html.find('id="event-log"')])
    carol_pr = prs["carol"].rsplit("/", 1)[1]
    for said in ("carol added 0.5 USDT to the pool: it is now 1.5 USDT",
                 f"alice rejected carol's PR #{carol_pr}: the PR was closed without a merge",
                 "bob split the payout: bob 75%, carol 25%",
                 f"alice disputed the bounty: “{REASON}”",
                 "alice ruled the dispute: 60% of the pool to bob (0.9 USDT paid), 0.6 USDT refunded to the funders",
                 "bob was paid 0.9 USDT through the winner's split: bob 0.675 USDT, carol 0.225 USDT",
                 "the ruling refunded 0.6 USDT to the funders: each funder withdraws their share",
                 "carol withdrew their share of the refund: 0.2 USDT", "alice tipped bob 0.1 USDT"):
        assert said in texts, (said, texts)
    assert "the payout waits for the resolver's ruling" not in texts, "once ruled, the wait no longer applies"
    assert bob not in texts and carol not in texts
    row = board_row(page.get("/").text, bounty_id)
    assert "paid" in row and "disputed" not in row


def test_a_ruling_that_refunds_everything_reads_refunded_by_ruling(world: World, page: TestClient) -> None:
    """A worker disputes before any merge (the refund waits for the ruling); the resolver refunds it all."""
    w = world
    published = w.published()
    bounty_id = published["bounty"]["bounty_id"]
    work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    submit(w, "bob", published)
    settle.dispute(w["bob"], bounty_id, "the sponsor changed the spec after I started")
    html = page.get(f"/bounties/{bounty_id}").text
    dispute = text_of(html, "dispute")
    assert "a worker" in dispute and "the refund may go ahead" in dispute, dispute
    assert "the refund waits for the resolver's ruling" in unescape(html)
    settle.rule(w["alice"], bounty_id, 0)
    html = page.get(f"/bounties/{bounty_id}").text
    assert text_of(html, "facts-state") == "refunded by ruling"
    assert "the ruling refunded 1 USDT to the funders: each funder withdraws their share" in html
    assert "Nothing paid out yet." in html
    board = page.get("/?state=disputed").text
    assert board_ids(board) == [bounty_id] and "refunded by ruling" in board_row(board, bounty_id)


def test_the_links_page_lists_each_identity_link(world: World, page: TestClient) -> None:
    bounty_id, _ = paid_bounty(world)  # bob's link statement, recorded by the resolver when his PR merged
    html = page.get(f"/bounties/{bounty_id}").text
    assert f"bob {short(world.address('bob'))}" in text_of(html, "submissions"), "the worker by name"
    links = page.get("/links")
    assert links.status_code == 200, links.text
    assert '<a href="/links" aria-current="page">Identity links</a>' in links.text
    row = text_of(links.text, "links")
    forge_id = world["bob"].forge.actor_id
    assert f"bob {forge_id} {world.address('bob')} {world.address('alice')} (this serve's identity)" in row, row
    assert page.get("/links?page=0").status_code == 400 and page.get("/links?page=x").status_code == 400
    assert "Next page" not in links.text
    bare = TestClient(page.app, base_url="http://127.0.0.1:8765")
    refused = bare.get("/links")
    assert refused.status_code == 401 and "code3 serve --print-url" in refused.text, "behind the same gate"
