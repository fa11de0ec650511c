"""`resources/subscribe` holds bounded state (issue 18, class 4): a URI's length, the subscriptions of one
session and of the whole server are capped, each refusal a -32602 with CodeNexus's data and nothing kept."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from mcp_tools.codenexus import subscriptions
from mcp_tools.codenexus.subscriptions import MAX_PER_SESSION, MAX_URI_CHARS, Hub


@dataclass
class Session:
    _connection: object = field(default_factory=object)


@dataclass
class Ctx:
    session: Session


@dataclass
class Params:
    uri: str


class Runtime:
    def run(self, fn: Any) -> int:
        return 0

    def built(self) -> Any:
        return None


def _hub() -> Hub:
    return Hub(Runtime(), bus=None, always=False)


def _subscribe(hub: Hub, ctx: Ctx, uri: str) -> None:
    anyio.run(hub.subscribe, ctx, Params(uri))


def _refusal(hub: Hub, ctx: Ctx, uri: str) -> MCPError:
    with pytest.raises(MCPError) as caught:
        _subscribe(hub, ctx, uri)
    error = caught.value
    assert error.code == -32602 and set(error.data) == {"type", "details", "timestamp"}
    return error


def test_a_uri_over_2_kb_is_refused_before_anything_is_kept() -> None:
    hub, ctx = _hub(), Ctx(Session())
    error = _refusal(hub, ctx, "codenexus://file/" + "a" * MAX_URI_CHARS)
    assert "at most 2048" in error.data["details"]
    assert len(error.data["details"]) < 300  # the URI is not echoed back
    assert hub.sessions == {} and hub.total == 0


def test_a_uri_of_exactly_the_cap_is_accepted() -> None:
    hub, ctx = _hub(), Ctx(Session())
    uri = "codenexus://file/" + "a" * (MAX_URI_CHARS - len("codenexus://file/"))
    _subscribe(hub, ctx, uri)
    assert hub.total == 1


def test_a_session_holds_at_most_256_subscriptions_and_the_next_is_refused_clearly() -> None:
    hub, ctx = _hub(), Ctx(Session())
    for i in range(MAX_PER_SESSION):
        _subscribe(hub, ctx, f"codenexus://file/src/f{i}.py")
    _subscribe(hub, ctx, "codenexus://file/src/f0.py")  # a repeat holds nothing more
    error = _refusal(hub, ctx, "codenexus://file/src/one-more.py")
    assert "256 subscriptions" in error.data["details"] and "unsubscribe" in error.data["details"]
    assert hub.total == MAX_PER_SESSION and "codenexus://file/src/one-more.py" not in hub.sessions
    anyio.run(hub.unsubscribe, ctx, Params("codenexus://file/src/f1.py"))
    _subscribe(hub, ctx, "codenexus://file/src/one-more.py")  # room again after an unsubscribe
    assert hub.total == MAX_PER_SESSION
    other = Ctx(Session())  # another session has its own allowance
    _subscribe(hub, other, "codenexus://file/src/f0.py")
    assert hub.total == MAX_PER_SESSION + 1 and len(hub.sessions["codenexus://file/src/f0.py"]) == 2


def test_the_server_total_is_capped_across_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subscriptions, "MAX_SUBSCRIPTIONS", 10)
    hub = _hub()
    for n in range(5):
        ctx = Ctx(Session())
        for i in range(2):
            _subscribe(hub, ctx, f"codenexus://file/s{n}/f{i}.py")
    error = _refusal(hub, Ctx(Session()), "codenexus://tags")
    assert "the server holds 10 subscriptions" in error.data["details"]
    assert hub.total == 10 and "codenexus://tags" not in hub.sessions


def test_a_client_that_left_gives_back_its_share() -> None:
    hub, ctx = _hub(), Ctx(Session())
    for i in range(3):
        _subscribe(hub, ctx, f"codenexus://relationships/f{i}.py")
    hub._forget(ctx.session._connection)
    assert hub.total == 0 and hub.sessions == {} and hub.by_connection == {}
