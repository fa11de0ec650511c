"""The merge webhook in-process: signatures, GitHub's real payload shape, redelivery, retries, dead letters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapters.ports import Receipt
from code3.cli import main
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from mcp_tools.lifecycle import work
from mcp_tools.lifecycle.webhook import Inbox, receive, retry_due, sign
from mcp_tools.services import Services
from tests.conftest import REPO, World
from tests.integration.test_lifecycle import crashing, submit_work

SECRET = b"s3cret-for-tests"
FIXTURE = Path(__file__).parent.parent / "fixtures" / "github_pull_request_closed.json"


def submitted(w: World) -> tuple[dict[str, Any], str]:
    spec = w.specified()
    published = w.published_spec(spec)
    work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    return published, submit_work(w, "bob", published, spec["feature_id"])


def github_payload(pr_url: str) -> bytes:
    """The full payload GitHub sends for a merged PR, pointed at our PR."""
    payload = json.loads(FIXTURE.read_text())
    payload["pull_request"]["html_url"] = pr_url
    return json.dumps(payload).encode()


def deliver(s: Services, body: bytes, delivery: str = "72d3162e-cc78-11e3-81ab-4c9367dc0958",
            event: str = "pull_request", signature: str | None = None) -> Any:
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery, "User-Agent": "GitHub-Hookshot/044aadd",
               "Content-Type": "application/json",
               "X-Hub-Signature-256": signature if signature is not None else sign(SECRET, body)}
    return receive(s, SECRET, headers, body)


def log_size(w: World) -> int:
    return w["alice"].store.recorder.max_notification_id() or 0


def test_a_merged_pr_in_githubs_full_payload_starts_cooling(world: World) -> None:
    w = world
    published, pr_url = submitted(w)
    w.stack.merge_pr(pr_url)
    answer = deliver(w["alice"], github_payload(pr_url))
    assert answer.status == 200 and answer.body["state"] == "COOLING_DOWN"
    assert answer.body["winner"] == w.address("bob")
    assert w.forge.get_issue(REPO, published["issue"]["number"]).labels == ["code3", "cooling"]


def test_forged_unsigned_and_malformed_deliveries_change_nothing(world: World) -> None:
    w = world
    _, pr_url = submitted(w)
    w.stack.merge_pr(pr_url)
    body = github_payload(pr_url)
    before = log_size(w)
    assert deliver(w["alice"], body, signature="").status == 401
    assert deliver(w["alice"], body, signature=sign(b"wrong secret", body)).status == 401
    assert deliver(w["alice"], body, signature="sha1=" + sign(SECRET, body)[7:]).status == 401
    assert deliver(w["alice"], body + b" ", signature=sign(SECRET, body)).status == 401, "body changed after signing"
    assert deliver(w["alice"], b"{not json").status == 400
    assert deliver(w["alice"], b"[1, 2]").status == 400
    assert log_size(w) == before
    assert deliver(w["alice"], b'{"zen": "Design for failure."}', event="ping").status == 200
    assert deliver(w["alice"], b'{"action": "opened"}', event="issues").status == 202
    assert log_size(w) == before


def test_a_redelivery_is_answered_and_has_no_second_effect(world: World) -> None:
    w = world
    _, pr_url = submitted(w)
    w.stack.merge_pr(pr_url)
    first = deliver(w["alice"], github_payload(pr_url), delivery="d-1")
    chain_events = len(w.ledger.events_since(0))
    before = log_size(w)
    again = deliver(w["alice"], github_payload(pr_url), delivery="d-1")
    assert again.status == 200 and again.body["duplicate"] is True
    assert again.body["cooling_until"] == first.body["cooling_until"]
    assert log_size(w) == before and len(w.ledger.events_since(0)) == chain_events


class NodeDown:
    """The chain node fails every write, as an unreachable fullnode does."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def mark_merged(self, *args: Any) -> Receipt:
        from domain.errors import Code, Code3Error

        raise Code3Error(Code.CHAIN_TX_FAILED, "node unreachable", "retry later")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_failing_delivery_is_retried_then_dead_lettered_then_replayed(
        world: World, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    w = world
    _, pr_url = submitted(w)
    w.stack.merge_pr(pr_url)
    down = crashing(w["alice"], chain=NodeDown(w["alice"].chain))
    answer = deliver(down, github_payload(pr_url), delivery="d-9")
    assert answer.status == 202 and answer.body["status"] == "retrying"
    inbox = Inbox(w["alice"].views)
    for _ in range(10):
        with w["alice"].views.transaction() as cur:  # make every retry due now
            cur.execute("UPDATE webhook_deliveries SET next_attempt_at = 0")
        retry_due(down)
    [letter] = inbox.dead()
    assert letter["delivery_id"] == "d-9" and letter["attempts"] == 5
    assert letter["last_error"]["code"] == "E_CHAIN_TX_FAILED"

    if w.database_url:
        monkeypatch.setenv("CODE3_DATABASE_URL", w.database_url)
    cli = ["--project", str(w.project), "--identity", "alice"]
    assert main(["webhooks", "list", *cli]) == 0
    assert "d-9" in capsys.readouterr().out
    assert main(["webhooks", "retry", *cli]) == 0, "the replay through the healthy chain succeeds"
    [replayed] = json.loads(capsys.readouterr().out)
    assert replayed["delivery_id"] == "d-9" and replayed["status"] == 200 and inbox.dead() == []
    bounty = w["alice"].store.get(Bounty, Bounty.create_id(replayed["bounty_id"]))
    assert bounty.status is Status.COOLING_DOWN and bounty.has_delivery("d-9")


def test_a_merge_of_a_pr_that_was_never_submitted_is_ignored(world: World) -> None:
    w = world
    submitted(w)
    answer = deliver(w["alice"], github_payload("https://github.com/alice/todo-app/pull/999"))
    assert answer.status == 202 and "not submitted" in answer.body["ignored"]
