"""`code3 serve` requires its bearer token on /mcp and on every route but the webhook (its HMAC) and /healthz.

The token is generated once into <project>/.code3/serve_token (0600 in a 0700 directory), or taken from
CODE3_SERVE_TOKEN; it is compared in constant time and printed only by `code3 serve --print-token`.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from code3.settings import Settings
from mcp_tools.http.tokens import serve_token
from tests.e2e.test_protocol_errors import INITIALIZE, LEGACY, MODERN, TOKEN, HttpServer, messages, request

pytestmark = pytest.mark.e2e


class Serve:
    """A `code3 serve --port 0` process and what its ready line said."""

    def __init__(self, project: Path, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "code3", "serve", "--port", "0"], cwd=project, text=True,
                                     env={**os.environ, "CODE3_PROJECT": str(project), "CODE3_LOG_LEVEL": "DEBUG",
                                          **(env or {})},
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"code3 serve did not start: {self.proc.stderr.read() if self.proc.stderr else ''}"
        self.ready = json.loads(line)
        self.url = self.ready["listening"]

    def stop(self) -> tuple[str, str]:
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=30)
        assert self.proc.returncode == 0, err
        return out, err


def post_initialize(url: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{url}/mcp", json=INITIALIZE, timeout=30,
                      headers={"Accept": "application/json, text/event-stream", **headers})


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Serve]:
    serve = Serve(tmp_path)
    yield serve
    serve.stop()


def test_serve_generates_a_private_token_and_says_where_it_is_not_what_it_is(tmp_path: Path) -> None:
    serve = Serve(tmp_path)
    try:
        token_file = Path(serve.ready["token_file"])
        assert token_file == Settings(project=tmp_path).secrets_dir / "serve_token"  # in CODE3_HOME, not the project
        assert not (tmp_path / ".code3" / "serve_token").exists()
        token = token_file.read_text().strip()
        assert len(token) >= 32
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
        ok = post_initialize(serve.url, {"Authorization": f"Bearer {token}"})
        assert ok.status_code == 200 and messages(ok)[-1]["result"]["serverInfo"]["name"] == "code3"
    finally:
        out, err = serve.stop()
    assert token not in json.dumps(serve.ready) + out + err, "the token is printed nowhere"
    printed = subprocess.run([sys.executable, "-m", "code3", "serve", "--print-token", "--project", str(tmp_path)],
                             capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0 and printed.stdout.strip() == token, printed.stderr
    again = Serve(tmp_path)
    try:
        assert Path(again.ready["token_file"]).read_text().strip() == token, "kept across restarts"
    finally:
        again.stop()


def test_mcp_refuses_a_missing_or_wrong_token_with_a_bearer_challenge(served: Serve) -> None:
    missing = post_initialize(served.url, {})
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == 'Bearer realm="code3"'
    assert "mcp-session-id" not in missing.headers
    for wrong in ("Bearer nope", "Basic dXNlcjpwYXNz", "Bearer", f"bearer {'x' * 43}"):
        refused = post_initialize(served.url, {"Authorization": wrong})
        assert refused.status_code == 401, wrong
        assert refused.headers["www-authenticate"] == 'Bearer realm="code3", error="invalid_token"', wrong
    get = httpx.get(f"{served.url}/mcp", timeout=30)
    assert get.status_code == 401


def test_other_routes_need_the_token_but_the_webhook_and_health(served: Serve) -> None:
    token = Path(served.ready["token_file"]).read_text().strip()
    assert httpx.get(f"{served.url}/healthz", timeout=30).json() == {"ok": True}
    for path in ("/", "/api/bounties", "/anything"):
        assert httpx.get(f"{served.url}{path}", timeout=30).status_code == 401, path
        authorized = httpx.get(f"{served.url}{path}", headers={"Authorization": f"Bearer {token}"}, timeout=30)
        if path == "/":  # the web page's board, past the token
            assert authorized.status_code == 200 and "<h1>Bounties</h1>" in authorized.text
        else:
            assert authorized.status_code == 404, path  # nothing there, but past the token
    unsigned = httpx.post(f"{served.url}/webhooks/github", content=b"{}", timeout=30,
                          headers={"X-GitHub-Event": "ping", "X-GitHub-Delivery": "1"})
    assert unsigned.status_code == 401 and "X-Hub-Signature-256" in unsigned.text  # the HMAC, not the token


def test_a_configured_token_is_used_and_a_short_one_refused(tmp_path: Path) -> None:
    configured = "a-configured-token-of-enough-length"
    serve = Serve(tmp_path, env={"CODE3_SERVE_TOKEN": configured})
    try:
        assert serve.ready.get("token_from") == "CODE3_SERVE_TOKEN" and "token_file" not in serve.ready
        assert not (Settings(project=tmp_path).secrets_dir / "serve_token").exists()
        assert post_initialize(serve.url, {"Authorization": f"Bearer {configured}"}).status_code == 200
        assert post_initialize(serve.url, {"Authorization": "Bearer something-else-entirely"}).status_code == 401
    finally:
        out, err = serve.stop()
    assert configured not in out + err
    short = subprocess.run([sys.executable, "-m", "code3", "serve", "--port", "0", "--project", str(tmp_path)],
                           env={**os.environ, "CODE3_SERVE_TOKEN": "short"}, capture_output=True, text=True,
                           timeout=60)
    assert short.returncode == 1 and "CODE3_SERVE_TOKEN" in short.stderr  # the one CLI style: a code and a hint
    assert "code3: E_PRECONDITION: code3 serve: " in short.stderr and "\n  hint: " in short.stderr


def test_the_token_file_is_written_once_and_a_loosened_one_refused(tmp_path: Path) -> None:
    from domain.errors import Code3Error

    state = tmp_path / "secrets"
    tokens = {serve_token(state)[0] for _ in range(5)}
    assert len(tokens) == 1
    (state / "serve_token").chmod(0o644)
    with pytest.raises(Code3Error, match="mode 644") as refused:
        serve_token(state)
    assert "chmod 600" in refused.value.hint
    assert stat.S_IMODE((state / "serve_token").stat().st_mode) == 0o644, "never silently tightened"


def test_the_token_is_scrubbed_from_log_lines_and_messages(tmp_path: Path) -> None:
    from adapters.scrub import scrub

    token = serve_token(tmp_path / ".code3")[0].decode()
    configured = "configured-token-" + "q" * 20
    serve_token(tmp_path / "other", configured)
    for secret in (token, configured):
        assert secret not in scrub(f"upstream said: token {secret} is wrong (?token={secret})")


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_the_sdk_client_passes_the_token_as_a_header(tmp_path: Path, era: str) -> None:
    """What an MCP client configures (`headers: {Authorization: "Bearer …"}` in .mcp.json) over the SDK."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = HttpServer(tmp_path)

    async def scenario(token: str) -> Any:
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with client, Client(streamable_http_client(f"{http.url}/mcp", http_client=client),
                                  mode="legacy" if era == LEGACY else "auto") as mcp:
            added = await mcp.call_tool("add", {"a": 5, "b": 3})
            return mcp.protocol_version, added.content[0].text

    try:
        version, text = asyncio.run(scenario(TOKEN))
        assert text == "The sum of 5 + 3 = 8" and (version == MODERN) == (era == MODERN)
        with pytest.raises(BaseException):  # noqa: B017 (the SDK wraps the 401 in its own exception groups)
            asyncio.run(scenario("wrong-token-0123456789"))
    finally:
        http.close()


