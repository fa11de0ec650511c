"""A loopback Anthropic Messages API: `POST /v1/messages` as the real service answers it.

The `anthropic` client is pointed at it by `base_url`. It checks the key (`x-api-key`, or the bearer
token anthropic 2.x sends), the `anthropic-version` header and the request body's required fields,
answers a message whose text comes from a `responder(request_json) -> str` (by default: the nine
section headings the reverse-spec prompt asks for, with the target's name; for a spec-kit prompt, the
template it carries with each title marked "(written by the model)"), reports usage from the
request and answer sizes, and can be told to fail the next requests as the service does: 429
`rate_limit_error` with `retry-after`, 500 `api_error`, 529 `overloaded_error`. Every request is logged.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
               429: "rate_limit_error", 500: "api_error", 503: "api_error", 529: "overloaded_error"}
SECTION_TITLES = ("Intent", "Interface", "Business logic", "Data structures", "Constraints", "Edge cases",
                  "Technical debt", "Test coverage", "Dependencies")


SPEC_KIT_TEMPLATE = re.compile(r"(?:Fill this spec template \(keep its headings\):|filling these templates:|"
                               r"Follow this template:)\n\n(.*)\Z", re.DOTALL)


def spec_kit_answer(template: str) -> str:
    """What a model told to fill spec-kit templates answers: each file's template, its title marked as the
    model's (a plan's files each after their `=== FILE:` line, as asked)."""
    return re.sub(r"^(# .*)$", r"\1 (written by the model)", template, flags=re.MULTILINE)


def default_responder(request: dict[str, Any]) -> str:
    prompt = request["messages"][-1]["content"]
    prompt = prompt if isinstance(prompt, str) else json.dumps(prompt)
    target = re.search(r"Target: `([^`]*)`", prompt)
    name = target.group(1) if target else "the code"
    spec_kit = SPEC_KIT_TEMPLATE.search(prompt)
    if spec_kit:  # spec_mcp's spec, plan (several files) or tasks: the template filled, its headings kept
        return spec_kit_answer(spec_kit.group(1))
    return "\n\n".join(f"## {i}. {title}\n\nModel-written {title.lower()} of `{name}`."
                       for i, title in enumerate(SECTION_TITLES, 1))


@dataclass
class Failure:
    status: int
    retry_after: float | None = None


@dataclass
class FakeAnthropic:
    api_key: str = "sk-ant-test-0000000000000000000000"
    responder: Callable[[dict[str, Any]], str] = default_responder
    failures: list[Failure] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    def fail_next(self, status: int, times: int = 1, retry_after: float | None = 0.0) -> None:
        with self._lock:
            self.failures.extend(Failure(status, retry_after) for _ in range(times))

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def calls(self) -> int:
        return len(self.requests)

    def start(self) -> FakeAnthropic:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                status, headers, body = fake.handle(self.path, dict(self.headers.items()), raw)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_{next(fake._ids):06d}")
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None
               ) -> tuple[int, dict[str, str], Any]:
        self.statuses.append(status)
        return status, headers or {}, {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"),
                                                                   "message": message}}

    def handle(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], Any]:
        lowered = {k.lower(): v for k, v in headers.items()}
        if path.rstrip("/") != "/v1/messages":
            return self._error(404, f"no route {path}")
        bearer = lowered.get("authorization", "")
        key = lowered.get("x-api-key") or (bearer[7:] if bearer.lower().startswith("bearer ") else None)
        if key != self.api_key:  # the SDK sends the key as x-api-key or (2.x) as a bearer token
            return self._error(401, "invalid x-api-key")
        if not lowered.get("anthropic-version"):
            return self._error(400, "anthropic-version header is required")
        try:
            request = json.loads(raw)
        except ValueError:
            return self._error(400, "body is not JSON")
        missing = [k for k in ("model", "max_tokens", "messages") if k not in request]
        if missing:
            return self._error(400, f"missing {', '.join(missing)}")
        with self._lock:
            self.requests.append(request)
            failure = self.failures.pop(0) if self.failures else None
        if failure is not None:
            extra = {"retry-after": str(failure.retry_after)} if failure.retry_after is not None else {}
            return self._error(failure.status, "injected failure", extra)
        text = self.responder(request)
        prompt_chars = len(json.dumps(request.get("messages"))) + len(str(request.get("system", "")))
        self.statuses.append(200)
        return 200, {}, {
            "id": f"msg_{next(self._ids):024d}", "type": "message", "role": "assistant", "model": request["model"],
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": max(1, prompt_chars // 4), "output_tokens": max(1, len(text) // 4)},
        }
