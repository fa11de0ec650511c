"""Measure MCP servers over real stdio subprocesses with a tiny hand-written JSON-RPC client.

The SDK client is deliberately not used: its own import time and per-call overhead would be counted
against the server under test. Messages are newline-delimited JSON, as the stdio transport defines.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = "2025-11-25"
ADD_ARGS = {"a": 5, "b": 3}
ADD_EXPECTED = "= 8"


class McpBenchError(RuntimeError):
    """The server under test failed to start, answered with an error, or answered wrongly."""


class StdioPeer:
    """One server subprocess plus a minimal blocking JSON-RPC client bound to its stdin/stdout.

    stdout is read with os.read and a selector so every wait has a deadline (a hung server must fail
    the benchmark, not hang it); stderr goes to a temporary file so a chatty server can never block
    on a full pipe, and so its tail can be shown when something goes wrong.
    """

    def __init__(
        self,
        cmd: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        self.cmd = list(cmd)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            self.cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=None if env is None else dict(env),
            cwd=cwd,
            bufsize=0,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._out_fd = self.proc.stdout.fileno()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._out_fd, selectors.EVENT_READ)
        self._buf = b""
        self._next_id = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def __enter__(self) -> StdioPeer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stderr_tail(self, limit: int = 4000) -> str:
        """The last `limit` characters the server wrote to stderr (for error messages)."""
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")[-limit:]

    def error(self, message: str) -> McpBenchError:
        """An exception carrying the command, its exit state and its stderr tail."""
        code = self.proc.poll()
        state = "still running" if code is None else f"exit code {code}"
        tail = self.stderr_tail().strip() or "(empty)"
        return McpBenchError(f"{message} [{' '.join(self.cmd)}; {state}]\n--- server stderr ---\n{tail}")

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            view = memoryview(data)
            while view:  # an unbuffered pipe write may be partial
                view = view[stdin.write(view) :]
        except (BrokenPipeError, OSError) as exc:
            raise self.error(f"cannot write to server: {exc}") from exc

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def _read_line(self, deadline: float) -> bytes:
        while True:
            while b"\n" not in self._buf:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._selector.select(remaining):
                    raise self.error("timed out waiting for the server")
                chunk = os.read(self._out_fd, 65536)
                if not chunk:
                    raise self.error("server closed stdout")
                self._buf += chunk
            line, self._buf = self._buf.split(b"\n", 1)
            if line.strip():
                return line

    def _read_message(self, deadline: float) -> dict[str, Any]:
        line = self._read_line(deadline)
        try:
            message = json.loads(line)
        except json.JSONDecodeError as exc:
            raise self.error(f"server wrote a non-JSON line to stdout: {line[:200]!r}") from exc
        if not isinstance(message, dict):
            raise self.error(f"server wrote a non-object message: {line[:200]!r}")
        return message

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60.0) -> Any:
        """Send one request and return its `result`; notifications met on the way are dropped."""
        self._next_id += 1
        request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if "method" in reply:
                if "id" in reply:  # a server-to-client request: we support none of them
                    self.send(
                        {
                            "jsonrpc": "2.0",
                            "id": reply["id"],
                            "error": {"code": -32601, "message": "not supported by the benchmark client"},
                        }
                    )
                continue
            if reply.get("id") != request_id:
                continue
            if "error" in reply:
                raise self.error(f"{method} answered with an error: {reply['error']}")
            if "result" not in reply:
                raise self.error(f"{method} answered without a result: {reply}")
            return reply["result"]

    def initialize(self, timeout: float = 60.0) -> dict[str, Any]:
        """The 2025-11-25 handshake: `initialize`, then `notifications/initialized`."""
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "code3-bench", "version": "1"},
            },
            timeout=timeout,
        )
        self.notify("notifications/initialized")
        return result

    def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 60.0) -> str:
        """Call a tool and return its text content; a result flagged isError is a benchmark failure."""
        result = self.request("tools/call", {"name": name, "arguments": arguments}, timeout=timeout)
        text = "".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
        if result.get("isError"):
            raise self.error(f"tool {name!r} returned isError: {text}")
        return text

    def close(self, grace: float = 5.0) -> None:
        """EOF on stdin first (a clean MCP shutdown), then SIGTERM, then SIGKILL; always reaps."""
        try:
            if self.proc.stdin and not self.proc.stdin.closed:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
            for stop in (None, self.proc.terminate, self.proc.kill):
                if stop is not None:
                    stop()
                try:
                    self.proc.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
        finally:
            self._selector.close()
            if self.proc.stdout:
                self.proc.stdout.close()
            self._stderr.close()


def peak_rss_mb(pid: int) -> float | None:
    """Peak resident set size (VmHWM) of a live process in MiB; None where /proc is unavailable."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024  # reported in kB
    return None


def cold_start(
    cmd: Sequence[str],
    env: Mapping[str, str] | None,
    runs: int,
    *,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 120.0,
) -> list[float]:
    """Seconds from spawning a fresh server to receiving its `tools/list` answer, once per run.

    This is what a user waits for when an MCP host launches the server; process teardown is excluded.
    """
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        with StdioPeer(cmd, env, cwd) as peer:
            peer.initialize(timeout=timeout)
            result = peer.request("tools/list", timeout=timeout)
            samples.append(time.perf_counter() - start)
            if not isinstance(result.get("tools"), list):
                raise peer.error(f"tools/list returned no tool list: {result}")
    return samples


def add_latency_interleaved(
    servers: Sequence[tuple[Sequence[str], Mapping[str, str] | None]],
    calls: int,
    *,
    warmup: int = 20,
    tool: str = "add",
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 120.0,
) -> list[tuple[list[float], float | None]]:
    """`add` round trips on several (cmd, env) servers at once, taking turns call by call.

    Taking turns spreads machine drift (CPU frequency, noisy neighbours) evenly over the servers
    being compared; only one server is busy at any moment. Returns, per server in order, the
    latencies in seconds and the peak RSS in MiB read before shutdown (None without /proc).
    """
    with contextlib.ExitStack() as stack:
        peers = [stack.enter_context(StdioPeer(cmd, env, cwd)) for cmd, env in servers]
        for peer in peers:
            peer.initialize(timeout=timeout)
        samples: list[list[float]] = [[] for _ in peers]
        for i in range(warmup + calls):
            for peer, out in zip(peers, samples, strict=True):
                start = time.perf_counter()
                text = peer.call_tool(tool, ADD_ARGS, timeout=timeout)
                elapsed = time.perf_counter() - start
                if ADD_EXPECTED not in text:
                    raise peer.error(
                        f"tool {tool!r} answered {text!r}, expected it to contain {ADD_EXPECTED!r}"
                    )
                if i >= warmup:
                    out.append(elapsed)
        return [(out, peak_rss_mb(peer.pid)) for peer, out in zip(peers, samples, strict=True)]
