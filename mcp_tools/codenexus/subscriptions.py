"""Resource subscriptions that follow the event log, so a change made by another process is announced too.

A watcher task (started in the server's lifespan) reads the log beyond the position it has seen, brings
the CodeNexus index up to date, maps each CodeNexus event to the resource URIs it changes and announces
them: `notifications/resources/updated` to every 2025-11-25 session that subscribed to the URI
(`resources/subscribe`), and a `ResourceUpdated` event on the SDK's subscription bus, which the
2026-07-28 `subscriptions/listen` streams filter by URI. It reads the log every `Services.nexus_poll_s`
seconds (CODE3_NEXUS_POLL_S, read and checked with the other settings by code3.settings).
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

import anyio
from mcp.types import EmptyResult

from mcp_tools import sdk_internals
from mcp_tools.dialects import INVALID_PARAMS, nexus_error

if TYPE_CHECKING:
    from mcp_tools.services import Services

log = logging.getLogger("code3.codenexus.subscriptions")

PREFIXES = ("codenexus://file/", "codenexus://relationships/")
TAGS_URI = "codenexus://tags"
DEFAULT_POLL_S = 0.2
"""Seconds between reads of the log until the services are built (then theirs: `Services.nexus_poll_s`); the
default of CODE3_NEXUS_POLL_S too (tests/unit/test_codenexus_poll.py checks that they agree)."""
MAX_BACKOFF_S = 30.0
"""After failed reads the wait doubles, up to this (or the poll interval, when that is longer)."""
MAX_URI_CHARS = 2048
"""A resource URI longer than this is refused (a path is at most 4096 bytes, but no project file's URI
comes near: the cap keeps one request from storing megabytes)."""
MAX_PER_SESSION = 256
"""Subscriptions one session (connection) may hold at once."""
MAX_SUBSCRIPTIONS = 4096
"""Subscriptions the server holds over all sessions: with the caps above, at most 8 MB of URIs."""
PAGE = 500


def normal(uri: str) -> str:
    return unquote(uri)


def is_ours(uri: str) -> bool:
    return uri == TAGS_URI or any(uri.startswith(p) and len(uri) > len(p) for p in PREFIXES)


def changed_uris(s: Services, start: int) -> tuple[int, list[str], bool]:
    """The URIs changed by CodeNexus events after log position `start`: (new position, URIs, whether the
    set of files with metadata changed). The family is imported here, on the first poll, not at start-up."""
    from adapters.event_store import read_log
    from domain.knowledge.file_meta import FileMeta, Tag
    from mcp_tools.codenexus.context import fresh

    events = read_log(s.store, start + 1, PAGE)
    if not events:
        return start, [], False
    fresh(s)
    uris: dict[str, None] = {}
    listed = False
    for _, event in events:
        if isinstance(event, Tag.Event):
            uris[TAGS_URI] = None
        if not isinstance(event, FileMeta.Event):
            continue
        paths = [_path(s, str(event.originator_id))]
        if isinstance(event, FileMeta.Tagged | FileMeta.Untagged):
            uris[TAGS_URI] = None
        if isinstance(event, FileMeta.Registered | FileMeta.Moved):
            listed = True
        if isinstance(event, FileMeta.Moved):
            paths.append(event.old_path)
        for path in filter(None, paths):
            uris[f"codenexus://file/{path}"] = None
            uris[f"codenexus://relationships/{path}"] = None
        if isinstance(event, FileMeta.RelationshipCreated | FileMeta.RelationshipRemoved):
            target = _path(s, event.target_id)
            if target:
                uris[f"codenexus://relationships/{target}"] = None
    return events[-1][0], list(uris), listed


def _path(s: Services, file_id: str) -> str | None:
    rows = s.views.query("SELECT path FROM nexus_files WHERE file_id = ?", (file_id,))
    return str(rows[0][0]) if rows else None


class Hub:
    """Who subscribed to what (2025-11-25 sessions), and the watcher that tells them."""

    def __init__(self, runtime: Any, bus: Any, always: bool) -> None:
        self.runtime, self.bus, self.always = runtime, bus, always
        # normalised URI -> {connection: (a session on it, the URI as it subscribed)}; the SDK makes a session
        # object per request, so a subscriber is known by its connection
        self.sessions: dict[str, dict[Any, tuple[Any, str]]] = {}
        self.by_connection: dict[Any, set[str]] = {}  # connection -> the normalised URIs it subscribed to
        self.total = 0
        self.position: int | None = None

    async def subscribe(self, ctx: Any, params: Any) -> EmptyResult:
        uri = str(params.uri)
        if len(uri) > MAX_URI_CHARS:
            raise nexus_error(INVALID_PARAMS, f"the resource URI is {len(uri)} characters long; at most "
                                              f"{MAX_URI_CHARS} are accepted (a CodeNexus URI names one file)")
        if not is_ours(normal(uri)):
            raise nexus_error(INVALID_PARAMS, f"{uri[:200]!r} is not a CodeNexus resource "
                                              "(codenexus://file/{path}, codenexus://relationships/{path}, "
                                              "codenexus://tags)")
        if self.position is None:  # from now on, nothing is missed
            self.position = await anyio.to_thread.run_sync(self.runtime.run, _head)
        # no await from the checks to the insert: racing subscribes cannot both pass a cap
        key, connection = normal(uri), _connection(ctx)
        mine = self.by_connection.get(connection, set())
        if key not in mine:
            if len(mine) >= MAX_PER_SESSION:
                raise nexus_error(INVALID_PARAMS, f"this session already holds {MAX_PER_SESSION} subscriptions, "
                                                  "the most one session may; unsubscribe (resources/unsubscribe) "
                                                  "from one first")
            if self.total >= MAX_SUBSCRIPTIONS:
                raise nexus_error(INVALID_PARAMS, f"the server holds {MAX_SUBSCRIPTIONS} subscriptions, the most it "
                                                  "keeps; unsubscribe first or try again later")
            self.by_connection.setdefault(connection, set()).add(key)
            self.total += 1
        self.sessions.setdefault(key, {})[connection] = (ctx.session, uri)
        return EmptyResult()

    async def unsubscribe(self, ctx: Any, params: Any) -> EmptyResult:
        self._drop(_connection(ctx), normal(str(params.uri)))
        return EmptyResult()

    def _drop(self, connection: Any, key: str) -> None:
        subscribed = self.sessions.get(key, {})
        subscribed.pop(connection, None)
        if not subscribed:
            self.sessions.pop(key, None)
        mine = self.by_connection.get(connection)
        if mine is not None and key in mine:
            mine.discard(key)
            self.total -= 1
            if not mine:
                del self.by_connection[connection]

    def _active(self) -> bool:
        """Poll when a session subscribed, when the server is CodeNexus's own, or once services exist."""
        return bool(self.sessions) or self.always or self.runtime.built() is not None

    def poll_s(self) -> float:
        """Seconds between reads of the log: the services' (CODE3_NEXUS_POLL_S), the default until they exist (or
        when they are a stand-in without the field)."""
        return float(getattr(self.runtime.built(), "nexus_poll_s", DEFAULT_POLL_S))

    async def watch(self) -> None:
        backoff = 0.0  # after a failed read: how long to wait before the next (0: the poll interval)
        while True:
            await anyio.sleep(backoff or self.poll_s())
            if not self._active():
                continue
            try:
                if self.position is None:
                    self.position = await anyio.to_thread.run_sync(self.runtime.run, _head)
                    continue
                position, uris, listed = await anyio.to_thread.run_sync(
                    self.runtime.run, functools.partial(_changed_after, self.position))
                self.position = position
                backoff = 0.0
            except Exception as exc:  # the store may be unreachable for a while: try again later
                log.warning("codenexus watcher: %s: %s; retrying", type(exc).__name__, exc)
                poll = self.poll_s()
                backoff = min((backoff or poll) * 2, max(MAX_BACKOFF_S, poll))
                continue
            for uri in uris:
                await self.announce(uri)
            if listed:
                await self._list_changed()

    async def announce(self, uri: str) -> None:
        from mcp.server.subscriptions import ResourceUpdated

        for connection, (session, original) in list(self.sessions.get(uri, {}).items()):
            try:
                await session.send_resource_updated(original)
            except Exception:  # the client left: forget its subscriptions
                self._forget(connection)
        for form in dict.fromkeys((uri, quote(uri, safe=":/"))):
            await self.bus.publish(ResourceUpdated(uri=form))

    async def _list_changed(self) -> None:
        from mcp.server.subscriptions import ResourcesListChanged

        sessions = {connection: session for subscribed in self.sessions.values()
                    for connection, (session, _) in subscribed.items()}
        for connection, session in sessions.items():
            try:
                await session.send_resource_list_changed()
            except Exception:
                self._forget(connection)
        await self.bus.publish(ResourcesListChanged())

    def _forget(self, connection: Any) -> None:
        for key in list(self.by_connection.get(connection, ())):
            self._drop(connection, key)


def _connection(ctx: Any) -> Any:
    return sdk_internals.connection(ctx.session) or ctx.session


def _changed_after(start: int, s: Services) -> tuple[int, list[str], bool]:
    return changed_uris(s, start)


def _head(s: Services) -> int:
    return int(s.store.recorder.max_notification_id() or 0)
