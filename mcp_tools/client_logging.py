"""MCP logging to the client, for the project's own log records: `logging/setLevel` (the handshake era,
where the SDK has not deprecated it) and the 2026-07-28 per-request log-level opt-in. The records a tool call
emits, in any thread, go to the client that made the call as `notifications/message`.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_tools import sdk_internals

if TYPE_CHECKING:
    from mcp.types import LoggingLevel

log = logging.getLogger("code3.mcp")

LEVELS: tuple[LoggingLevel, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_PYTHON_LEVEL = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO + 5, "warning": logging.WARNING,
                 "error": logging.ERROR, "critical": logging.CRITICAL, "alert": logging.CRITICAL + 5,
                 "emergency": logging.CRITICAL + 10}
# Only the project's own loggers reach a client (a library's records may carry URLs or internals).
CLIENT_LOGGERS = ("code3", "adapters", "domain", "mcp_tools", "projections", "scheduler")
LEVEL_KEY = "code3.log_level"
_capture: contextvars.ContextVar[list[logging.LogRecord] | None] = contextvars.ContextVar("code3_client_log",
                                                                                          default=None)
_install_lock = threading.Lock()


class _ClientLogCapture(logging.Handler):
    """Collects the project's log records emitted while a tool runs (threads included: the worker thread
    runs in a copy of the request's context), for the request to send to its client."""

    def emit(self, record: logging.LogRecord) -> None:
        sink = _capture.get()
        if sink is not None and record.name.split(".")[0] in CLIENT_LOGGERS:
            sink.append(record)


_HANDLER = _ClientLogCapture()


def install_capture() -> None:
    with _install_lock:
        root = logging.getLogger()
        if _HANDLER not in root.handlers:
            root.addHandler(_HANDLER)


def _let_records_through(level: str) -> None:
    """Create records down to `level` for the client without changing what stderr shows: the stderr handlers
    keep the threshold the root logger had."""
    wanted = _PYTHON_LEVEL[level]
    root = logging.getLogger()
    with _install_lock:
        if root.getEffectiveLevel() <= wanted:
            return
        for handler in root.handlers:
            if handler is not _HANDLER and handler.level == logging.NOTSET:
                handler.setLevel(root.getEffectiveLevel())
        root.setLevel(wanted)


def _mcp_level(levelno: int) -> LoggingLevel:
    return next((name for name in reversed(LEVELS) if levelno >= _PYTHON_LEVEL[name]), "debug")


def _allowed_levels(ctx: Any) -> frozenset[LoggingLevel]:
    from mcp.server.connection import allowed_log_levels
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:  # the request's own `_meta` opt-in
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        meta = params.get("_meta")
        return frozenset(allowed_log_levels(ctx.protocol_version, meta if isinstance(meta, Mapping) else None))
    # set by logging/setLevel; nothing is sent before it
    chosen = sdk_internals.connection_state(ctx.session).get(LEVEL_KEY)
    return frozenset(LEVELS[LEVELS.index(chosen):]) if chosen in LEVELS else frozenset()


async def set_logging_level(ctx: Any, params: Any) -> Any:
    from mcp.types import EmptyResult

    sdk_internals.connection_state(ctx.session)[LEVEL_KEY] = params.level
    _let_records_through(params.level)
    return EmptyResult()


async def client_logging(ctx: Any, call_next: Any) -> Any:
    """During a tool call, send the server's log records the client asked for as `notifications/message`."""
    if getattr(ctx, "method", None) != "tools/call" or getattr(ctx, "request_id", None) is None:
        return await call_next(ctx)
    levels = _allowed_levels(ctx)
    if not levels:
        return await call_next(ctx)
    _let_records_through(min(levels, key=LEVELS.index))
    sink: list[logging.LogRecord] = []
    token = _capture.set(sink)
    try:
        return await call_next(ctx)
    finally:
        _capture.reset(token)
        await _send_records(ctx, sink, levels)


async def _send_records(ctx: Any, records: list[logging.LogRecord], levels: frozenset[LoggingLevel]) -> None:
    from mcp.types import LoggingMessageNotification, LoggingMessageNotificationParams

    for record in records:
        level = _mcp_level(record.levelno)
        if level not in levels:
            continue
        note = LoggingMessageNotification(params=LoggingMessageNotificationParams(
            level=level, logger=record.name, data=record.getMessage()))  # the message only: no traceback
        try:
            await ctx.session.send_notification(note, related_request_id=ctx.request_id)
        except Exception:  # a client that left does not fail the call it made
            log.debug("could not send a log record to the client", exc_info=True)
            return
