"""The CodeNexus watcher reads the event log every CODE3_NEXUS_POLL_S seconds: declared with the other settings
(code3.settings, a bad value refused by name: tests/unit/test_settings.py), carried by the services the server
builds (tests/integration/test_codenexus_poll_wiring.py), and taken from them by the watcher, never read from the
environment by the module."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import anyio
import pytest

from code3.settings import VARIABLES, Settings
from mcp_tools.codenexus import subscriptions
from mcp_tools.codenexus.subscriptions import DEFAULT_POLL_S, MAX_BACKOFF_S, Hub
from mcp_tools.services import Services


@dataclass
class Runtime:
    services: Any = None
    failing: bool = False

    def built(self) -> Any:
        return self.services

    def run(self, fn: Any) -> Any:
        if self.failing:
            raise ConnectionError("the store is away")
        return 0 if fn is subscriptions._head else (0, [], False)  # the head, or nothing changed after it


@dataclass
class Polling:
    nexus_poll_s: float


class Stop(Exception):
    pass


def slept_while_watching(monkeypatch: pytest.MonkeyPatch, hub: Hub, rounds: int) -> list[float]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) > rounds:
            raise Stop

    monkeypatch.setattr(subscriptions.anyio, "sleep", sleep)
    with pytest.raises(Stop):
        anyio.run(hub.watch)
    return slept[:rounds]


def test_the_default_is_the_declared_one() -> None:
    services_default = next(f.default for f in fields(Services) if f.name == "nexus_poll_s")
    assert Settings(project=Path("/")).nexus_poll_s == services_default == DEFAULT_POLL_S
    assert VARIABLES["CODE3_NEXUS_POLL_S"].attribute == "nexus_poll_s"
    assert Settings.from_env({"CODE3_NEXUS_POLL_S": " 0.1 "}, project="/tmp").nexus_poll_s == 0.1


def test_the_watcher_polls_at_the_services_interval_once_they_exist() -> None:
    runtime = Runtime()
    hub = Hub(runtime, bus=None, always=True)
    assert hub.poll_s() == DEFAULT_POLL_S, "before the services are built"
    runtime.services = Polling(0.05)
    assert hub.poll_s() == 0.05
    runtime.services = object()  # a stand-in without the field
    assert hub.poll_s() == DEFAULT_POLL_S


def test_the_watcher_sleeps_the_interval_and_backs_off_while_the_store_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = Runtime(Polling(0.05))
    assert slept_while_watching(monkeypatch, Hub(runtime, bus=None, always=True), 4) == [0.05] * 4
    runtime.failing = True
    assert slept_while_watching(monkeypatch, Hub(runtime, bus=None, always=True), 4) == [0.05, 0.1, 0.2, 0.4]
    slow = Runtime(Polling(60.0), failing=True)
    assert slept_while_watching(monkeypatch, Hub(slow, bus=None, always=True), 3) == [60.0, 60.0, 60.0], \
        "the back-off never waits less than the interval, nor more than the longer of it and the cap"
    assert MAX_BACKOFF_S < 60.0


def test_the_module_reads_no_environment() -> None:
    source = Path(subscriptions.__file__).read_text(encoding="utf-8")
    assert "environ" not in source and "getenv" not in source
