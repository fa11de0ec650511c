"""Connections that come back (issue 20): `code3 serve` and `code3 worker` on PostgreSQL survive their backends
being terminated (as a failover or a database restart does) without a restart, answer /readyz 503 while the
database is out of reach and 200 after, and exit non-zero when cut off longer than CODE3_DB_OUTAGE_EXIT.

Only this test's own backends are terminated: each process gets a unique application_name (PGAPPNAME).
The outage is a loopback TCP proxy in front of PostgreSQL (tests/tools/tcp_proxy.py) that the test cuts.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import psycopg
import pytest

from adapters.keystore import Keystore
from code3.doctor import diagnose, report
from code3.settings import Settings
from code3.wiring import build_services
from tests.e2e.test_protocol_errors import messages
from tests.e2e.test_worker_flow import COOLING, Project, assert_exactly_once, settled_state, stop, wait_for
from tests.tools.tcp_proxy import TcpProxy

TOKEN = "a-serve-token-for-the-reconnect-tests-0123"
MAX_CONNECTIONS = 3  # per process, whatever identities it acts for (docs/operations.md: PostgreSQL)


@pytest.fixture
def database_url(postgres_url: str) -> str:
    """PostgreSQL only (tests/conftest.py's fresh schema): these tests terminate its backends and cut it off."""
    return postgres_url


class PgProject(Project):
    """The e2e worker flow's project (alice, bob, carol, a repository, funds) with its store on PostgreSQL."""

    def __init__(self, root: Path, database_url: str) -> None:
        self.root, self.database_url = root, database_url
        keys = Keystore(Settings(project=root).keystore_dir)
        for name in ("alice", "bob", "carol"):
            keys.new(name)
        self.people = {name: build_services(Settings(project=root, identity=name, cooling_period=COOLING,
                                                     resolver="alice", database_url=database_url))
                       for name in ("alice", "bob", "carol")}
        self.alice.chain.mint(self.alice.signer.address, "USDT", 5 * 1_000_000)  # type: ignore[attr-defined]
        self.alice.forge.create_repo("alice/todo-app")  # type: ignore[attr-defined]


def code3(*args: str, project: Path, database_url: str, app: str, log: Path | None = None,
          **env: str) -> subprocess.Popen[str]:
    """`code3 <args>` on `database_url` as application `app`; its stderr in `log` when given (read afterwards)."""
    environ = {**os.environ, "CODE3_PROJECT": str(project), "CODE3_IDENTITY": "alice", "CODE3_RESOLVER": "alice",
               "CODE3_COOLING_PERIOD": str(COOLING), "CODE3_LOG_LEVEL": "INFO", "CODE3_DATABASE_URL": database_url,
               "CODE3_SERVE_TOKEN": TOKEN, "PGAPPNAME": app, **env}
    with contextlib.ExitStack() as files:
        err = subprocess.PIPE if log is None else files.enter_context(log.open("w"))  # the child keeps its copy
        return subprocess.Popen([sys.executable, "-m", "code3", *args], env=environ, cwd=project, text=True,
                                stdout=subprocess.PIPE, stderr=err)


def listening(proc: subprocess.Popen[str]) -> str:
    line = proc.stdout.readline() if proc.stdout else ""
    assert line, f"code3 serve did not start: {proc.stderr.read() if proc.stderr else ''}"
    return str(json.loads(line)["listening"])


def backends(database_url: str, apps: list[str]) -> dict[str, int]:
    """How many PostgreSQL connections each of `apps` holds now (pg_stat_activity by application_name)."""
    with psycopg.connect(database_url.split("?")[0], autocommit=True, application_name="code3-test-observer") as conn:
        rows = conn.execute("SELECT application_name, count(*) FROM pg_stat_activity WHERE application_name = ANY(%s) "
                            "GROUP BY application_name", (apps,)).fetchall()
    return {name: int(count) for name, count in rows}


def terminate(database_url: str, apps: list[str]) -> int:
    """pg_terminate_backend on the backends of `apps` only (this test's processes), never other sessions'."""
    with psycopg.connect(database_url.split("?")[0], autocommit=True, application_name="code3-test-observer") as conn:
        rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ANY(%s) "
                            "AND pid <> pg_backend_pid()", (apps,)).fetchall()
    return sum(1 for (done,) in rows if done)


