"""Concurrency in a serve (issue 20): a slow call stalls no other.

A real `code3 serve` whose GitHub stand-in holds issue creation: while a publish waits there, `add`, a board read
and a write answer (no timing threshold: they complete while the publish is still pending), and a second publish
of the same key waits for the first and answers the same issue (one issue on the forge). The Runtime's own
behaviour is checked in one process: no lock around handlers, services built once, and a lost write race answered
with a coded error.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from benchmarks.concurrency import KINDS, SLOW_REPO, Serve, call_for, check, prepare, publish_args, session, slow_github
from mcp_tools.binding import Runtime
from mcp_tools.conflicts import write_conflict

pytestmark = pytest.mark.filterwarnings("default::mcp.MCPDeprecationWarning")

PUBLISH = "spec_mcp.publish_issue_with_metadata"


def test_add_a_board_read_and_a_write_answer_while_a_publish_waits_on_a_slow_forge(tmp_path: Path) -> None:
    project, home = prepare(tmp_path, bounties=20, clients=1)
    with slow_github(tmp_path) as github:
        serve = Serve(project, home, github.api_url, log_file=tmp_path / "serve.log")
        try:
            hold = github.hold_issue_creation(120)

            async def scenario() -> tuple[Any, Any, list[str]]:
                async with session(serve.url) as first, session(serve.url) as second, session(serve.url) as other:
                    publishing = asyncio.create_task(first.call_tool(PUBLISH, publish_args()))
                    for _ in range(600):  # until the publish waits at the forge
                        if hold.entered.is_set() or publishing.done():
                            break
                        await asyncio.sleep(0.05)
                    assert hold.entered.is_set(), f"the publish never reached the forge: {await publishing}"
                    again = asyncio.create_task(second.call_tool(PUBLISH, publish_args()))  # the same key
                    answered = []
                    for kind in KINDS:
                        result = await asyncio.wait_for(other.call_tool(*call_for(kind, 0, 1)), 60)
                        assert check(kind, result) is None, check(kind, result)
                        answered.append(kind)
                    assert not publishing.done() and not again.done(), "the publishes were still waiting"
                    racing = await asyncio.gather(*(  # one aggregate written at once: each saved, or a coded error
                        other.call_tool("add_comment", {"file_path": "src/client_0.py", "comment": f"race {n}"})
                        for n in range(8)), return_exceptions=True)
                    for result in racing:  # CodeNexus answers a lost race as its JSON-RPC -32002, never -32603
                        if isinstance(result, MCPError):
                            assert result.error.code == -32002 and "retry" in str(result.error.data), result.error
                        else:
                            assert not isinstance(result, BaseException) and not result.is_error, result
                    hold.release.set()
                    return await asyncio.wait_for(publishing, 60), await asyncio.wait_for(again, 60), answered

            published, repeated, answered = asyncio.run(scenario())
        finally:
            serve.stop()
        assert answered == list(KINDS), "add, the board read and the write answered while the publish waited"
        assert not published.is_error, published.content[0].text
        assert not repeated.is_error, repeated.content[0].text
        first, second = published.structured_content, repeated.structured_content
        assert first["issue"] == second["issue"] and first["bounty"] == second["bounty"]
        issues = [item for item in github.state.items[SLOW_REPO].values() if item.pull is None]
        assert len(issues) == 1, "two concurrent publishes of one key made one issue"


def test_the_runtime_runs_handlers_at_once_and_builds_the_services_once() -> None:
    built: list[object] = []

    def factory() -> object:
        built.append(object())
        return built[-1]

    runtime = Runtime(factory)
    inside, release = threading.Event(), threading.Event()
    seen: list[Any] = []

    def slow(services: Any) -> None:
        inside.set()
        release.wait(30)
        seen.append(services)

    slow_thread = threading.Thread(target=runtime.run, args=(slow,))
    slow_thread.start()
    assert inside.wait(30)
    fast = threading.Thread(target=lambda: seen.append(runtime.run(lambda s: s)))
    fast.start()
    fast.join(30)
    assert not fast.is_alive() and len(seen) == 1, "a call completes while another one is still running"
    release.set()
    slow_thread.join(30)
    assert seen[0] is seen[1] and len(built) == 1


def test_a_write_that_keeps_losing_its_race_answers_a_coded_error_not_internal() -> None:
    from eventsourcing.persistence import IntegrityError

    from domain.errors import Code

    try:
        try:
            raise RuntimeError("the driver's own error")
        except RuntimeError as driver:
            raise IntegrityError("stale aggregate") from driver
    except IntegrityError as exc:
        conflict = write_conflict(exc)
    assert conflict is not None and conflict.code is Code.PRECONDITION and "retry" in conflict.hint
    assert write_conflict(ValueError("a bug")) is None
    from eventsourcing.persistence import ConnectionUnavailableError

    busy = write_conflict(ConnectionUnavailableError("Timed out waiting for return of writer"))
    assert busy is not None and busy.code is Code.PRECONDITION


# --- sessions across serves -------------------------------------------------------------------------------------------

class RoundRobin(httpx2.AsyncBaseTransport):
    """One address in front of several serves, as a load balancer without session affinity: each HTTP request of
    the client goes to the next serve's port (an httpx2 transport, so the official SDK client runs unchanged)."""

    def __init__(self, ports: list[int]) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._ports = itertools.cycle(ports)
        self.sent: list[tuple[int, str]] = []  # (port, the session header the client sent, "" for none)

    async def handle_async_request(self, request: Any) -> Any:
        port = next(self._ports)
        self.sent.append((port, request.headers.get("mcp-session-id", "")))
        request.url = request.url.copy_with(port=port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@pytest.mark.postgres
def test_stateless_serves_on_one_postgres_schema_answer_a_session_opened_on_another(tmp_path: Path,
                                                                                   postgres_url: str) -> None:
    """Two `code3 serve --stateless` on one PostgreSQL schema behind one address: the SDK client initializes on
    serve A and its calls land on B and A in turn (with the session header A gave, or none), and every one is
    answered; a write through one serve is read through the other; progress notifications still come (on the
    call's own stream); each serve holds at most 3 connections."""
    import httpx
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from benchmarks.concurrency import TOKEN
    from tests.integration.test_db_reconnect import backends

    project, home = prepare(tmp_path, bounties=20, database_url=postgres_url, clients=2)
    apps = [f"code3-stateless-{i}-{tmp_path.name[-12:]}" for i in range(2)]
    with slow_github(tmp_path) as github:
        serves = [Serve(project, home, github.api_url, postgres_url, {"PGAPPNAME": app}, tmp_path / f"{app}.log",
                        args=("--stateless",)) for app in apps]
        try:
            ports = [int(s.url.rsplit(":", 1)[1]) for s in serves]
            assert all(s.ready["identity"] == "alice" and s.ready["stateless"] is True for s in serves)
            headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
            opened = httpx.post(f"{serves[0].url}/mcp", headers=headers, timeout=60, json={
                "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
            assert opened.status_code == 200 and "mcp-session-id" not in opened.headers, "stateless: no session"
            for header in ({}, {"Mcp-Session-Id": "a-session-serve-a-never-saw"}):  # a stale header is ignored
                on_b = httpx.post(f"{serves[1].url}/mcp", timeout=60, headers={**headers, **header}, json={
                    "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add",
                                                                                  "arguments": {"a": 2, "b": 3}}})
                assert on_b.status_code == 200 and "The sum of 2 + 3 = 5" in on_b.text, on_b.text  # seed 003's text

            balancer = RoundRobin(ports)

            async def client() -> list[Any]:
                http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60,
                                          transport=balancer)
                async with http, Client(streamable_http_client(f"{serves[0].url}/mcp", http_client=http),
                                        mode="legacy") as mcp:
                    answers = [await mcp.call_tool(*call_for(kind, 0, 1)) for kind in KINDS]
                    answers.append(await mcp.call_tool("add_comment", {"file_path": "src/client_1.py",
                                                                       "comment": "written through one serve"}))
                    return answers

            answers = asyncio.run(client())
            found = [httpx.post(f"{s.url}/mcp", headers=headers, timeout=60, json={  # read on each serve
                "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                    "name": "query_files", "arguments": {"comment_contains": "written through one serve"}}}).text
                for s in serves]
            progress = httpx.post(f"{serves[1].url}/mcp", headers=headers, timeout=120, json={  # on the call's stream
                "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "batch", "arguments": {}, "_meta": {"progressToken": "p"}}}).text
            held = backends(postgres_url, apps)
        finally:
            for s in serves:
                s.stop()
    for kind, answer in zip(KINDS, answers, strict=False):
        assert check(kind, answer) is None, check(kind, answer)
    assert not answers[3].is_error, answers[3].content
    assert all("src/client_1.py" in text for text in found), "the write is read through either serve"
    assert {port for port, _ in balancer.sent} == set(ports), "the calls went to both serves"
    assert '"method":"notifications/progress"' in progress and '"successful":' in progress.replace('\\"', '"'), \
        "progress notifications ride the call's own response stream without a session"
    assert all(count <= 3 for count in held.values()), f"PostgreSQL connections per serve: {held}"


def test_every_familys_error_decorator_answers_a_lost_write_race_with_the_coded_error() -> None:
    """ai-loom and reverse-spec turn unexpected exceptions into their INTERNAL answer before the front sees
    them: a lost write race must not become one."""
    from eventsourcing.persistence import IntegrityError

    from domain.errors import Code, Code3Error
    from mcp_tools.ai_loom.errors import LoomError, loom_errors
    from mcp_tools.reverse_spec.common import seed_errors

    def racing() -> None:
        raise IntegrityError("stale aggregate")

    for decorate, kind in ((loom_errors, LoomError), (seed_errors, Code3Error)):
        with pytest.raises(kind) as answered:
            decorate(racing)()
        assert answered.value.code is Code.PRECONDITION, decorate.__name__
