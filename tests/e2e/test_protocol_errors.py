"""JSON-RPC errors as JSON-RPC 2.0, the MCP specification and seed 003 say, on both transports and in both
protocol eras (the 2025-11-25 handshake and the 2026-07-28 per-request envelope).

| what the client sends                  | answer                                   |
| -------------------------------------- | ---------------------------------------- |
| a line / body that is not JSON          | -32700, id null                          |
| JSON that is not a JSON-RPC message     | -32600 (with its id when it has one)     |
| a method the server does not serve      | -32601                                   |
| tools/call of an unknown tool           | -32602 "Unknown tool: <name>"            |
| prompts/get of an unknown prompt        | -32602 "Unknown prompt: <name>"          |
| completion/complete, unknown reference  | a result: an empty list of values        |

stdio runs real `code3 mcp` processes (and checks stderr has no traceback); HTTP runs `code3 serve`'s app
in this process behind its token (`HttpServer`), which the other protocol tests reuse.
"""

from __future__ import annotations

import json
import os
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

pytestmark = pytest.mark.e2e

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
TOKEN = "test-serve-token-0123456789abcdef"
SECRET = b"webhook-secret-for-tests-0123456789"
CLIENT_INFO = {"name": "raw-test", "version": "0"}


def envelope(**extra: Any) -> dict[str, Any]:
    """The 2026-07-28 request `_meta` envelope."""
    return {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO, **extra}


def request(request_id: int, method: str, params: dict[str, Any] | None = None, era: str = LEGACY,
            **meta: Any) -> dict[str, Any]:
    params = dict(params or {})
    if era == MODERN:
        params["_meta"] = envelope(**meta)
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params:
        message["params"] = params
    return message


INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def cases(era: str) -> list[tuple[str, str | dict[str, Any] | list[Any], dict[str, Any]]]:
    """(case, what is sent, what the answer must contain)."""
    return [
        ("not JSON", '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"', {"id": None, "code": -32700}),
        ("no method", {"jsonrpc": "2.0", "id": 7}, {"id": 7, "code": -32600}),
        ("a batch", [{"jsonrpc": "2.0", "id": 8, "method": "ping"}], {"id": None, "code": -32600}),
        ("a number for a method", {"jsonrpc": "2.0", "id": 9, "method": 5}, {"id": 9, "code": -32600}),
        ("unknown method", request(10, "nope/nothing", era=era), {"id": 10, "code": -32601}),
        ("unknown tool", request(11, "tools/call", {"name": "nope", "arguments": {}}, era=era),
         {"id": 11, "code": -32602, "message": "Unknown tool: nope"}),
        ("unknown prompt", request(12, "prompts/get", {"name": "nope"}, era=era),
         {"id": 12, "code": -32602, "message": "Unknown prompt: nope"}),
        ("completion, unknown reference",
         request(13, "completion/complete", {"ref": {"type": "ref/prompt", "name": "nope"},
                                             "argument": {"name": "feature_id", "value": "0"}}, era=era),
         {"id": 13, "values": []}),
    ]


def check(case: str, answer: dict[str, Any], expected: dict[str, Any]) -> None:
    assert answer.get("jsonrpc") == "2.0", (case, answer)
    assert "id" in answer and answer["id"] == expected["id"], (case, answer)
    if "values" in expected:
        assert "error" not in answer, (case, answer)
        assert answer["result"]["completion"]["values"] == expected["values"], (case, answer)
        return
    assert "result" not in answer, (case, answer)
    assert answer["error"]["code"] == expected["code"], (case, answer)
    data = answer["error"].get("data")  # seed 002's data, on every Code3 JSON-RPC error (mcp_tools.dialects)
    assert isinstance(data, dict) and set(data) == {"type", "details", "timestamp"}, (case, answer)
    assert data["type"] and data["details"] and data["timestamp"].endswith("Z"), (case, answer)
    if "message" in expected:
        assert answer["error"]["message"] == expected["message"], (case, answer)


