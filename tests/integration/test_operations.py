"""Operations (issue 20): /metrics on serve and on the worker's loopback listener, behind the serve token, in the
Prometheus text format as prometheus_client's own parser reads it; JSON log lines that carry no secret; and
`code3 doctor`'s lines on lag, leases, the dead-letter backlog and overdue payouts."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from adapters.log_format import JsonFormatter
from adapters.scrub import ScrubFilter, register_secret
from code3 import wiring
from code3.doctor import diagnose, report
from mcp_tools.http.app import build_app
from projections.operations import OVERDUE_AFTER_S
from scheduler.worker import metrics_listener
from tests.conftest import World
from tests.integration.test_scheduler import cooling

TOKEN = "a-serve-token-for-the-tests-0123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MCP = {**AUTH, "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
ROOT = Path(__file__).resolve().parents[2]
CODE3 = [sys.executable, "-m", "code3"]


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text page, read by prometheus_client's parser: (name, labels) -> value."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(page: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return page.get((name, tuple(sorted(labels.items()))), 0.0)


def rpc(client: TestClient, message: dict[str, Any], session: str | None = None) -> tuple[Any, dict[str, Any]]:
    headers = {**MCP, **({"Mcp-Session-Id": session} if session else {})}
    answer = client.post("/mcp", json=message, headers=headers)
    assert answer.status_code in (200, 202), answer.text
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        found = [json.loads(line[5:]) for line in answer.text.splitlines() if line.startswith("data:")]
        return answer, (found[-1] if found else {})
    return answer, (answer.json() if answer.content else {})


def call(client: TestClient, session: str, request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    _, body = rpc(client, {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                           "params": {"name": tool, "arguments": arguments}}, session)
    return body["result"]


def test_serve_metrics_need_the_token_and_count_calls_errors_by_code_and_latency(world: World) -> None:
    w = world
    w.published()  # a store with a bounty: the board has a row, the forge mirror has not run (no worker)
    app = build_app(lambda: w["alice"], b"webhook-secret", token=TOKEN.encode())
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        assert client.get("/metrics").status_code == 401
        refused = client.get("/metrics", headers={"Authorization": "Bearer not-the-token-at-all-000"})
        assert refused.status_code == 401 and "invalid_token" in refused.headers["www-authenticate"]

        before = samples(client.get("/metrics", headers=AUTH).text)
        opened, _ = rpc(client, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        session = opened.headers["mcp-session-id"]
        rpc(client, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        assert call(client, session, 2, "add", {"a": 2, "b": 3})["content"][0]["text"] == "The sum of 2 + 3 = 5"
        failed = call(client, session, 3, "server_mcp.accept_task", {"task_id": "no/such-repo#999"})
        assert failed["isError"] is True
        code = json.loads(failed["content"][0]["text"])["code"]

        page = client.get("/metrics", headers=AUTH)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain; version=0.0.4")
    after = samples(page.text)
    assert value(after, "code3_tool_calls_total", tool="add") == value(before, "code3_tool_calls_total", tool="add") + 1
    tool = "server_mcp.accept_task"
    assert value(after, "code3_tool_errors_total", tool=tool, code=code) == \
        value(before, "code3_tool_errors_total", tool=tool, code=code) + 1
    assert value(after, "code3_tool_errors_total", tool="add", code=code) == \
        value(before, "code3_tool_errors_total", tool="add", code=code), "a success counts no error"
    assert value(after, "code3_tool_seconds_count", tool="add") == value(before, "code3_tool_seconds_count",
                                                                         tool="add") + 1
    assert value(after, "code3_tool_seconds_bucket", tool="add", le="+Inf") >= 1
    assert value(after, "code3_store_up") == 1
    head = value(after, "code3_log_head")
    assert head > 0 and value(after, "code3_projection_lag_events", projection="forge_mirror") == head
    assert ("code3_db_reconnects_total", ()) in after and ("code3_payouts_overdue", ()) in after
    assert value(after, "code3_dead_letters", queue="webhooks") == 0
    assert TOKEN not in page.text


def test_the_worker_listener_serves_metrics_on_loopback_behind_the_token(world: World) -> None:
    w = world
    cooling(w)
    w.stack.advance(w.stack.cooling_period)
    worker = wiring.worker(w.settings("alice"))
    listener = metrics_listener(worker, 0, TOKEN.encode())
    try:
        host, port = listener.server_address[:2]
        assert host == "127.0.0.1"
        url = f"http://127.0.0.1:{port}/metrics"
        for headers in ({}, {"Authorization": "Bearer wrong-token-wrong-token"}):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10)
            assert refused.value.code == 401
            refused.value.close()
        lagging = samples(_get(url))
        assert value(lagging, "code3_projection_lag_events", projection="forge_mirror") > 0
        assert value(lagging, "code3_payouts_total", asset="USDT") == 0
        worker.tick()  # catches the read models up and pays the bounty whose cooling ended
        worker.tick()  # and mirrors the payout's own events
        caught_up = samples(_get(url))
    finally:
        listener.shutdown()
        listener.server_close()
        worker.close()
    assert value(caught_up, "code3_projection_lag_events", projection="forge_mirror") == 0
    assert value(caught_up, "code3_projection_lag_events", projection="bounty_board") == 0
    assert value(caught_up, "code3_payouts_total", asset="USDT") == 1
    assert value(caught_up, "code3_payout_amount_total", asset="USDT") == w["alice"].chain.list_bounties()[0].amount


def _get(url: str) -> str:
    request = urllib.request.Request(url, headers=AUTH)
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return answer.read().decode()


def test_code3_worker_metrics_port_reads_the_serve_token_as_serve_does(tmp_path: Path) -> None:
    env = {**os.environ, "CODE3_PROJECT": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("CODE3_SERVE_TOKEN", None)
    token = subprocess.run([*CODE3, "serve", "--print-token"], env=env, capture_output=True, text=True,
                           timeout=120, check=True).stdout.strip()
    worker = subprocess.Popen([*CODE3, "worker", "--metrics-port", "0", "--interval", "60"], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = worker.stdout.readline() if worker.stdout else ""
        assert "metrics at http://127.0.0.1:" in line, (line, worker.stderr.read() if worker.poll() is not None
                                                         and worker.stderr else "")
        url = line.split("metrics at ", 1)[1].strip()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=30)
        assert refused.value.code == 401
        refused.value.close()
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            page = samples(answer.read().decode())
        assert value(page, "code3_store_up") == 1
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.communicate(timeout=60)


def test_json_log_lines_parse_one_by_one_and_carry_no_secret() -> None:
    import io

    registered = "registered-secret-value-0123456789"
    register_secret(registered)
    github = "ghp_" + "a1B2c3D4e5" * 4
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ScrubFilter())
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("code3.test_operations")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        logger.info("pushed with %s\nsecond line", github, extra={"bounty_id": "7", "auth": f"Bearer {registered}",
                                                                  "api_token": "plain-value", "detail": {
                                                                      "nested": [registered], "password": "x"}})
        try:
            raise RuntimeError(f"the node said {registered}")
        except RuntimeError:
            logger.exception("call failed")
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2, lines
    first, second = (json.loads(line) for line in lines)
    assert {"time", "level", "logger", "message"} <= set(first) and first["level"] == "INFO"
    assert first["logger"] == "code3.test_operations" and first["time"].endswith("+00:00")
    assert first["message"].startswith("pushed with ***") and first["message"].endswith("second line")
    assert first["bounty_id"] == "7" and first["api_token"] == "***" and first["detail"]["password"] == "***"
    assert second["level"] == "ERROR" and "RuntimeError" in second["exception"]
    for secret in (registered, github, "plain-value"):
        assert secret not in stream.getvalue()


def test_code3_mcp_logs_json_on_stderr_and_stdout_stays_json_rpc(tmp_path: Path) -> None:
    github = "ghp_" + "Z9y8X7w6V5" * 4
    # start-up logs where it builds the tools manifest: a cache directory named like a GitHub token puts one there
    env = {**os.environ, "CODE3_PROJECT": str(tmp_path), "PYTHONPATH": str(ROOT), "CODE3_LOG_FORMAT": "json",
           "CODE3_LOG_LEVEL": "DEBUG", "CODE3_CACHE_DIR": str(tmp_path / "cache" / github)}
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "server_mcp.accept_task", "arguments": {"task_id": f"{github}/x#1"}}}]
    mcp = subprocess.Popen([*CODE3, "mcp"], env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    assert mcp.stdin is not None and mcp.stdout is not None
    out = []
    for message in messages:
        mcp.stdin.write(json.dumps(message) + "\n")
        mcp.stdin.flush()
        if "id" in message:
            out.append(json.loads(mcp.stdout.readline()))  # stdout: JSON-RPC lines only
    rest, stderr = mcp.communicate(timeout=60)  # stdin closed: the server ends
    assert rest == "" and [m.get("id") for m in out] == [1, 2] and all(m["jsonrpc"] == "2.0" for m in out)
    assert out[1]["result"]["isError"] is True
    logged = [json.loads(line) for line in stderr.splitlines()]  # every stderr line is one JSON object
    assert logged, "DEBUG logging says something"
    assert all({"time", "level", "logger", "message"} <= set(entry) for entry in logged)
    building = [e for e in logged if "tools manifest" in e["message"]]
    assert building and all("cache/***" in e["message"] for e in building), "logged, and scrubbed"
    assert any(e["logger"] == "code3.mcp" and "server_mcp.accept_task failed: E_" in e["message"] for e in logged)
    assert github not in stderr


def test_an_unknown_log_format_is_refused_with_a_hint(tmp_path: Path) -> None:
    env = {**os.environ, "CODE3_PROJECT": str(tmp_path), "PYTHONPATH": str(ROOT), "CODE3_LOG_FORMAT": "xml"}
    done = subprocess.run([*CODE3, "config"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "E_VALIDATION" in done.stderr and "json" in done.stderr
    assert done.stdout == ""


def test_doctor_reports_lag_leases_backlog_and_overdue_payouts(world: World) -> None:
    w = world
    published = cooling(w)
    w.stack.advance(w.stack.cooling_period + OVERDUE_AFTER_S + 5)
    settings = w.settings("alice")
    checks = {c.name: c for c in diagnose(settings)}
    text = report(list(checks.values()))
    bounty_id = published["bounty"]["bounty_id"]
    assert not checks["payouts"].ok and bounty_id in checks["payouts"].detail, text
    assert "not paid" in checks["payouts"].detail and "code3 worker" in checks["payouts"].hint
    assert not checks["projection lag"].ok and "forge_mirror by" in checks["projection lag"].detail, text
    assert checks["leases"].ok and "no lease held" in checks["leases"].detail
    assert checks["dead-letter backlog"].ok and "0 webhook delivery(ies) dead" in checks["dead-letter backlog"].detail

    worker = wiring.worker(settings)
    try:
        worker.tick()  # mirrors, pays; and holds its leases while it runs
        worker.tick()  # and mirrors the payout's own events
        held = {c.name: c for c in diagnose(settings)}
    finally:
        worker.close()
    text = report(list(held.values()))
    assert held["payouts"].ok and "none overdue" in held["payouts"].detail and "paid (board): 1 in USDT" in text, text
    assert held["projection lag"].ok and "forge_mirror 0" in held["projection lag"].detail, text
    assert held["leases"].ok and f"forge_mirror held by {worker.runner.owner}" in held["leases"].detail, text
    assert all(c.ok for c in held.values()), text


def test_doctor_exits_with_a_finding_on_an_overdue_payout(world: World, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from code3.cli import main

    w = world
    cooling(w)
    w.stack.advance(w.stack.cooling_period + OVERDUE_AFTER_S + 5)
    if w.database_url:
        monkeypatch.setenv("CODE3_DATABASE_URL", w.database_url)
    status = main(["doctor", "--project", str(w.project), "--identity", "alice"])
    out = capsys.readouterr().out
    assert status == 1, out  # 1: a finding (code3/cli_errors.py); 2 is doctor's own failure
    assert "[FAIL] payouts:" in out and "[FAIL] projection lag:" in out and "[ok] leases:" in out


def test_a_scrape_still_answers_when_the_store_does_not(tmp_path: Path) -> None:
    def factory() -> Any:
        raise RuntimeError("connection refused")  # the services cannot be built: the database is down

    with TestClient(build_app(factory, b"webhook-secret", token=TOKEN.encode()),
                    base_url="http://127.0.0.1:8765") as client:
        page = client.get("/metrics", headers=AUTH)
    assert page.status_code == 200
    found = samples(page.text)
    assert value(found, "code3_store_up") == 0 and ("code3_log_head", ()) not in found
    assert ("code3_db_reconnects_total", ()) in found, "this process's own counters are still there"


def test_the_worker_listener_answers_only_metrics_and_a_bad_port_is_refused(world: World, tmp_path: Path) -> None:
    worker = wiring.worker(world.settings("alice"))
    listener = metrics_listener(worker, 0, TOKEN.encode())
    try:
        with pytest.raises(urllib.error.HTTPError) as elsewhere:
            urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{listener.server_address[1]}/mcp",
                                                          headers=AUTH), timeout=10)
        assert elsewhere.value.code == 404
        elsewhere.value.close()
    finally:
        listener.shutdown()
        listener.server_close()
        worker.close()
    env = {**os.environ, "CODE3_PROJECT": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([*CODE3, "worker", "--metrics-port", "70000"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1 and "E_VALIDATION" in done.stderr and "--metrics-port" in done.stderr
