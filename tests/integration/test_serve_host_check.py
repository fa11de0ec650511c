"""`code3 serve` checks the Host and Origin headers on every route as the MCP SDK does on /mcp (issue 18,
class 7): a page that rebinds its name to 127.0.0.1 reaches neither /mcp nor the ai-loom REST twins under
/api, and the refusal comes before the token check (nothing is built, nothing read). The GitHub webhook,
which arrives through a tunnel under the tunnel's name, keeps its HMAC as its only check."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from mcp_tools.http.app import build_app

TOKEN = "a-serve-token-for-the-tests-0123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MCP_HEADERS = {**AUTH, "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


@pytest.fixture
def client() -> Iterator[tuple[TestClient, list[object]]]:
    built: list[object] = []

    def factory() -> object:  # no tool runs in these tests: what matters is whether services were built
        built.append(object())
        return built[-1]

    with TestClient(build_app(factory, b"webhook-secret", token=TOKEN.encode()),
                    base_url="http://127.0.0.1:8765") as c:
        yield c, built


@pytest.mark.parametrize(("method", "path"), [("GET", "/api/annotations"), ("GET", "/api/openapi.json"),
                                              ("POST", "/api/stitch"), ("POST", "/mcp"), ("GET", "/healthz")])
@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example:8765", ""])
def test_a_foreign_host_is_refused_on_every_route_before_the_token(client: tuple[TestClient, list[object]],
                                                                   method: str, path: str, host: str) -> None:
    c, built = client
    body = INIT if path == "/mcp" else ({} if method == "POST" else None)
    answer = c.request(method, path, json=body, headers={**MCP_HEADERS, "Host": host})
    assert answer.status_code == 421, answer.text
    assert answer.json()["error"] == "misdirected" and "Host" in answer.json()["message"]
    assert not built


@pytest.mark.parametrize("path", ["/api/annotations", "/mcp"])
def test_a_foreign_origin_is_refused(client: tuple[TestClient, list[object]], path: str) -> None:
    c, built = client
    answer = c.post(path, json=INIT if path == "/mcp" else {"filePath": "x", "startLine": 1, "endLine": 1,
                                                             "comment": "c"},
                    headers={**MCP_HEADERS, "Origin": "http://evil.example"})
    assert answer.status_code == 403 and answer.json()["error"] == "misdirected"
    assert not built


def test_loopback_hosts_pass_the_check_and_the_webhook_is_not_checked(client: tuple[TestClient, list[object]]
                                                                      ) -> None:
    c, _ = client
    for host in ("127.0.0.1:8765", "localhost:1234", "[::1]:80"):
        assert c.get("/healthz", headers={"Host": host}).status_code == 200, host
        assert c.get("/api/annotations", headers={"Host": host}).status_code == 401, "then the token is checked"
    hook = c.post("/webhooks/github", content=b"{}", headers={"Host": "abc.tunnel.example",
                                                              "X-Hub-Signature-256": "sha256=00"})
    assert hook.status_code == 401, "the webhook's check is its HMAC signature"
