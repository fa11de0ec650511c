"""The HTTP side of the Aptos fullnode stand-in: replies, dropped connections, the request handler."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

_VM_CODES = {"INVALID_SIGNATURE": 1, "INVALID_AUTH_KEY": 2, "SEQUENCE_NUMBER_TOO_OLD": 3,
             "SEQUENCE_NUMBER_TOO_NEW": 4, "TRANSACTION_EXPIRED": 6, "BAD_CHAIN_ID": 21}


class Reply(Exception):
    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self.status, self.body, self.headers = status, body, headers or {}


class Drop(Exception):
    """Close the connection without an answer (after `hang_s`, so that the client times out first)."""

    def __init__(self, hang_s: float | None) -> None:
        self.hang_s = hang_s


def error(status: int, message: str, error_code: str, vm_error: str | None = None) -> Reply:
    return Reply(status, {"message": message, "error_code": error_code,
                           "vm_error_code": _VM_CODES.get(vm_error or "")})


def vm_rejection(vm_error: str) -> Reply:
    return error(400, f"Invalid transaction: Type: Validation Code: {vm_error}", "vm_error", vm_error)


class Handler(BaseHTTPRequestHandler):
    node: Any  # the AptosNode this handler serves (set on a subclass per node)
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one buffered write per answer: no 40 ms delayed-ACK stalls
    wbufsize = -1

    def log_message(self, format: str, *args: Any) -> None:  # the request log is `node.requests`
        pass

    def _serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            reply = self.node.handle(method, parts.path, query, self.headers, body)
        except Drop as drop:
            if drop.hang_s:
                time.sleep(drop.hang_s)
            self.close_connection = True
            return
        payload = json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")
