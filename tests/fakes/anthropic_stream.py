"""A scripted stand-in of the Anthropic Messages API for clients that stream (Claude Code): the model's turns.

`ScriptedModel` listens on loopback and answers `POST /v1/messages` the way the service does, with
`"stream": true` as server-sent events and without it as one JSON message (Anthropic's API docs, "Streaming
Messages": `message_start` with an empty assistant message, then per content block `content_block_start`,
its deltas — `text_delta`, or `input_json_delta` carrying the tool input as `partial_json` — and
`content_block_stop`, then `message_delta` with the `stop_reason` (`tool_use` or `end_turn`) and the output
usage, then `message_stop`; `ping` events may come anywhere). `POST /v1/messages/count_tokens` answers
`{"input_tokens": N}` (estimated: characters / 4); anything else is logged and answered 404 in the API's error
shape, so a test sees every path a client tried.

The model is a script: a generator that yields `Call`s (an MCP tool by the name its server publishes, e.g.
`spec_mcp.specify`, and its arguments) or a final `Say`, and receives for each call the `ToolResult` the
client sent back (its text, is_error). Only the client's main loop is scripted: a request that offers no MCP tool
(a title or quota request) is answered with a short text. Every request, its
path, headers and body, is kept in `requests`; `results` are the tool results in the order they came.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Generator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

API_KEY = "sk-ant-api03-scripted-stand-in-0000000000000000"


@dataclass(frozen=True)
class Call:
    """The model calls the MCP tool `tool` (its name as the server publishes it) with `arguments`."""
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Say:
    """The model ends its turn with this text."""
    text: str


@dataclass(frozen=True)
class ToolResult:
    """What the client sent back to the model for one call: the tool_result block's text, whole."""
    call: Call
    text: str
    is_error: bool
    block: dict[str, Any]


Script = Generator[Call | Say, ToolResult, None]


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def client_tool_name(server: str, tool: str) -> str:
    """The name Claude Code gives an MCP tool: `mcp__<server>__<tool>`, each character outside
    `[A-Za-z0-9_-]` of the server and tool names replaced by `_`."""
    def norm(name: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]", "_", name)
    return f"mcp__{norm(server)}__{norm(tool)}"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part.get("text", "")) if isinstance(part, dict) and part.get("type") == "text"
                         else json.dumps(part) for part in content)
    return json.dumps(content)


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