# --- stdio ------------------------------------------------------------------------------------------------------------

class StdioServer:
    """A `code3 mcp` process spoken to line by line."""

    def __init__(self, project: Path, profile: str = "all", env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "code3", "mcp", "--profile", profile], cwd=project, text=True,
            env={**os.environ, "CODE3_PROJECT": str(project), "CODE3_LOG_LEVEL": "INFO", **(env or {})},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.notifications: list[dict[str, Any]] = []

    def send(self, message: str | dict[str, Any] | list[Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        """The next response (notifications before it are kept in `notifications`)."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, f"stdout closed; stderr: {self.stderr()}"
            message = json.loads(line)
            if "id" in message:
                return message
            self.notifications.append(message)

    def ask(self, message: str | dict[str, Any] | list[Any]) -> dict[str, Any]:
        self.send(message)
        return self.answer()

    def handshake(self) -> dict[str, Any]:
        result = self.ask(INITIALIZE)
        self.send(INITIALIZED)
        return result

    def close(self) -> str:
        """Close stdin, wait for a clean exit and return stderr."""
        _, err = self.proc.communicate(timeout=30)
        assert self.proc.returncode == 0, err
        return err

    def stderr(self) -> str:
        if self.proc.poll() is None:
            self.proc.kill()
        return self.proc.stderr.read() if self.proc.stderr else ""


@pytest.mark.parametrize("profile", ["all", "codenexus"])
@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_stdio_answers_every_protocol_error_as_json_rpc_says(tmp_path: Path, era: str, profile: str) -> None:
    server = StdioServer(tmp_path, profile=profile)
    try:
        if era == LEGACY:
            assert server.handshake()["result"]["protocolVersion"] == LEGACY
        for case, sent, expected in cases(era):
            check(case, server.ask(sent), expected)
        if era == LEGACY:  # the 2026-07-28 envelope on a handshake connection: refused below the middleware
            check("an envelope on a handshake connection", server.ask(request(14, "tools/list", era=MODERN)),
                  {"id": 14, "code": -32600})
        # the connection is still usable after all of that
        listed = server.ask(request(99, "tools/list", era=era))
        assert ("add" if profile == "all" else "add_tag") in {t["name"] for t in listed["result"]["tools"]}
    finally:
        err = server.close()
    assert "Traceback" not in err, err


def test_stdio_unreadable_lines_before_the_handshake_do_not_choose_the_era(tmp_path: Path) -> None:
    server = StdioServer(tmp_path)
    try:
        check("not JSON", server.ask("not json at all"), {"id": None, "code": -32700})
        check("no method", server.ask({"jsonrpc": "2.0", "id": "a"}), {"id": "a", "code": -32600})
        assert server.handshake()["result"]["protocolVersion"] == LEGACY
        assert server.ask(request(1, "ping"))["result"] == {}
    finally:
        err = server.close()
    assert "Traceback" not in err


# --- streamable HTTP --------------------------------------------------------------------------------------------------

class HttpServer:
    """`code3 serve`'s app (token, webhook, MCP) under uvicorn in a thread of this process."""

    def __init__(self, project: Path, token: str = TOKEN, identity: str = "alice", stateless: bool = False) -> None:
        import uvicorn

        from code3.wiring import build_services
        from mcp_tools.http.app import build_app

        settings = Settings(project=project, identity=identity)
        app = build_app(lambda: build_services(settings), SECRET, token=token.encode(), stateless=stateless)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                                    lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "the HTTP server did not start"
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.token = token
        self.client = httpx.Client(timeout=30)

    def close(self) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(timeout=30)

    def headers(self, era: str = LEGACY, session: str | None = None, token: str | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                   "Authorization": f"Bearer {token or self.token}"}
        if era == MODERN or session:
            headers["MCP-Protocol-Version"] = era
        if session:
            headers["Mcp-Session-Id"] = session
        return headers

    def post(self, body: str | dict[str, Any] | list[Any], **kw: Any) -> httpx.Response:
        content = body if isinstance(body, str) else json.dumps(body)
        headers = self.headers(**kw)
        if kw.get("era") == MODERN and isinstance(body, dict) and isinstance(body.get("method"), str):
            headers["Mcp-Method"] = body["method"]  # the 2026-07-28 routing headers mirror the body
            name = (body.get("params") or {}).get("name")
            if body["method"] in ("tools/call", "prompts/get") and isinstance(name, str):
                headers["Mcp-Name"] = name
        return self.client.post(f"{self.url}/mcp", content=content, headers=headers)

    def handshake(self) -> str:
        """A 2025-11-25 session: its id."""
        answer = self.post(INITIALIZE)
        assert answer.status_code == 200, answer.text
        session = answer.headers["mcp-session-id"]
        assert messages(answer)[-1]["result"]["protocolVersion"] == LEGACY
        assert self.post(INITIALIZED, session=session).status_code == 202
        return session

    def ask(self, body: str | dict[str, Any] | list[Any], **kw: Any) -> dict[str, Any]:
        """The JSON-RPC response to `body` (from a JSON body or the SSE stream)."""
        return [m for m in messages(self.post(body, **kw)) if "id" in m][-1]


def messages(answer: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an HTTP answer: its JSON body, or each SSE `data:` line."""
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        lines = answer.text.splitlines()
        return [json.loads(line[5:]) for line in lines if line.startswith("data:") and line[5:].strip()]
    return [answer.json()]


@pytest.fixture
def http(tmp_path: Path) -> Iterator[HttpServer]:
    server = HttpServer(tmp_path)
    yield server
    server.close()


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_http_answers_every_protocol_error_as_json_rpc_says(http: HttpServer, era: str,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    session = http.handshake() if era == LEGACY else None
    for case, sent, expected in cases(era):
        answer = http.post(sent, era=era, session=session)
        check(case, [m for m in messages(answer) if "id" in m][-1], expected)
        if expected.get("code") in (-32700, -32600):
            assert answer.status_code == 400, (case, answer.status_code)
    assert "add" in {t["name"] for t in http.ask(request(99, "tools/list", era=era), era=era,
                                                 session=session)["result"]["tools"]}
    assert not [r for r in caplog.records if r.exc_info], "no traceback for a client's mistake"


def test_http_parse_errors_come_before_any_session(http: HttpServer) -> None:
    answer = http.post("{not json")
    assert answer.status_code == 400 and "mcp-session-id" not in answer.headers
    check("not JSON", answer.json(), {"id": None, "code": -32700})
    assert answer.json()["error"]["message"] == "Parse error"


def test_http_errors_of_the_transport_itself_carry_the_data_too(http: HttpServer) -> None:
    """What the SDK's HTTP transport answers before any handler (`mcp_tools.http.jsonrpc.error_data_on`)."""
    listing = request(2, "tools/list")
    no_session = http.post(listing)
    unknown_session = http.post(listing, session="no-such-session")
    headers = {**http.headers(), "Accept": "text/html"}
    unacceptable = http.client.post(f"{http.url}/mcp", content=json.dumps(INITIALIZE), headers=headers)
    modern = http.headers(era=MODERN)
    mismatched = http.client.post(f"{http.url}/mcp", content=json.dumps(request(3, "tools/list", era=MODERN)),
                                  headers={**modern, "Mcp-Method": "tools/call"})
    for case, answer in (("no session", no_session), ("unknown session", unknown_session),
                         ("not acceptable", unacceptable), ("routing header mismatch", mismatched)):
        assert 400 <= answer.status_code < 500, (case, answer.status_code)
        body = answer.json()
        assert int(answer.headers["content-length"]) == len(answer.content), case
        check(case, body, {"id": body.get("id"), "code": body["error"]["code"]})