def board_read(url: str) -> dict[str, Any]:
    """server_mcp.accept_best_task over `code3 serve`'s /mcp as its identity (alice): it catches the board up and
    reads it; her own bounty is no candidate, so it answers success and accepts nothing."""
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
    init = httpx.post(f"{url}/mcp", headers=headers, timeout=30, json={
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
    assert init.status_code == 200, init.text
    session = {"Mcp-Session-Id": init.headers["mcp-session-id"], "Mcp-Protocol-Version": "2025-11-25"}
    httpx.post(f"{url}/mcp", headers={**headers, **session}, timeout=30,
               json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    answer = httpx.post(f"{url}/mcp", headers={**headers, **session}, timeout=60, json={
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "server_mcp.accept_best_task", "arguments": {}}})
    assert answer.status_code == 200, answer.text
    [body] = [m for m in messages(answer) if m.get("id") == 1]
    result = body["result"]
    assert not result.get("isError"), f"the board read failed: {result['content']}"
    return dict(result["structuredContent"])


@pytest.mark.postgres
def test_terminated_backends_are_replaced_and_payouts_webhooks_and_board_reads_go_on(
        tmp_path: Path, database_url: str) -> None:
    project = PgProject(tmp_path, database_url)
    tag = uuid.uuid4().hex[:8]
    apps = [f"code3-test-{tag}-serve", f"code3-test-{tag}-worker"]
    serve_log = tmp_path / "serve.log"
    serve = code3("serve", "--port", "0", project=tmp_path, database_url=database_url, app=apps[0], log=serve_log)
    worker = None
    try:
        url = listening(serve)
        published, prs = project.lifecycle_until_submitted()
        assert board_read(url)["message"] == "no open bounty matches"
        worker_log = tmp_path / "worker.log"
        worker = code3("worker", "--interval", "0.2", project=tmp_path, database_url=database_url, app=apps[1],
                       log=worker_log)
        wait_for("the worker's mirror", lambda: len(project.comments(published["issue"]["number"])) >= 5)

        held = backends(database_url, apps)
        assert set(held) == set(apps) and max(held.values()) <= MAX_CONNECTIONS, held
        assert terminate(database_url, apps) == sum(held.values()) >= 2

        assert board_read(url)["success"], "a board read right after the termination"
        project.alice.forge.merge_pr(prs["bob"])  # type: ignore[attr-defined]
        [delivery] = project.alice.forge.deliveries()  # type: ignore[attr-defined]
        # 200, or 202 when the worker's own look for merges (merges_found) reported this one a moment earlier
        assert delivery["status"] in (200, 202), f"the merge webhook after the termination: {delivery}"
        wait_for("the payout after the termination", lambda: settled_state(project, published["issue"]["number"]),
                 timeout=30)
        assert_exactly_once(project, published)
        forge = project.alice.forge
        assert forge.redeliver(delivery["id"]) == 200, "a webhook the serve reads and records: a duplicate merge"
        served = serve_log.read_text()  # the serve was idle when its backends went: nothing of it may fail
        for broken in ("E_INTERNAL", "OperationalError", "InterfaceError", "AdminShutdown", "Traceback"):
            assert broken not in served, f"{broken} after the termination:\n{served}"
        failed = worker_log.read_text().count("worker step ")  # a step in flight may fail once, never again
        assert failed <= 7, worker_log.read_text()
        assert serve.poll() is None and worker.poll() is None, "nothing was restarted"
        held = backends(database_url, apps)
        assert max(held.values()) <= MAX_CONNECTIONS, held
    finally:
        for proc in (worker, serve):
            if proc is not None:
                stop(proc)
        project.close()


def readyz(url: str, verbose: bool = False, token: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(f"{url}/readyz" + ("?verbose" if verbose else ""), headers=headers, timeout=15)


@pytest.mark.postgres
def test_readyz_says_not_ready_while_the_database_is_cut_off_and_ready_after(
        tmp_path: Path, database_url: str) -> None:
    proxy = TcpProxy(urlparse(database_url).port or 5432)
    Keystore(Settings(project=tmp_path).keystore_dir).new("alice")
    serve = code3("serve", "--port", "0", project=tmp_path, database_url=proxy.url(database_url),
                  app=f"code3-test-{uuid.uuid4().hex[:8]}-serve")
    try:
        url = listening(serve)
        first = readyz(url)
        assert (first.status_code, first.text) == (200, "ready")
        assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200

        proxy.cut()
        down = readyz(url)
        assert (down.status_code, down.text) == (503, "not ready"), "nothing but the verdict without the token"
        assert readyz(url, verbose=True).status_code == 401, "the details need the serve token"
        detail = readyz(url, verbose=True, token=TOKEN)
        assert detail.status_code == 503 and detail.json()["ready"] is False and detail.json()["error"], detail.text
        assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200, "liveness is not readiness"
        checks = {c.name: c for c in diagnose(Settings(project=tmp_path, identity="alice",
                                                         database_url=proxy.url(database_url)))}
        assert not checks["database"].ok and "unreachable" in checks["database"].detail, checks["database"]
        assert "CODE3_DATABASE_URL" in checks["database"].hint and not checks["event store"].ok

        proxy.restore()
        wait_for("/readyz to say ready again", lambda: readyz(url).status_code == 200, timeout=25)
        assert readyz(url, verbose=True, token=TOKEN).json() == {"ready": True, "error": None, "unreachable_s": 0.0}
        proxy.drop()  # silent this time: the probe's query hangs instead of failing
        hung = readyz(url)
        assert (hung.status_code, hung.text) == (503, "not ready"), "a probe that gets no answer is not ready"
        proxy.restore()
        wait_for("/readyz to say ready after the silent outage", lambda: readyz(url).status_code == 200, timeout=25)
        assert serve.poll() is None
        checks = {c.name: c for c in diagnose(Settings(project=tmp_path, identity="alice",
                                                         database_url=proxy.url(database_url)))}
        assert checks["database"].ok and checks["event store"].ok, report(list(checks.values()))
    finally:
        stop(serve)
        proxy.close()


@pytest.mark.postgres
def test_a_process_cut_off_silently_longer_than_the_outage_limit_exits_non_zero_and_says_why(
        tmp_path: Path, database_url: str) -> None:
    proxy = TcpProxy(urlparse(database_url).port or 5432)
    Keystore(Settings(project=tmp_path).keystore_dir).new("alice")
    tag = uuid.uuid4().hex[:8]
    through = proxy.url(database_url)
    serve = code3("serve", "--port", "0", project=tmp_path, database_url=through, app=f"code3-test-{tag}-serve",
                  CODE3_DB_OUTAGE_EXIT="2")
    worker = code3("worker", "--interval", "0.2", project=tmp_path, database_url=through,
                   app=f"code3-test-{tag}-worker", CODE3_DB_OUTAGE_EXIT="2")
    try:
        url = listening(serve)
        assert readyz(url).status_code == 200
        wait_for("the worker to run", lambda: worker.stdout is not None and "running" in worker.stdout.readline())
        time.sleep(1.0)
        assert serve.poll() is None and worker.poll() is None, "a short limit alone ends nothing"
        proxy.drop()  # silent: every query in flight hangs, no error comes back
        for proc in (serve, worker):
            code = proc.wait(timeout=20)
            err = proc.stderr.read() if proc.stderr else ""
            for stream in (proc.stdout, proc.stderr):
                if stream:
                    stream.close()
            assert code == 3, err
            assert "unreachable" in err and "CODE3_DB_OUTAGE_EXIT" in err, err
    finally:
        for proc in (serve, worker):
            if proc.poll() is None:
                stop(proc)
        proxy.close()


def test_readyz_on_sqlite_says_ready_with_nothing_else_and_details_only_with_the_token(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from mcp_tools.http.app import build_app

    Keystore(Settings(project=tmp_path).keystore_dir).new("alice")
    settings = Settings(project=tmp_path, identity="alice")
    built: list[Any] = []
    app = build_app(lambda: built.append(build_services(settings)) or built[-1], b"webhook-secret",
                    token=TOKEN.encode())
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        answer = client.get("/readyz")
        assert (answer.status_code, answer.text) == (200, "ready")
        assert client.get("/readyz?verbose").status_code == 401
        detail = client.get("/readyz?verbose", headers={"Authorization": f"Bearer {TOKEN}"})
        assert detail.json() == {"ready": True, "error": None, "unreachable_s": 0.0}
    assert len(built) == 1
    for services in built:
        services.close()


def test_the_outage_limit_is_seconds_300_by_default_and_anything_else_is_refused_with_the_way_out() -> None:
    from adapters.db_watchdog import outage_limit
    from domain.errors import Code3Error

    assert outage_limit({}) == 300.0 and outage_limit({"CODE3_DB_OUTAGE_EXIT": " 2.5 "}) == 2.5
    assert outage_limit({"CODE3_DB_OUTAGE_EXIT": "0"}) == 0.0, "0: never exit"
    for wrong in ("abc", "-1", "nan", "inf", "5m"):
        with pytest.raises(Code3Error) as refused:
            outage_limit({"CODE3_DB_OUTAGE_EXIT": wrong})
        assert refused.value.code.value == "E_VALIDATION" and "CODE3_DB_OUTAGE_EXIT" in refused.value.hint, wrong


def test_a_wrong_outage_limit_stops_the_worker_before_any_work(tmp_path: Path) -> None:
    Keystore(Settings(project=tmp_path).keystore_dir).new("alice")
    proc = subprocess.run([sys.executable, "-m", "code3", "worker", "--once"], cwd=tmp_path, text=True,
                          capture_output=True, timeout=60,
                          env={**os.environ, "CODE3_PROJECT": str(tmp_path), "CODE3_IDENTITY": "alice",
                               "CODE3_DB_OUTAGE_EXIT": "soon"})
    assert proc.returncode == 1 and "E_VALIDATION: CODE3_DB_OUTAGE_EXIT='soon'" in proc.stderr, proc.stderr


@pytest.mark.postgres
def test_in_one_process_the_views_and_the_store_reconnect_and_count_what_they_lost(
        tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from adapters.event_store import open_store
    from adapters.pg_pool import connection_stats
    from adapters.sql import SqlDb

    app = f"code3-test-{uuid.uuid4().hex[:8]}-inproc"
    monkeypatch.setenv("PGAPPNAME", app)
    views, other, store = SqlDb.postgres_url(database_url), SqlDb.postgres_url(database_url), open_store(
        tmp_path, database_url)
    try:
        assert views.query("SELECT 1") == [(1,)] and store.recorder.max_notification_id() in (0, None)
        assert backends(database_url, [app])[app] <= MAX_CONNECTIONS, "two views and a store share their pools"
        before = connection_stats()
        assert terminate(database_url, [app]) >= 2
        assert views.query("SELECT 2") == [(2,)], "the terminated connection was replaced before use"
        with other.transaction() as cur:
            assert cur.execute("SELECT 3").fetchone() == (3,)
        assert store.recorder.max_notification_id() in (0, None)
        after = connection_stats()
        assert after["lost"] >= before["lost"] + 2 and after["opened"] >= before["opened"] + 2, (before, after)
        from prometheus_client.parser import text_string_to_metric_families

        from adapters import metrics

        scraped = {s.name: s.value for f in text_string_to_metric_families(metrics.exposition(None).decode())
                   for s in f.samples}
        assert scraped["code3_db_reconnects_total"] >= after["lost"], "/metrics shows the reconnects"
        assert scraped["code3_db_connections_open"] == connection_stats()["open"] >= 1
    finally:
        views.close()
        other.close()
        store.close()


@pytest.mark.postgres
def test_sigterm_stops_a_serve_and_a_worker_whose_database_hangs_within_seconds(
        tmp_path: Path, database_url: str) -> None:
    """A stop must not wait for a database that answers nothing (a supervisor's restart would hang with it): a
    tick or a request in flight is abandoned after its grace, which loses nothing (each step is idempotent)."""
    proxy = TcpProxy(urlparse(database_url).port or 5432)
    Keystore(Settings(project=tmp_path).keystore_dir).new("alice")
    tag = uuid.uuid4().hex[:8]
    through = proxy.url(database_url)
    serve = code3("serve", "--port", "0", project=tmp_path, database_url=through, app=f"code3-test-{tag}-serve")
    worker = code3("worker", "--interval", "0.2", project=tmp_path, database_url=through,
                   app=f"code3-test-{tag}-worker")
    try:
        url = listening(serve)
        wait_for("the worker to run", lambda: worker.stdout is not None and "running" in worker.stdout.readline())
        proxy.drop()  # silent: the worker's next tick and the serve's probe hang on their queries
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(f"{url}/readyz", timeout=2)
        time.sleep(1.0)
        for proc in (serve, worker):
            proc.send_signal(signal.SIGTERM)
        for proc in (serve, worker):
            started = time.monotonic()
            code = proc.wait(timeout=30)
            assert code == 0 and time.monotonic() - started < 15, (code, proc.stderr.read() if proc.stderr else "")
    finally:
        for proc in (serve, worker):
            if proc.poll() is None:
                stop(proc)
            for stream in (proc.stdout, proc.stderr):
                if stream:
                    stream.close()
        proxy.close()
