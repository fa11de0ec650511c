"""The web page's door (issue 21): a one-time login URL from `code3 serve --print-url` buys a session cookie
named for the serve's port; everything else is refused in HTML — no session (401, saying how to get in),
another Host or Origin (403), any write method (405) — and `--rotate-token` ends every session at once."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from code3.settings import Settings
from code3.wiring import build_services
from mcp_tools.http.app import build_app
from mcp_tools.http.tokens import rotate_token, serve_token
from mcp_tools.web import auth

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"


@pytest.fixture
def project(tmp_path: Path) -> Settings:
    return Settings(project=tmp_path)


def client_for(settings: Settings, token_file: bool = True, hours: float = 12.0) -> TestClient:
    token, path = serve_token(settings.secrets_dir)
    app = build_app(lambda: build_services(settings), b"webhook-secret", token=token,
                    token_file=path if token_file else None, session_hours=hours)
    return TestClient(app, base_url=BASE)


@pytest.fixture
def client(project: Settings) -> Iterator[TestClient]:
    with client_for(project) as c:
        yield c


def code3(settings: Settings, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`code3 serve ...` as its own command line runs it (in this process: it only reads and writes the token file,
    as a separate `code3` process would); (status, stdout, stderr)."""
    from code3.cli import main

    capsys.readouterr()
    status = main(["serve", *argv, "--project", str(settings.project)])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_a_url_printed_by_the_command_logs_in_once_with_a_strict_cookie_and_a_clean_redirect(
        project: Settings, client: TestClient, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    status, out, _ = code3(project, capsys, "--print-url", "--port", str(PORT))
    assert status == 0
    url = out.strip()
    assert url.startswith(f"{BASE}/login?code=") and "\n" not in url
    token, _ = serve_token(project.secrets_dir)
    assert token.decode() not in url, "the URL carries a code, never the token"

    answer = client.get(url.removeprefix(BASE), follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"code3_session_{PORT}=")
    attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "path", "max-age", "samesite"} <= attributes
    assert "SameSite=Strict" in cookie and "Path=/" in cookie and "Max-Age=43200" in cookie
    assert client.get("/").status_code == 200, "the cookie opens the board"

    fresh = TestClient(client.app, base_url=BASE)
    again = fresh.get(url.removeprefix(BASE), follow_redirects=False)
    assert again.status_code == 401 and "used already" in again.text
    assert fresh.get("/").status_code == 401
    code, session = url.rsplit("=", 1)[1], cookie.split(";")[0].split("=", 1)[1]
    logged = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("httpx"))  # not the client's
    logged += capsys.readouterr().err
    assert code not in logged and session not in logged and token.decode() not in logged, "nothing secret is logged"


def test_a_used_code_stays_used_after_a_restart_and_an_expired_or_foreign_code_is_refused(project: Settings) -> None:
    token, _ = serve_token(project.secrets_dir)
    code = auth.mint_code(token, PORT)
    with client_for(project) as first:
        assert first.get(f"/login?code={code}", follow_redirects=False).status_code == 303
    with client_for(project) as restarted:
        assert restarted.get(f"/login?code={code}", follow_redirects=False).status_code == 401
        expired = auth.mint_code(token, PORT, now=time.time() - auth.CODE_TTL_S - 1)
        answer = restarted.get(f"/login?code={expired}", follow_redirects=False)
        assert answer.status_code == 401 and "expired" in answer.text
        other_port = auth.mint_code(token, PORT + 1)
        assert restarted.get(f"/login?code={other_port}", follow_redirects=False).status_code == 401
        tampered = code[:-2] + ("AA" if not code.endswith("AA") else "BB")
        assert restarted.get(f"/login?code={tampered}", follow_redirects=False).status_code == 401
        assert restarted.get("/login", follow_redirects=False).status_code == 401


def test_an_expired_session_is_refused_by_the_server_whatever_the_browser_keeps(project: Settings) -> None:
    token, _ = serve_token(project.secrets_dir)
    with client_for(project) as c:
        old, _ = auth.new_session(token, PORT, hours=1, now=time.time() - 7200)
        c.cookies.set(auth.cookie_name(PORT), old)
        answer = c.get("/")
        assert answer.status_code == 401
        good, _ = auth.new_session(token, PORT, hours=1)
        c.cookies.set(auth.cookie_name(PORT), good)
        assert c.get("/").status_code == 200
        c.cookies.set(auth.cookie_name(PORT), good[:-3] + "xyz")
        assert c.get("/").status_code == 401


