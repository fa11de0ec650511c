"""Shared fixtures: a project with three identities on the embedded forge and ledger, on SQLite or PostgreSQL."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import os
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # the application is imported by the fixtures that build it, so that collecting a test file
    # that needs none of it (a domain test) does not import it all (about a second)
    from adapters.ports import Chain, Forge
    from code3.settings import Settings
    from mcp_tools.services import Services
    from tests.stacks import Stack

POSTGRES_URL = os.environ.get("CODE3_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
REPO = "alice/todo-app"
AMOUNT = 1_000_000
COOLING = 604_800

# --- hypothesis profiles -------------------------------------------------------------------------------------------
# `dev` (the default) keeps the fast loop fast; `make test` (CI) runs `ci`. A test's own @settings carries only
# what the test needs whatever the profile (deadline=None, a suppressed health check); an explicit max_examples
# is left only where the count is part of what the test means.
HYPOTHESIS_PROFILES: dict[str, dict[str, Any]] = {
    "dev": {"max_examples": 10},
    "ci": {"max_examples": 100, "print_blob": True},
}
HYPOTHESIS_PROFILE = os.environ.get("CODE3_HYPOTHESIS_PROFILE", "dev")


def _load_hypothesis_profiles() -> None:
    from hypothesis import settings

    for name, values in HYPOTHESIS_PROFILES.items():
        settings.register_profile(name, **values)
    settings.load_profile(HYPOTHESIS_PROFILE)


class _WhenHypothesisIsImported(importlib.abc.MetaPathFinder):
    """Registers and loads the profiles as `import hypothesis` completes: before any test module's @settings reads
    the defaults, and never in a run whose tests do not use hypothesis (importing it takes about a second)."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "hypothesis":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            execute = spec.loader.exec_module

            def exec_module(module: Any) -> None:
                execute(module)
                _load_hypothesis_profiles()

            spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if "hypothesis" in sys.modules:
    _load_hypothesis_profiles()
else:
    sys.meta_path.insert(0, _WhenHypothesisIsImported())


def pytest_configure(config: pytest.Config) -> None:
    if HYPOTHESIS_PROFILE not in HYPOTHESIS_PROFILES:
        raise pytest.UsageError(f"CODE3_HYPOTHESIS_PROFILE={HYPOTHESIS_PROFILE!r} names no profile of "
                                f"tests/conftest.py (one of {', '.join(HYPOTHESIS_PROFILES)})")


def pytest_report_header(config: pytest.Config) -> list[str]:
    from tests.tools_needed import REQUIRE_VARIABLE, required

    return [f"hypothesis profile: {HYPOTHESIS_PROFILE} {HYPOTHESIS_PROFILES.get(HYPOTHESIS_PROFILE)} "
            "(CODE3_HYPOTHESIS_PROFILE; tests/conftest.py)",
            f"test tools: a missing one {'fails' if required() else 'skips'} its tests "
            f"({REQUIRE_VARIABLE}; tests/tools_needed.py)"]


def _postgres_schema() -> tuple[str, str]:
    """A fresh schema per test, so tests never see each other's events."""
    try:
        import psycopg

        schema = "code3_test_" + uuid.uuid4().hex[:12]
        with psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
    except Exception as exc:
        pytest.skip(f"no PostgreSQL answers at {POSTGRES_URL} ({type(exc).__name__}: {exc}); "
                    "set CODE3_TEST_POSTGRES or start one (.ci/run does)")
    return POSTGRES_URL, schema


@contextlib.contextmanager
def postgres_schema() -> Iterator[str]:
    """The URL of a fresh schema of the `test` database (skips when none answers), dropped afterwards."""
    url, schema = _postgres_schema()
    try:
        yield f"{url}?schema={schema}"
    finally:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    if request.param == "sqlite":
        yield None
        return
    with postgres_schema() as url:
        yield url


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """PostgreSQL only: a fresh schema's URL (tests of what only PostgreSQL has: backends, pools, proxies)."""
    with postgres_schema() as url:
        yield url


@pytest.fixture(params=["local"])
def stack(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stack]:
    """The embedded default; a test module runs on both stacks with `STACKS` below (indirect).

    A test names the chain's resolver (`stack.use_resolver`) once its keys exist, before any merge."""
    from tests.stacks import LocalStack, RemoteStack

    chosen: Stack = LocalStack(tmp_path, COOLING) if request.param == "local" else RemoteStack(tmp_path, COOLING)
    yield chosen
    chosen.close()


