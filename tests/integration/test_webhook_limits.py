"""The webhook's parsing limits: the body is capped while it is read (the declared Content-Length first, then
a streaming read that stops at the cap: 413), the signature is checked before anything is parsed, a
signed body nested deeper than MAX_DEPTH or not UTF-8 is a 400 (never a 500).

The size tests count the bytes the app pulls from the ASGI channel (a 200 MB body must not be read
whole), then send 200 MB over a real socket to `code3 serve`'s app and count what the server accepted.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import resource
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_tools.http.app import build_app
from mcp_tools.http.limits import MAX_BODY
from mcp_tools.lifecycle.webhook import MAX_DEPTH, nesting_depth
from tests.e2e.test_protocol_errors import SECRET, TOKEN, HttpServer

MB = 1024 * 1024
HUGE = 200 * MB


def sign(body: bytes) -> str:
    return "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()


def webhook_headers(body: bytes | None, event: str = "ping", signed: bool = True,
                    length: int | None = None) -> list[tuple[bytes, bytes]]:
    headers = [(b"x-github-event", event.encode()), (b"x-github-delivery", b"d-1"),
               (b"content-type", b"application/json")]
    if signed and body is not None:
        headers.append((b"x-hub-signature-256", sign(body).encode()))
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    return headers


class Asgi:
    """Drive the app directly: the body comes in 1 MiB chunks made on demand, and the bytes pulled are counted."""

    def __init__(self) -> None:
        self.app = build_app(lambda: object(), SECRET, token=TOKEN.encode())

    def post(self, headers: list[tuple[bytes, bytes]], body: bytes | None = None,
             total: int = 0) -> tuple[int, dict[str, Any], int]:
        pulled = 0
        chunks = ([body] if body is not None else [b"x" * MB] * (total // MB))
        answer: dict[str, Any] = {"body": b""}

        async def receive() -> dict[str, Any]:
            nonlocal pulled
            if chunks:
                chunk = chunks.pop(0)
                pulled += len(chunk)
                return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
            elif message["type"] == "http.response.body":
                answer["body"] += message.get("body", b"")

        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": "/webhooks/github", "raw_path": b"/webhooks/github", "query_string": b"",
                 "root_path": "", "headers": [(b"host", b"127.0.0.1:1"), *headers],
                 "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 1)}
        anyio.run(self.app, scope, receive, send)
        return answer["status"], json.loads(answer["body"] or b"{}"), pulled


@pytest.fixture(scope="module")
def asgi() -> Asgi:
    return Asgi()


def test_an_announced_oversize_body_is_refused_before_a_byte_is_read(asgi: Asgi) -> None:
    status, body, pulled = asgi.post(webhook_headers(None, length=HUGE), total=HUGE)
    assert status == 413 and "too large" in body["error"]
    assert pulled == 0


def test_an_unannounced_200_mb_body_is_read_only_up_to_the_cap(asgi: Asgi) -> None:
    status, body, pulled = asgi.post(webhook_headers(None), total=HUGE)
    assert status == 413 and "too large" in body["error"]
    assert MAX_BODY < pulled <= MAX_BODY + MB, f"read {pulled} bytes of {HUGE}"


def test_a_body_that_lies_about_its_length_is_still_capped(asgi: Asgi) -> None:
    status, _, pulled = asgi.post(webhook_headers(None, length=10), total=HUGE)
    assert status == 413 and pulled <= MAX_BODY + MB


def test_the_signature_is_checked_before_parsing(asgi: Asgi) -> None:
    for garbage in (b"\xff\xfe not json", b"[" * 100_000, b"{"):
        status, body, _ = asgi.post(webhook_headers(garbage, signed=False), body=garbage)
        assert status == 401 and "X-Hub-Signature-256" in body["error"]


@pytest.mark.parametrize("case, payload", [
    ("nested arrays", b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
    ("nested objects", b'{"a": ' + b'{"b": ' * 5_000 + b"1" + b"}" * 5_000 + b"}"),
    ("just over the bound", b'{"a": ' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}"),
    ("deeper than the parser's recursion", b"[" * 1_000_000),
])
def test_deeply_nested_signed_json_is_a_400_not_a_500(asgi: Asgi, case: str, payload: bytes) -> None:
    status, body, _ = asgi.post(webhook_headers(payload), body=payload)
    assert status == 400, (case, body)
    assert "deeper" in body["error"] or "deep" in body["error"], (case, body)


def test_nesting_up_to_the_bound_passes(asgi: Asgi) -> None:
    depth = MAX_DEPTH - 1  # the object itself is one level
    payload = json.dumps({"zen": "Keep it logically awesome.", "hook": json.loads("[" * depth + "]" * depth)}).encode()
    status, body, _ = asgi.post(webhook_headers(payload), body=payload)
    assert status == 200 and body["zen"] == "Keep it logically awesome."


def test_signed_bodies_that_are_not_utf8_or_not_an_object_are_a_400(asgi: Asgi) -> None:
    for payload, words in ((b'{"zen": "\xff\xfe"}', "UTF-8"), ("\ufeff{}".encode("utf-16"), "UTF-8"),
                           (b"[1, 2]", "object"), (b'{"a": ', "malformed")):
        status, body, _ = asgi.post(webhook_headers(payload), body=payload)
        assert status == 400 and words in body["error"], (payload[:20], body)


def test_nesting_depth_ignores_brackets_inside_strings() -> None:
    assert nesting_depth('{"a": "[[[{{{", "b": "\\"[[", "c": [[1]]}') == 3
    assert nesting_depth('{"k": "\\\\"}') == 1
    assert nesting_depth("1") == 0
    assert nesting_depth("[" * 65 + "]" * 65) == 65


# --- over a real socket -----------------------------------------------------------------------------------------------

@pytest.fixture
def http(tmp_path: Path) -> Iterator[HttpServer]:
    server = HttpServer(tmp_path)
    yield server
    server.close()


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def test_a_200_mb_chunked_upload_is_cut_off_at_the_cap(http: HttpServer) -> None:
    host, port = http.url.removeprefix("http://").split(":")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    sent = 0
    chunk = b"x" * MB
    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"POST /webhooks/github HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
                     b"X-GitHub-Event: ping\r\nX-GitHub-Delivery: d-1\r\nContent-Type: application/json\r\n\r\n")
        sock.settimeout(5)
        deadline = time.monotonic() + 60
        try:
            while sent < HUGE and time.monotonic() < deadline:
                sock.sendall(frame)
                sent += len(chunk)
        except OSError:  # the server answered and closed: it stopped reading
            pass
        sock.settimeout(30)
        answer = b""
        try:
            while b"\r\n\r\n" not in answer:
                data = sock.recv(65536)
                if not data:
                    break
                answer += data
        except OSError:
            pass
    assert answer, "no answer"
    assert _status(answer) == 413, answer[:200]
    print(f"sent {sent // MB} MiB of {HUGE // MB} before the 413")
    assert sent < 2 * MAX_BODY, f"the server accepted {sent} bytes"
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    assert grown < 150 * 1024, f"peak RSS grew by {grown} KiB"


def test_an_announced_200_mb_upload_is_refused_at_once(http: HttpServer) -> None:
    host, port = http.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"POST /webhooks/github HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {HUGE}\r\n"
                     "X-GitHub-Event: ping\r\nX-GitHub-Delivery: d-1\r\n\r\n".encode() + b"x" * MB)
        answer = sock.recv(65536)
    assert _status(answer) == 413