@dataclass
class ScriptedModel:
    """The model's API, answering the client's main loop from `script` (None: every request gets a text and
    `end_turn`, e.g. to count requests a server should never make). `server` is the MCP server's name in the
    client's configuration."""
    script: Script | None = None
    server: str = "code3"
    model: str = "claude-sonnet-4-5"
    api_key: str = API_KEY
    requests: list[Request] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    unscripted: list[list[str]] = field(default_factory=list)  # the tools offered in requests answered "OK"
    errors: list[str] = field(default_factory=list)
    finished: bool = False
    _pending: dict[str, Call] = field(default_factory=dict)
    _started: bool = False
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _http: ThreadingHTTPServer | None = None

    # --- the HTTP side -------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._http is not None
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def start(self) -> ScriptedModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, ctype, data = model.handle(self.command, self.path, dict(self.headers.items()), raw)
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_{next(model._ids):024d}")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _serve

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
        if self.script is not None:
            self.script.close()

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @staticmethod
    def _error(status: int, kind: str, message: str) -> tuple[int, str, bytes]:
        return status, "application/json", json.dumps({"type": "error", "error": {"type": kind,
                                                                                 "message": message}}).encode()

    def handle(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> tuple[int, str, bytes]:
        lowered = {k.lower(): v for k, v in headers.items()}
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = urlsplit(target).path.rstrip("/")
        with self._lock:
            self.requests.append(Request(method, target, lowered, body))
            if method != "POST" or path not in ("/v1/messages", "/v1/messages/count_tokens"):
                self.unknown.append(f"{method} {target}")
                return self._error(404, "not_found_error", f"no route {method} {target}")
            bearer = lowered.get("authorization", "")
            key = lowered.get("x-api-key") or (bearer[7:] if bearer.lower().startswith("bearer ") else None)
            if key != self.api_key:
                return self._error(401, "authentication_error", "invalid x-api-key")
            if not isinstance(body, dict) or "messages" not in body:
                return self._error(400, "invalid_request_error", "messages: field required")
            if path.endswith("/count_tokens"):
                return 200, "application/json", json.dumps({"input_tokens": max(1, len(raw) // 4)}).encode()
            try:
                blocks, stop = self._reply(body)
            except Exception as exc:  # a broken script must show in the test, not as a hung client
                self.errors.append(f"{type(exc).__name__}: {exc}")
                return self._error(500, "api_error", f"the scripted model failed: {exc}")
        usage_in = max(1, len(raw) // 4)
        usage_out = max(1, len(json.dumps(blocks)) // 4)
        message = {"id": f"msg_{next(self._ids):024d}", "type": "message", "role": "assistant",
                   "model": body.get("model", self.model), "stop_sequence": None}
        usage = {"input_tokens": usage_in, "output_tokens": usage_out, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if not body.get("stream"):
            answer = {**message, "content": blocks, "stop_reason": stop, "usage": usage}
            return 200, "application/json", json.dumps(answer, ensure_ascii=False).encode()
        events = [sse("message_start", {"type": "message_start", "message": {
            **message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}}),
            sse("ping", {"type": "ping"})]
        for index, block in enumerate(blocks):
            if block["type"] == "tool_use":
                start = {**block, "input": {}}
                arguments = json.dumps(block["input"], ensure_ascii=False)
                half = len(arguments) // 2  # two deltas: the client must join partial_json itself
                deltas = [{"type": "input_json_delta", "partial_json": part}
                          for part in (arguments[:half], arguments[half:]) if part]
            else:
                start = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": block["text"]}]
            events.append(sse("content_block_start", {"type": "content_block_start", "index": index,
                                                      "content_block": start}))
            events += [sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
                       for d in deltas]
            events.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(sse("message_delta", {"type": "message_delta",
                                            "delta": {"stop_reason": stop, "stop_sequence": None},
                                            "usage": {"output_tokens": usage_out}}))
        events.append(sse("message_stop", {"type": "message_stop"}))
        return 200, "text/event-stream", b"".join(events)

    # --- the model side ------------------------------------------------------------------------------------
    def _reply(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        offered = [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]
        if self.script is None or self.finished or not any(n.startswith("mcp__") for n in offered):
            self.unscripted.append(offered)
            return [{"type": "text", "text": "OK"}], "end_turn"
        try:
            if not self._started:
                self._started = True
                step = next(self.script)
            else:
                result = self._last_result(body)
                if result is None:
                    raise AssertionError("the client sent no tool_result for the last call")
                self.results.append(result)
                step = self.script.send(result)
        except StopIteration:
            step = Say("Done.")
        if isinstance(step, Say):
            self.finished = True
            self.script.close()
            return [{"type": "text", "text": step.text}], "end_turn"
        name = self._resolve(step.tool, offered)
        tool_id = f"toolu_{next(self._ids):020d}"
        self._pending = {tool_id: step}
        return [{"type": "tool_use", "id": tool_id, "name": name, "input": step.arguments}], "tool_use"

    def _resolve(self, tool: str, offered: list[str]) -> str:
        """The client's name of `tool`: on `server` when it offers it there, else on the one other MCP server
        that does (a project whose `.mcp.json` has one entry per role)."""
        preferred = client_tool_name(self.server, tool)
        if preferred in offered:
            return preferred
        suffix = client_tool_name("", tool).removeprefix("mcp____")
        found = [n for n in offered if n.startswith("mcp__") and n.split("__", 2)[-1] == suffix]
        if len(found) != 1:
            mcp = sorted(n for n in offered if n.startswith("mcp__"))
            raise AssertionError(f"the client offers {len(found) or 'no'} tool {tool!r} ({found}); its MCP tools: "
                                 f"{mcp}")
        return found[0]

    def _last_result(self, body: dict[str, Any]) -> ToolResult | None:
        messages = body.get("messages") or []
        for message in reversed(messages):
            if message.get("role") != "user" or not isinstance(message.get("content"), list):
                continue
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result" \
                        and block.get("tool_use_id") in self._pending:
                    call = self._pending[block["tool_use_id"]]
                    return ToolResult(call, _text_of(block.get("content", "")), bool(block.get("is_error")), block)
        return None
