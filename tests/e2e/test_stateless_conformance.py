"""`code3 serve --stateless` at the 2026-07-28 wire, on the three behaviours the MCP conformance suite's
`server-stateless` scenario checks that a bare SDK server already had (scripts/conformance.sh runs the suite):

- sep-2575-server-unsupported-version-error: an unknown protocol version is refused with 400 and an
  UnsupportedProtocolVersionError whose `data` keeps `supported` (the versions server/discover lists) and
  `requested` beside seed 002's `{type, details, timestamp}`;
- sep-2575-server-no-log-without-loglevel: a request that did not set `_meta` `io.modelcontextprotocol/logLevel`
  gets no `notifications/message`, one that did gets the records at that level and above;
- sep-2575-http-server-no-independent-requests-on-stream: a request's response stream carries notifications and
  its response, never a request of the server's own.

Raw HTTP (httpx), no npm needed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_protocol_errors import MODERN, TOKEN, HttpServer, envelope, messages

pytestmark = pytest.mark.e2e

UNKNOWN = "v999.0.0"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"


class StatelessServe(HttpServer):
    """`code3 serve --stateless`'s app under uvicorn in a thread of this process."""

    def __init__(self, project: Path) -> None:
        super().__init__(project, stateless=True)
        self.url += "/mcp"

    def call(self, request_id: int, method: str, params: dict[str, Any], version: str = MODERN,
             **meta: Any) -> tuple[int, list[dict[str, Any]]]:
        """(HTTP status, the JSON-RPC messages answered) for one request at the 2026-07-28 wire."""
        body = {"jsonrpc": "2.0", "id": request_id, "method": method,
                "params": {**params, "_meta": envelope(**{"io.modelcontextprotocol/protocolVersion": version,
                                                          **meta})}}
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                   "Authorization": f"Bearer {TOKEN}", "MCP-Protocol-Version": version, "Mcp-Method": method}
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
        answer = self.client.post(self.url, content=json.dumps(body), headers=headers)
        return answer.status_code, messages(answer)



@pytest.fixture
def serve(tmp_path: Path) -> Iterator[StatelessServe]:
    server = StatelessServe(tmp_path)
    yield server
    server.close()


def test_an_unknown_protocol_version_is_refused_with_the_versions_the_server_supports(serve: StatelessServe) -> None:
    status, [discovered] = serve.call(1, "server/discover", {})
    assert status == 200
    supported = discovered["result"]["supportedVersions"]
    status, [refused] = serve.call(2, "server/discover", {}, version=UNKNOWN)
    assert status == 400 and refused["id"] == 2
    error = refused["error"]
    assert error["data"]["requested"] == UNKNOWN
    assert error["data"]["supported"] and set(error["data"]["supported"]) <= set(supported)
    assert {"type", "details", "timestamp"} <= set(error["data"])  # seed 002's keys, kept beside the protocol's
    assert UNKNOWN in error["message"]  # the gist, for a client that shows only the message


def _failing_call(serve: StatelessServe, request_id: int, **meta: Any) -> list[dict[str, Any]]:
    """A call whose handler logs (a refused task id: `tool … failed` at info), its messages."""
    status, answered = serve.call(request_id, "tools/call", {"name": "server_mcp.accept_task",
                                                             "arguments": {"task_id": "no/such-repo#9"}}, **meta)
    assert status == 200 and answered[-1]["id"] == request_id and answered[-1]["result"]["isError"] is True
    return answered


def test_no_log_message_reaches_a_request_that_did_not_ask_for_one(serve: StatelessServe) -> None:
    quiet = _failing_call(serve, 3)
    assert not [m for m in quiet if m.get("method") == "notifications/message"], quiet
    asked = _failing_call(serve, 4, **{LOG_LEVEL: "info"})
    logged = [m for m in asked if m.get("method") == "notifications/message"]
    assert logged and all(m["params"]["level"] in ("info", "notice", "warning", "error") for m in logged)
    above = _failing_call(serve, 5, **{LOG_LEVEL: "error"})  # the refusal is logged at info: below error
    assert not [m for m in above if m.get("method") == "notifications/message"]


def test_a_response_stream_carries_no_request_of_the_servers_own(serve: StatelessServe) -> None:
    for request_id, meta in ((6, {}), (7, {LOG_LEVEL: "debug"})):
        answered = _failing_call(serve, request_id, **meta)
        for message in answered:
            method = message.get("method")
            assert method is None or method.startswith("notifications/"), message
            assert "id" not in message or message["id"] == request_id, message
