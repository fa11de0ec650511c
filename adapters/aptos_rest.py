"""aptos-sdk's async RestClient behind a synchronous call, and the node's failures sorted for retrying.

The command handlers are synchronous and run on several threads; the RestClient is async and its
connection pool belongs to one event loop. So each adapter owns a private loop on a daemon thread and
runs coroutines there (started on first use, never at import). Failures are sorted where they arise:
`NodeUnavailable` (5xx, 429, timeouts, dropped connections: worth retrying, with the wait the node
asked for) and `NodeRejected` (any other 4xx: final).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


class NodeUnavailable(Exception):
    """The node did not answer usefully (5xx, 429, timeout, connection lost). `wait`: what it asked for."""

    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.wait = wait


class NodeRejected(Exception):
    """A 4xx answer: the request itself is refused, retrying it unchanged cannot help."""

    def __init__(self, status: int, message: str, vm_error: str | None = None) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.vm_error = vm_error


_VM_ERRORS = ("SEQUENCE_NUMBER_TOO_OLD", "SEQUENCE_NUMBER_TOO_NEW", "TRANSACTION_EXPIRED", "INVALID_SIGNATURE",
              "INVALID_AUTH_KEY", "BAD_CHAIN_ID")


def rejection(status: int, text: str) -> NodeRejected:
    """The node's error body (`{"message", "error_code", "vm_error_code"}`) as a NodeRejected."""
    try:
        body = json.loads(text)
        message = str(body.get("message", text))
    except (ValueError, AttributeError):
        message = text
    vm_error = next((name for name in _VM_ERRORS if name in message), None)
    return NodeRejected(status, message[:500], vm_error)


def _retry_after(value: str | None) -> float | None:
    try:
        return max(float(value), 0.0) if value else None
    except ValueError:
        return None


class FullnodeClient:
    """One RestClient on one private event loop; `run` executes a coroutine using it and sorts failures."""

    def __init__(self, base_url: str, timeout_s: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._rest: Any = None

    def run(self, work: Callable[[Any], Awaitable[T]]) -> T:
        loop = self._start()
        return asyncio.run_coroutine_threadsafe(self._guarded(work), loop).result()

    async def _guarded(self, work: Callable[[Any], Awaitable[T]]) -> T:
        import httpx
        from aptos_sdk.async_client import ApiError

        try:
            return await work(self._client())
        except ApiError as exc:
            raise rejection(exc.status_code, str(exc)) from None
        except httpx.TimeoutException as exc:
            raise NodeUnavailable(f"timed out after {self.timeout_s} s ({type(exc).__name__})") from None
        except httpx.TransportError as exc:
            raise NodeUnavailable(f"connection failed ({type(exc).__name__}: {exc})") from None

    def _client(self) -> Any:
        """Created inside the loop so that its connection pool belongs to it."""
        if self._rest is None:
            import httpx
            from aptos_sdk.async_client import ClientConfig, RestClient

            rest = RestClient(self.base_url, ClientConfig(http2=False))
            rest.client.timeout = httpx.Timeout(self.timeout_s, pool=None)
            rest.client.event_hooks["response"] = [_sort_unavailable]
            self._rest = rest
        return self._rest

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="code3-aptos-client", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def close(self) -> None:
        with self._lock:
            loop, thread, rest = self._loop, self._thread, self._rest
            self._loop = self._thread = self._rest = None
        if loop is None or thread is None:
            return
        if rest is not None:
            asyncio.run_coroutine_threadsafe(rest.close(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()


async def _sort_unavailable(response: Any) -> None:
    """httpx response hook: 5xx and 429 become NodeUnavailable before the SDK turns them into ApiError."""
    status = response.status_code
    if status >= 500 or status == 429:
        request = response.request
        log.debug("aptos node answered %s to %s %s", status, request.method, request.url.path)
        raise NodeUnavailable(f"HTTP {status} from {request.method} {request.url.path}",
                              _retry_after(response.headers.get("retry-after")))
