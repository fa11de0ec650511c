"""The tools on the real adapters (githubkit, aptos-sdk) against the loopback stand-ins: rate limits as
a tool sees them, a lost chain answer, secrets kept out of logs, events and answers, and `code3 doctor`."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from code3.doctor import diagnose, report
from code3.wiring import webhook_secret
from domain.bounties.bounty import Bounty
from domain.errors import Code3Error
from mcp_tools.lifecycle import publish, settle, work
from projections import audit_log
from tests.conftest import REPO, World
from tests.integration.test_lifecycle import submit_work
from tests.integration.test_secrets_at_rest import sqlite_files, table_texts

pytestmark = pytest.mark.parametrize("stack", ["remote"], indirect=True)


def issue_url(w: World, published: dict) -> str:
    return published["issue"]["url"]


def test_a_rate_limited_tool_waits_as_github_says_then_succeeds(world: World) -> None:
    w = world
    published = w.published()
    github = w.stack.github
    github.rate_limit_next(2, retry_after=1)
    before = len(github.api_requests())
    started = time.monotonic()
    answer = work.comment_issue(w["bob"], issue_url(w, published), "working on it")
    assert answer["success"] and time.monotonic() - started >= 2.0, "waited Retry-After twice"
    comment_requests = [r for r in github.api_requests()[before:] if r[0] == "POST" and r[1].endswith("/comments")]
    assert [status for _, _, status in comment_requests] == [403, 403, 201]


def test_past_the_budget_a_tool_answers_e_gh_rate_limit_with_the_reset_time(world: World) -> None:
    w = world
    published = w.published()
    w.stack.github.rate_limit_next(1, reset_in=3600)
    before = len(w.stack.github.api_requests())
    with pytest.raises(Code3Error) as caught:
        work.comment_issue(w["bob"], issue_url(w, published), "working on it")
    assert caught.value.code.value == "E_GH_RATE_LIMIT"
    assert "try again after" in caught.value.hint and "Z" in caught.value.hint
    assert len(w.stack.github.api_requests()) - before == 1, "no waiting an hour, no second request"


def test_a_committed_transaction_whose_answer_was_lost_is_recorded_once(world: World) -> None:
    w = world
    published = w.published()
    bounty_id = published["bounty"]["bounty_id"]
    w.stack.node.drop_after_commit(1)
    answer = work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    assert answer["success"]
    accepts = [e for e in w.ledger.bounty_events(bounty_id) if e.type == "BountyAccepted"]
    assert len(accepts) == 1
    bounty = w.services("carol").store.get(Bounty, Bounty.create_id(bounty_id))
    assert bounty.workers == [w.address("bob")]


def test_no_token_or_key_reaches_a_log_line_an_event_or_an_answer(world: World, caplog: pytest.LogCaptureFixture,
                                                                  tmp_path: Path) -> None:
    w = world
    caplog.set_level(logging.DEBUG)
    answers = []
    spec = w.specified()
    answers.append(publish.publish_issue_with_metadata(w["alice"], **w.publish_args(spec)))
    task_id = f"{REPO}#{answers[0]['issue']['number']}"
    answers.append(work.accept_task(w["bob"], task_id))
    answers.append(work.accept_best_task(w["carol"]))
    pr_url = submit_work(w, "bob", answers[0], spec["feature_id"])
    w.stack.merge_pr(pr_url)
    answers.append(settle.mark_merged(w["alice"], pr_url, delivery_id="d"))
    w.stack.advance(w.stack.cooling_period)
    for who in ("carol", "bob"):
        try:
            answers.append(settle.claim_payout(w[who], answers[0]["bounty"]["bounty_id"]))
        except Code3Error as exc:
            answers.append(exc.as_dict())
    export = tmp_path / "log.jsonl"
    audit_log.export(w["alice"].store, export, w["alice"].signer)

    secrets = [f"token-{n}" for n in ("alice", "bob", "carol")]
    secrets += [w[n].signer.private_key_hex for n in ("alice", "bob", "carol")]
    secrets.append(webhook_secret(w.settings("alice")).decode())
    tables = [text for db in sqlite_files(w.project / ".code3") for _, text in table_texts(db)]
    haystacks = {"logs": caplog.text + "\n".join(str(r.args) for r in caplog.records),
                 "events": export.read_text(), "answers": json.dumps(answers), "tables": "\n".join(tables),
                 "reprs": "".join(repr(w[n]) + repr(w.settings(n)) for n in ("alice", "bob", "carol"))}
    assert len(caplog.records) > 20, "the check needs logging at DEBUG to have happened"
    for where, text in haystacks.items():
        for secret in secrets:
            assert secret not in text, f"a secret reached the {where}"


def test_doctor_reports_the_real_stack_without_showing_the_token(world: World) -> None:
    checks = diagnose(world.settings("alice"))
    text = report(checks)
    assert all(c.ok for c in checks), text
    assert "github" in text and "aptos (testnet)" in text and "acting as alice" in text
    assert "token-alice" not in text
