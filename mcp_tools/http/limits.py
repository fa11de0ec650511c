"""Bounded request bodies: a body is read chunk by chunk and refused (`TooLarge`) as soon as it passes its cap,
an announced oversize one before any of it is read; a body read ahead of the app is handed on (`replay`).

Two caps: the GitHub webhook's (GitHub caps its payloads at 25 MB) and /mcp's (the SDK's own cap for a
streamable-HTTP request body, enforced by the front before the SDK sees the request).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio

MAX_BODY = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB
MAX_MCP_BODY = 4 * 1024 * 1024  # the SDK's own cap for a streamable-HTTP request body


class TooLarge(Exception):
    pass


def declared_length(scope: Mapping[str, Any]) -> int | None:
    """The request's Content-Length, or None when it has none (or one that is not a number)."""
    for key, value in scope.get("headers", []):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def read_capped(receive: Callable[[], Any], cap: int, declared: int | None) -> bytes:
    """The request body, read chunk by chunk; TooLarge as soon as it passes `cap` (checked against the
    declared Content-Length first, so an announced oversize body is not read at all)."""
    if declared is not None and declared > cap:
        raise TooLarge
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise anyio.EndOfStream
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            raise TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay(body: bytes, receive: Any) -> Any:
    """An ASGI `receive` that answers the body already read first, then whatever `receive` answers."""
    sent = False

    async def replayed() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
