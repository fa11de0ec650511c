"""Concurrency in a serve (issue 20): a slow call stalls no other.

A real `code3 serve` whose GitHub stand-in holds issue creation: while a publish waits there, `add`, a board read
and a write answer (no timing threshold: they complete while the publish is still pending), and a second publish
of the same key waits for the first and answers the same issue (one issue on the forge). The Runtime's own
behaviour is checked in one process: no lock around handlers, services built once, and a lost write race answered
with a coded error.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from benchmarks.concurrency import KINDS, SLOW_REPO, Serve, call_for, check, prepare, publish_args, session, slow_github
from mcp_tools.binding import Runtime, write_conflict

pytestmark = pytest.mark.filterwarnings("default::mcp.MCPDeprecationWarning")

PUBLISH = "spec_mcp.publish_issue_with_metadata"


def test_add_a_board_read_and_a_write_answer_while_a_publish_waits_on_a_slow_forge(tmp_path: Path) -> None:
    project, home = prepare(tmp_path, bounties=20, clients=1)
    with slow_github(tmp_path) as github:
        serve = Serve(project, home, github.api_url, log_file=tmp_path / "serve.log")
        try:
            hold = github.hold_issue_creation(120)

            async def scenario() -> tuple[Any, Any, list[str]]:
                async with session(serve.url) as first, session(serve.url) as second, session(serve.url) as other:
                    publishing = asyncio.create_task(first.call_tool(PUBLISH, publish_args()))
                    for _ in range(600):  # until the publish waits at the forge
                        if hold.entered.is_set() or publishing.done():
                            break
                        await asyncio.sleep(0.05)
                    assert hold.entered.is_set(), f"the publish never reached the forge: {await publishing}"
                    again = asyncio.create_task(second.call_tool(PUBLISH, publish_args()))  # the same key
                    answered = []
                    for kind in KINDS:
                        result = await asyncio.wait_for(other.call_tool(*call_for(kind, 0, 1)), 60)
                        assert check(kind, result) is None, check(kind, result)
                        answered.append(kind)
                    assert not publishing.done() and not again.done(), "the publishes were still waiting"
                    hold.release.set()
                    return await asyncio.wait_for(publishing, 60), await asyncio.wait_for(again, 60), answered

            published, repeated, answered = asyncio.run(scenario())
        finally:
            serve.stop()
        assert answered == list(KINDS), "add, the board read and the write answered while the publish waited"
        assert not published.is_error, published.content[0].text
        assert not repeated.is_error, repeated.content[0].text
        first, second = published.structured_content, repeated.structured_content
        assert first["issue"] == second["issue"] and first["bounty"] == second["bounty"]
        issues = [item for item in github.state.items[SLOW_REPO].values() if item.pull is None]
        assert len(issues) == 1, "two concurrent publishes of one key made one issue"


class _Services:
    built = 0

    def __init__(self) -> None:
        type(self).built += 1


def test_the_runtime_runs_handlers_at_once_and_builds_the_services_once() -> None:
    runtime = Runtime(_Services)
    inside, release = threading.Event(), threading.Event()
    seen: list[Any] = []

    def slow(services: Any) -> None:
        inside.set()
        release.wait(30)
        seen.append(services)

    slow_thread = threading.Thread(target=runtime.run, args=(slow,))
    slow_thread.start()
    assert inside.wait(30)
    fast = threading.Thread(target=lambda: seen.append(runtime.run(lambda s: s)))
    fast.start()
    fast.join(30)
    assert not fast.is_alive() and len(seen) == 1, "a call completes while another one is still running"
    release.set()
    slow_thread.join(30)
    assert seen[0] is seen[1] and _Services.built == 1


def test_a_write_that_keeps_losing_its_race_answers_a_coded_error_not_internal() -> None:
    from eventsourcing.persistence import IntegrityError

    from domain.errors import Code

    try:
        try:
            raise RuntimeError("the driver's own error")
        except RuntimeError as driver:
            raise IntegrityError("stale aggregate") from driver
    except IntegrityError as exc:
        conflict = write_conflict(exc)
    assert conflict is not None and conflict.code is Code.PRECONDITION and "retry" in conflict.hint
    assert write_conflict(ValueError("a bug")) is None