def test_another_ports_cookie_opens_nothing(project: Settings, client: TestClient) -> None:
    token, _ = serve_token(project.secrets_dir)
    value, _ = auth.new_session(token, PORT + 1, hours=1)
    client.cookies.set(auth.cookie_name(PORT + 1), value)
    assert client.get("/").status_code == 401
    client.cookies.set(auth.cookie_name(PORT), value)  # the other serve's value under this serve's name
    assert client.get("/").status_code == 401


def test_rotate_token_ends_every_session_and_the_old_bearer_token_at_once(
        project: Settings, client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    old_token, path = serve_token(project.secrets_dir)
    assert client.get(f"/login?code={auth.mint_code(old_token, PORT)}").status_code == 200
    assert client.get("/").status_code == 200
    assert client.get("/", headers={"Authorization": f"Bearer {old_token.decode()}"}).status_code == 200

    status, out, _ = code3(project, capsys, "--rotate-token")
    assert status == 0
    new_token, _ = serve_token(project.secrets_dir)
    assert new_token != old_token and old_token.decode() not in out and new_token.decode() not in out
    assert path is not None and (path.stat().st_mode & 0o777) == 0o600

    assert client.get("/").status_code == 401, "the session of the old token is over"
    assert client.get("/", headers={"Authorization": f"Bearer {old_token.decode()}"}).status_code == 401
    assert client.get("/api/annotations", headers={"Authorization": f"Bearer {old_token.decode()}"}
                      ).status_code == 401, "the old token opens no route"
    assert client.get("/", headers={"Authorization": f"Bearer {new_token.decode()}"}).status_code == 200
    assert client.get(f"/login?code={auth.mint_code(new_token, PORT)}").status_code == 200


def test_rotate_token_is_refused_when_the_token_comes_from_the_environment(
        project: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="CODE3_SERVE_TOKEN"):
        rotate_token(project.secrets_dir, configured="x" * 32)
    monkeypatch.setenv("CODE3_SERVE_TOKEN", "y" * 32)
    status, _, err = code3(project, capsys, "--rotate-token")
    assert status != 0 and "CODE3_SERVE_TOKEN" in err
    assert not (project.secrets_dir / "serve_token").exists(), "nothing was written"


def test_print_url_needs_the_port_of_the_serve(project: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = code3(project, capsys, "--print-url", "--port", "0")
    assert status != 0 and out == "" and "--port" in err


def test_without_a_session_the_page_says_how_to_get_the_url(client: TestClient) -> None:
    for path in ("/", "/bounties/1", "/live"):
        answer = client.get(path)
        assert answer.status_code == 401, path
        assert answer.headers["content-type"].startswith("text/html")
        assert "code3 serve --print-url" in answer.text
    wrong = client.get("/", headers={"Authorization": "Bearer not-the-token-at-all-0000"})
    assert wrong.status_code == 401


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_the_page_is_read_only_every_write_method_is_refused(project: Settings, client: TestClient,
                                                             method: str) -> None:
    token, _ = serve_token(project.secrets_dir)
    for path in ("/", "/login", "/bounties/1"):
        answer = client.request(method, path, headers={"Authorization": f"Bearer {token.decode()}"})
        assert answer.status_code == 405, (method, path)
        assert "read-only" in answer.text and "CSRF" in answer.text


def test_another_origin_or_host_is_refused_before_anything_else(project: Settings, client: TestClient) -> None:
    token, _ = serve_token(project.secrets_dir)
    auth_header = {"Authorization": f"Bearer {token.decode()}"}
    cross_site_post = client.post("/", headers={**auth_header, "Origin": "http://evil.example"},
                                  data={"state": "open"})
    assert cross_site_post.status_code == 403
    assert client.get("/", headers={**auth_header, "Origin": "http://evil.example"}).status_code == 403
    assert client.get("/", headers={**auth_header, "Host": "evil.example"}).status_code == 403
    assert client.get("/login?code=x", headers={"Host": "evil.example:8765"}).status_code == 403
    assert client.get("/", headers={**auth_header, "Origin": BASE}).status_code == 200


def test_pages_carry_headers_that_keep_the_code_and_the_page_to_themselves(project: Settings,
                                                                           client: TestClient) -> None:
    token, _ = serve_token(project.secrets_dir)
    answer = client.get("/", headers={"Authorization": f"Bearer {token.decode()}"})
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    assert answer.headers["cache-control"] == "no-store"
    assert client.get("/static/style.css").status_code == 200, "the stylesheet is the package's, open"
    for sneaky in ("/static/../auth.py", "/static/%2e%2e/auth.py", "/static/..%2fauth.py"):
        answer = client.get(sneaky)
        assert answer.status_code in (401, 404) and "import" not in answer.text, sneaky
