"""Live updates (issue 21): a real `code3 serve` streams `/live`, and an event written by another process (this
test's, through the handlers) arrives on the stream, on SQLite and PostgreSQL; the stream names the change (kind,
position, bounty id) and carries none of the event's data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import COOLING, World

TOKEN = "a-serve-token-for-the-live-tests-0123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def serve(world: World, tmp_path: Path) -> Iterator[str]:
    env = {**os.environ, "CODE3_PROJECT": str(world.project), "CODE3_IDENTITY": "alice", "CODE3_RESOLVER": "alice",
           "CODE3_COOLING_PERIOD": str(COOLING), "CODE3_SERVE_TOKEN": TOKEN, **world.stack.env("alice")}
    if world.database_url:
        env["CODE3_DATABASE_URL"] = world.database_url
    log = tmp_path / "serve.log"
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "code3", "serve", "--port", "0"], env=env, cwd=world.project,
                                text=True, stdout=subprocess.PIPE, stderr=err)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line, f"code3 serve did not start: {log.read_text()}"
        yield str(json.loads(line)["listening"])
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()
        assert "Traceback" not in log.read_text(), log.read_text()


def frames(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, object]]]:
    """(event name, data) of each server-sent event (comments and `retry` skipped)."""
    name, data = "message", ""
    for line in lines:
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            data = line.removeprefix("data: ")
        elif line == "" and data:
            yield name, json.loads(data)
            name, data = "message", ""


def test_an_event_written_by_another_process_arrives_on_the_stream_without_its_data(world: World,
                                                                                    serve: str) -> None:
    with httpx.Client(timeout=httpx.Timeout(30.0)) as client, \
            client.stream("GET", f"{serve}/live?topic=board", headers=AUTH) as stream:
        assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
        events = frames(stream.iter_lines())
        name, hello = next(events)
        assert name == "hello" and isinstance(hello["position"], int)

        started = time.monotonic()
        published = world.published(amount=1_234_567)  # written by this process, not by the serve
        bounty_id = published["bounty"]["bounty_id"]
        seen: list[dict[str, object]] = []
        for name, data in events:
            assert name in ("bounty", "resync"), name
            seen.append(data)
            if data.get("kind") == "Bounty.Created":
                break
        took = time.monotonic() - started
    created = seen[-1]
    assert created["bounty_id"] == bounty_id and int(str(created["position"])) > int(str(hello["position"]))
    assert set(created) == {"position", "kind", "aggregate", "bounty_id"}, "ids and kinds only, never data"
    assert "1234567" not in json.dumps(seen) and published["issue"]["url"] not in json.dumps(seen)
    assert took < 15, took
