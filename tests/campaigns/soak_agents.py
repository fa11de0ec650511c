"""The soak campaign's agents: MCP clients as a real agent runs them, over stdio (`code3 mcp` on the agent's own
machine) or streamable HTTP (the official Python SDK's client against one `code3 serve`), each calling one tool
at a time and retrying what failed for the moment (its connection lost to a kill, the database cut off) with
the same arguments: the lifecycle tools are idempotent on them (publish on the issue hash, accept, submit on
the PR URL, fork and open_pr on the branch).

Each agent owns one asyncio task that holds its client: the SDK's transports live in anyio task groups, which
must be entered and left by the same task, so callers hand their calls to that task through a queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections import Counter, defaultdict
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from tests.campaigns.topology import SERVE_TOKEN, Machine, Topology

RETRIABLE = {"E_INTERNAL", "E_CHAIN_TX_FAILED", "E_GH_RATE_LIMIT"}  # the moment's failure, not the request's
# E_PRECONDITION answers whose hint is "retry the call" (mcp_tools/conflicts.py: a write that lost its races, the
# store's writer busy): an agent that follows the hint retries them
RETRIED_PRECONDITIONS = ("another call changed the same records", "the event store was busy")


def retriable(code: str, message: str) -> bool:
    return code in RETRIABLE or (code == "E_PRECONDITION" and message.startswith(RETRIED_PRECONDITIONS))


class ToolFailed(Exception):
    def __init__(self, tool: str, code: str, message: str) -> None:
        super().__init__(f"{tool}: {code}: {message}")
        self.tool, self.code, self.message = tool, code, message


@dataclass
class Stats:
    """Every attempt an agent made: latencies of the ones answered, failures by code (transport ones too)."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)
    errors_by_tool: Counter[tuple[str, str]] = field(default_factory=Counter)
    calls: int = 0
    retries: int = 0

    def record(self, tool: str, seconds: float, error: str | None) -> None:
        self.calls += 1
        if error is None:
            self.latencies[tool].append(seconds)
        else:
            self.errors[error] += 1
            self.errors_by_tool[(tool, error)] += 1

    def percentiles(self) -> dict[str, dict[str, float]]:
        found = {}
        for tool, values in sorted(self.latencies.items()):
            ordered = sorted(values)
            found[tool] = {"n": len(ordered), "p50_ms": 1000 * ordered[len(ordered) // 2],
                           "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]}
        return found


class Agent:
    def __init__(self, name: str, identity: str, transport: str, topo: Topology, stats: Stats,
                 serve: Machine | None = None, budget: float = 240.0, call_timeout: float = 90.0) -> None:
        self.name, self.identity, self.transport, self.topo, self.stats = name, identity, transport, topo, stats
        self.serve = serve
        self.machine = topo.agent_machine(identity) if transport == "stdio" else serve
        self.budget, self.call_timeout = budget, call_timeout
        self.lock = asyncio.Lock()  # a lifecycle's sequence of calls on this agent (fork, write, open_pr) holds it
        self._queue: asyncio.Queue[tuple[str, dict[str, Any], asyncio.Future[dict[str, Any]]] | None] = \
            asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.reconnects = 0
        self._stopping = False

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"agent-{self.name}")

    async def stop(self) -> None:
        """Ends the agent's task after the calls queued before (at most 60 s); how it ended is not the caller's."""
        await self._queue.put(None)
        if self._task is not None:
            done, _ = await asyncio.wait({self._task}, timeout=60)
            if not done:
                self._stopping = True  # this cancellation is ours: `_run` lets it end the task
                self._task.cancel()
            elif not self._task.cancelled():
                self._task.exception()  # retrieved: a task that failed has already failed its calls (`_run`)

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        await self._queue.put((tool, args, future))
        return await future

    # --- the agent's own task ---------------------------------------------------------------------

    async def _run(self) -> None:
        stack: AsyncExitStack | None = None
        client: Any = None
        future: asyncio.Future[dict[str, Any]] | None = None
        try:
            while (item := await self._queue.get()) is not None:
                tool, args, future = item
                deadline = time.monotonic() + self.budget
                backoff = 0.5
                while True:
                    began = time.monotonic()
                    try:
                        if client is None:
                            stack, client = await self._connect()
                        result = await asyncio.wait_for(client.call_tool(tool, args), self.call_timeout)
                    except (Exception, asyncio.CancelledError) as exc:  # the connection is gone (a kill, a cut):
                        # reconnect and retry. A transport whose own task failed cancels this task through the
                        # client's task group (CancelledError here); closing the client below ends that scope.
                        if isinstance(exc, asyncio.CancelledError) and self._stopping:
                            raise
                        self.stats.record(tool, time.monotonic() - began, f"transport:{type(exc).__name__}")
                        stack, client = await self._close(stack), None
                        if time.monotonic() > deadline:
                            future.set_exception(ToolFailed(tool, "transport", repr(exc)))
                            break
                        self.stats.retries += 1
                        await asyncio.sleep(backoff)
                        backoff = min(backoff * 2, 5.0)
                        continue
                    seconds = time.monotonic() - began
                    if result.is_error:
                        code, message = _error(result)
                        self.stats.record(tool, seconds, code)
                        if retriable(code, message) and time.monotonic() < deadline:
                            self.stats.retries += 1
                            await asyncio.sleep(backoff)
                            backoff = min(backoff * 2, 5.0)
                            continue
                        future.set_exception(ToolFailed(tool, code, message))
                        break
                    self.stats.record(tool, seconds, None)
                    future.set_result(dict(result.structured_content or {}))
                    break
        finally:
            await self._close(stack)
            # whatever ended this task, no lifecycle waits for ever on a call it will not make
            pending = [future] if future is not None else []
            while not self._queue.empty():
                if (item := self._queue.get_nowait()) is not None:
                    pending.append(item[2])
            for waiting in pending:
                if not waiting.done():
                    waiting.set_exception(ToolFailed("agent", "stopped", f"agent {self.name} ended"))

    async def _connect(self) -> tuple[AsyncExitStack, Any]:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        self.reconnects += 1
        stack = AsyncExitStack()
        try:
            assert self.machine is not None
            if self.transport == "stdio":
                params = StdioServerParameters(command=sys.executable, args=["-m", "code3", "mcp", "--profile", "all"],
                                               env=self.topo.env(self.machine, self.identity),
                                               cwd=str(self.machine.project))
                errlog = stack.enter_context((self.machine.root / "mcp.log").open("a"))
                client = await stack.enter_async_context(Client(stdio_client(params, errlog=errlog), mode="legacy",
                                                                read_timeout_seconds=self.call_timeout))
            else:
                import httpx2
                from mcp.client.streamable_http import streamable_http_client

                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers={"Authorization": f"Bearer {SERVE_TOKEN}"}, timeout=self.call_timeout))
                # every request bounded, initialize too: a serve killed mid-handshake never answers it
                client = await stack.enter_async_context(
                    Client(streamable_http_client(f"{self.machine.url}/mcp", http_client=http), mode="legacy",
                           read_timeout_seconds=self.call_timeout))
        except BaseException:
            await self._close(stack)
            raise
        return stack, client

    @staticmethod
    async def _close(stack: AsyncExitStack | None) -> None:
        """Close a client in this task (anyio's scopes are left where they were entered); its failure, even a
        cancellation its own task group raised, is the lost connection already being handled."""
        if stack is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await stack.aclose()
        return None


def _error(result: Any) -> tuple[str, str]:
    text = next((getattr(c, "text", "") for c in result.content or []), "") or ""
    try:
        data = json.loads(text)
        return str(data.get("code", "E_?")), str(data.get("message", ""))[:300]
    except (ValueError, AttributeError):
        return "E_TEXT", text[:300]
