"""Unit tests stay in this process: no subprocess (git and the `code3` CLI included), no fork, no connection or
name lookup beyond loopback, no PostgreSQL. A test that needs any of these belongs in tests/integration (or
tests/campaigns when it takes seconds), where `make test` runs it; `make unit` runs this directory alone.

The guard is an audit hook (PEP 578), so it sees every way in: `subprocess`, `os.system`, `os.posix_spawn`,
`os.fork` (process pools), `os.exec*`, `socket.connect` and `socket.getaddrinfo`, however the code under test
imported them. It is active only while a test under tests/unit is set up, runs and is torn down; a refused call
raises `OutsideTheProcess` where it was made and fails the test even if the code under test swallowed the error.
PostgreSQL is refused by its markers and fixtures (libpq connects in C, where no audit event is raised).
"""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Iterator
from typing import Any

import pytest

_PROCESS_EVENTS = {"subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.exec", "os.fork",
                   "os.forkpty", "pty.spawn"}
_POSTGRES_FIXTURES = {"postgres_url"}
_watching: list[str] = []  # what the running unit test did outside its process (empty list: watching)
_active = False


class OutsideTheProcess(RuntimeError):
    """A unit test reached outside its process (see this module's docstring)."""


def _loopback(host: Any) -> bool:
    name = host.decode() if isinstance(host, bytes) else host
    if name in (None, "", "localhost"):
        return True
    try:
        return ipaddress.ip_address(str(name)).is_loopback
    except ValueError:
        return False


def _refusal(event: str, args: tuple[Any, ...]) -> str | None:
    if event in _PROCESS_EVENTS:
        shown = args[1] if event == "subprocess.Popen" else args[:2]
        return f"{event} {shown!r}"[:200] if shown else event
    if event == "socket.connect":
        address = args[1]
        if isinstance(address, tuple) and not _loopback(address[0]):
            return f"socket.connect to {address!r}"
    elif event == "socket.getaddrinfo" and not _loopback(args[0]):
        return f"socket.getaddrinfo of {args[0]!r}"
    return None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _active or not (event in _PROCESS_EVENTS or event.startswith("socket.")):
        return
    refused = _refusal(event, args)
    if refused is not None:
        _watching.append(refused)
        raise OutsideTheProcess(f"a unit test may not call {refused}: move the test to tests/integration")


sys.addaudithook(_audit)  # for the life of the process; it does nothing while no unit test runs


def _watched(item: pytest.Item, phase: str) -> Iterator[None]:
    """The phase runs with the guard on; what it refused fails it, in place of whatever error followed."""
    global _active
    _watching.clear()
    _active = True
    try:
        yield
    finally:
        _active = False
        if _watching:
            calls = "\n  ".join(dict.fromkeys(_watching))
            pytest.fail(f"{item.nodeid} reached outside its process during {phase} (move it to tests/integration):"
                        f"\n  {calls}", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """Also: a PostgreSQL case (the `postgres` mark, which the `database_url` fixture's "postgres" parameter
    carries, or the `postgres_url` fixture) fails before its fixture connects."""
    if item.get_closest_marker("postgres") is not None or _POSTGRES_FIXTURES & set(getattr(item, "fixturenames", ())):
        pytest.fail(f"{item.nodeid} needs PostgreSQL: move it to tests/integration", pytrace=False)
    yield from _watched(item, "setup")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield from _watched(item, "call")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield from _watched(item, "teardown")
