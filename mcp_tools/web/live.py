"""Live updates (`/live`): server-sent events following the event log, so pages change without a reload.

One follower per serve (`LogFollower`) polls the log's head every half second — on SQLite and PostgreSQL
alike, and across processes, since whatever process wrote an event, it is in the log — reads what is new, and
fans it out to every open stream through a bounded in-memory queue each. A stream only waits on its queue: it
holds no lock and no database connection (the follower's reads take a pooled connection for the read only),
and the follower runs only while some stream is open.

A message names a change, never its content: the log position, the event's kind (`Bounty.Accepted`), the
aggregate's id and, for a bounty's or its issue's events, the bounty id. No event data goes out — a secret
annotation's text cannot leak through the stream — and the page fetches what changed through its own
authenticated routes (static/live.js). A stream that falls behind (its queue full) is told to `resync`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

log = logging.getLogger("code3.web")

POLL_S = 0.5
KEEPALIVE_S = 15.0
QUEUE = 256  # messages a slow stream may lag behind before it is told to resync
PAGE = 500
MAX_BOUNTY_IDS = 10_000  # the follower's memory of aggregate → bounty id


@dataclass(eq=False)  # compared and hashed by identity: a set of open streams
class Subscriber:
    queue: asyncio.Queue[dict[str, Any]] = field(default_factory=lambda: asyncio.Queue(QUEUE))
    behind: bool = False

    def offer(self, message: dict[str, Any]) -> None:
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            self.behind = True


class LogFollower:
    """Polls the log's head and fans new events out to the open streams (one follower per serve)."""

    def __init__(self, services: Any, poll_s: float = POLL_S) -> None:
        self.services = services  # () -> the serve's services
        self.poll_s = poll_s
        self.subscribers: set[Subscriber] = set()
        self.position: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._bounty_of: dict[Any, str | None] = {}

    async def subscribe(self) -> tuple[Subscriber, int]:
        """A new stream's queue, and the log position it starts after."""
        idle = self._task is None or self._task.done()
        if idle:  # nobody was listening: start from the head, not from where the last stream left
            self.position = await asyncio.to_thread(self._head)
        subscriber = Subscriber()
        self.subscribers.add(subscriber)
        if idle:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="code3-live-follower")
        return subscriber, self.position or 0

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self.subscribers.discard(subscriber)

    async def _run(self) -> None:
        while self.subscribers:
            try:
                messages = await asyncio.to_thread(self._read_new)
            except Exception as exc:  # the database is away: streams stay open, the next poll tries again
                log.warning("live updates: the log could not be read (%s)", type(exc).__name__)
                messages = []
            for message in messages:
                for subscriber in list(self.subscribers):
                    subscriber.offer(message)
            await asyncio.sleep(self.poll_s)

    def _head(self) -> int:
        return int(self.services().store.recorder.max_notification_id() or 0)

    def _read_new(self) -> list[dict[str, Any]]:
        from adapters.event_store import read_log

        s = self.services()
        if self._head() <= (self.position or 0):
            return []
        messages = []
        for position, event in read_log(s.store, (self.position or 0) + 1, PAGE):
            messages.append(self._message(s, position, event))
            self.position = position
        return messages

    def _message(self, s: Any, position: int, event: Any) -> dict[str, Any]:
        aggregate = type(event).__qualname__.split(".")[0]
        message: dict[str, Any] = {"position": position, "kind": f"{aggregate}.{type(event).__name__}",
                                   "aggregate": str(event.originator_id)}
        bounty_id = self._bounty_id(s, aggregate, event)
        if bounty_id is not None:
            message["bounty_id"] = bounty_id
        return message

    def _bounty_id(self, s: Any, aggregate: str, event: Any) -> str | None:
        """The bounty a Bounty or Issue event belongs to (None for any other aggregate, or an issue not yet linked)."""
        from domain.bounties.bounty import Bounty
        from domain.bounties.issue import Issue

        if aggregate not in ("Bounty", "Issue"):
            return None
        known = self._bounty_of.get(event.originator_id)
        if known is not None:
            return known
        if isinstance(event, Bounty.Created | Issue.BountyLinked):
            found: str | None = str(event.bounty_id)
        else:
            cls = Bounty if aggregate == "Bounty" else Issue
            try:
                current = s.store.get(cls, event.originator_id)
            except Exception:
                current = None
            found = getattr(current, "bounty_id", None)
        if found is not None:
            if len(self._bounty_of) >= MAX_BOUNTY_IDS:
                self._bounty_of.clear()
            self._bounty_of[event.originator_id] = found
        return found


def matches(topic: str, message: dict[str, Any]) -> bool:
    if topic == "all":
        return True
    if topic == "board":
        return "bounty_id" in message
    if topic.startswith("bounty:"):
        return message.get("bounty_id") == topic.removeprefix("bounty:")
    return False


def valid_topic(topic: str) -> bool:
    if topic in ("all", "board"):
        return True
    rest = topic.removeprefix("bounty:")
    return rest != topic and rest.isascii() and rest.isdigit() and len(rest) <= 20


def frame(event: str, data: dict[str, Any], event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def routes(web: Any) -> list[BaseRoute]:
    follower = LogFollower(web.services)
    web.follower = follower

    async def live(request: Request) -> Response:
        topic = request.query_params.get("topic", "board")
        if not valid_topic(topic):
            return Response("unknown topic: use board, bounty:<id> or all\n", status_code=400,
                            media_type="text/plain")
        seen = request.headers.get("last-event-id") or request.query_params.get("after") or ""

        async def stream() -> AsyncIterator[str]:
            subscriber, position = await follower.subscribe()
            try:
                yield "retry: 2000\n\n"
                yield frame("hello", {"position": position, "topic": topic})
                if seen.isdigit() and int(seen) < position:  # a reconnect that missed events: refresh everything
                    yield frame("resync", {"position": position})
                while True:
                    try:
                        message = await asyncio.wait_for(subscriber.queue.get(), KEEPALIVE_S)
                    except TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    if subscriber.behind:
                        subscriber.behind = False
                        with contextlib.suppress(asyncio.QueueEmpty):
                            while True:
                                subscriber.queue.get_nowait()
                        yield frame("resync", {"position": message["position"]})
                        continue
                    if matches(topic, message):
                        name = "bounty" if "bounty_id" in message else "change"
                        yield frame(name, message, message["position"])
            finally:
                follower.unsubscribe(subscriber)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    return [Route("/live", live, methods=["GET"])]