def test_log_messages_ride_the_calls_own_stream_over_http(tmp_path: Path) -> None:
    http = HttpServer(tmp_path)
    try:
        session = http.handshake()
        assert http.ask(request(1, "logging/setLevel", {"level": "info"}), session=session)["result"] == {}
        answer = http.post(request(2, "tools/call", {"name": "spec_mcp.plan",
                                                    "arguments": {"feature_id": "001-never-specified"}}),
                           session=session)
        sent = messages(answer)
        notes = [m for m in sent if m.get("method") == "notifications/message"]
        assert [n["params"]["level"] for n in notes] == ["info"], sent
        assert sent[-1]["id"] == 2 and sent[-1]["result"]["isError"] is True
    finally:
        http.close()


def test_an_open_sse_stream_does_not_hold_up_a_stop(tmp_path: Path) -> None:
    serve = Serve(tmp_path)
    token = Path(serve.ready["token_file"]).read_text().strip()
    auth = {"Authorization": f"Bearer {token}"}
    opened = post_initialize(serve.url, auth)
    session = opened.headers["mcp-session-id"]
    headers = {**auth, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
    httpx.post(f"{serve.url}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, timeout=30,
               headers={**headers, "Accept": "application/json, text/event-stream"})
    listening = threading.Event()

    def listen() -> None:  # the standalone GET stream a client keeps open for server messages
        try:
            with httpx.stream("GET", f"{serve.url}/mcp", headers={**headers, "Accept": "text/event-stream"},
                              timeout=60) as stream:
                listening.set()
                for _ in stream.iter_bytes():
                    pass
        except httpx.HTTPError:
            pass

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    assert listening.wait(30)
    started = time.monotonic()
    serve.stop()
    assert time.monotonic() - started < 20
    thread.join(30)