STACKS = pytest.mark.parametrize("stack", ["local", "remote"], indirect=True)


@dataclass
class World:
    project: Path
    database_url: str | None
    stack: Stack
    people: dict[str, Services] = field(default_factory=dict)

    def settings(self, identity: str) -> Settings:
        from code3.settings import Settings

        return Settings(project=self.project, identity=identity, database_url=self.database_url,
                        cooling_period=COOLING, **self.stack.settings(identity))

    def services(self, identity: str) -> Services:
        """A fresh process's view: new store connection, new adapters, same files."""
        from code3.wiring import build_services

        services = build_services(self.settings(identity))
        self.people.setdefault(f"_{identity}_{len(self.people)}", services)
        return services

    def __getitem__(self, identity: str) -> Services:
        if identity not in self.people:
            from code3.wiring import build_services

            self.people[identity] = build_services(self.settings(identity))
        return self.people[identity]

    @property
    def ledger(self) -> Chain:
        """The chain port as alice's services see it."""
        return self["alice"].chain

    @property
    def forge(self) -> Forge:
        return self["alice"].forge

    def address(self, identity: str) -> str:
        return self[identity].signer.address

    def specified(self, description: str = "Users can export their to-do list as CSV") -> dict[str, Any]:
        from mcp_tools.lifecycle import specs

        alice = self["alice"]
        spec = specs.specify(alice, description)
        specs.plan(alice, spec["feature_id"])
        specs.tasks(alice, spec["feature_id"])
        return spec

    def publish_args(self, spec: dict[str, Any], amount: int = AMOUNT) -> dict[str, Any]:
        return {"repo": REPO, "feature_id": spec["feature_id"], "spec_path": spec["paths"]["spec"],
                "amount": str(amount), "asset": "USDT", "network": self.stack.network,
                "mode": "contest"}  # several workers per bounty, as these tests expect (exclusive: test_modes)

    def published(self, amount: int = AMOUNT, description: str = "Users can export their to-do list as CSV"
                  ) -> dict[str, Any]:
        return self.published_spec(self.specified(description), amount)

    def published_spec(self, spec: dict[str, Any], amount: int = AMOUNT) -> dict[str, Any]:
        from mcp_tools.lifecycle import publish

        return publish.publish_issue_with_metadata(self["alice"], **self.publish_args(spec, amount))


@pytest.fixture(scope="session", autouse=True)
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The tools/list manifest of servers the tests start is kept in the session's own directory, not ~/.cache."""
    before = os.environ.get("CODE3_CACHE_DIR")
    os.environ["CODE3_CACHE_DIR"] = str(tmp_path_factory.mktemp("code3-cache"))
    yield
    if before is None:
        os.environ.pop("CODE3_CACHE_DIR", None)
    else:
        os.environ["CODE3_CACHE_DIR"] = before


@pytest.fixture(scope="session", autouse=True)
def _session_code3_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A CODE3_HOME for what runs before a test's own (module- and session-scoped fixtures): never ~/.config."""
    before = os.environ.get("CODE3_HOME")
    home = tmp_path_factory.mktemp("code3-session-home")
    home.chmod(0o700)
    os.environ["CODE3_HOME"] = str(home)
    yield
    if before is None:
        os.environ.pop("CODE3_HOME", None)
    else:
        os.environ["CODE3_HOME"] = before


@pytest.fixture(autouse=True)
def code3_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own CODE3_HOME (keys and per-project secrets), outside its project: set in the environment,
    so `code3` subprocesses the test starts use it too, and no test ever reads or writes ~/.config/code3."""
    home = tmp_path_factory.mktemp("code3-home")
    home.chmod(0o700)
    monkeypatch.setenv("CODE3_HOME", str(home))
    return home


@pytest.fixture
def world(tmp_path: Path, database_url: str | None, stack: Stack) -> Iterator[World]:
    from adapters.keystore import Keystore
    from code3.settings import Settings

    keystore = Keystore(Settings(project=tmp_path).keystore_dir)
    for name in ("alice", "bob", "carol"):
        keystore.new(name)
    stack.use_resolver(keystore.load("alice").address)  # alice also serves: her merge reports are the chain's
    w = World(project=tmp_path, database_url=database_url, stack=stack)
    stack.mint(w.address("alice"), 10 * AMOUNT)
    stack.create_repo(REPO)
    yield w
    for services in w.people.values():
        services.close()
