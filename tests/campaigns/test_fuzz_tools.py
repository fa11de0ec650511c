"""Fuzz campaign: every declared tool gets generated arguments (hypothesis-jsonschema from its published
input schema) and mutated ones (wrong types, extra keys, missing keys, hostile strings: traversal, key
files, NUL, trailing newlines, 10 kB, other hosts), through a real MCP client.

Never an internal error (E_INTERNAL, INTERNAL, "内部错误", JSON-RPC -32603), never a traceback in an
answer, and a refused call leaves the event log, the ledger, the forge and the project's files as they
were. The project holds sources and planted symlinks (tests/campaigns/world.py): whatever a call answers,
what the symlinks lead to is never changed, and no reverse-spec, CodeNexus or ai-loom answer holds an
absolute path. `CODE3_FUZZ_EXAMPLES` sets the examples per tool (`make test`: 200; `make fuzz`: 2000; unset: the
hypothesis profile's, tests/conftest.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_tools.catalog import declared
from mcp_tools.server import build_server
from tests.answers import error_of
from tests.campaigns.world import CampaignWorld

EXAMPLES = int(os.environ.get("CODE3_FUZZ_EXAMPLES", "0"))  # 0: the hypothesis profile's max_examples
INTERNAL_CODES = {"E_INTERNAL", "INTERNAL"}
HOSTILE = ["../../../../etc/passwd", ".code3/keys/alice.key", ".code3/webhook_secret", "specs/../.code3/keys/bob.key",
           "/etc/passwd", "feat/../../../../keys/alice.key", "a\n", "7\n", "001-nl\n", "\x00", "x" * 10_000,
           "http://elsewhere.example/alice/todo-app/pull/1", "alice/todo-app#1\n", "😀" * 300, "", " ", "-1",
           "18446744073709551616", "1e21", "yes", "100", "null", "[]", "{}", "owner/repo", "NaN",
           # the world's sources and planted symlinks (tests/campaigns/world.py)
           "src/app.py", "src", "web/index.ts", ".", "src/evil.py", "lib", "lib/evil.py", "specs/linked",
           "specs/linked/evil.spec.md", "specs/src.spec.md", "src/../lib/evil.py"]
OWN_PATHS = ("server_mcp.", "spec_mcp.")  # answer workspace paths (a worker's clone) by design
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40) | st.sampled_from(HOSTILE),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6)


@st.composite
def _mutated(draw: st.DrawFn, valid: st.SearchStrategy[dict[str, Any]], keys: list[str]) -> dict[str, Any]:
    args = dict(draw(valid))
    op = draw(st.sampled_from(["replace", "hostile", "extra", "drop"]))
    if op in ("replace", "hostile") and keys:
        args[draw(st.sampled_from(keys))] = draw(JSON if op == "replace" else st.sampled_from(HOSTILE))
    elif op == "extra":
        args[draw(st.text(min_size=1, max_size=12))] = draw(JSON)
    elif args:
        args.pop(draw(st.sampled_from(sorted(args))))
    return args


def _value(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value valid for one property's schema (hypothesis-jsonschema for the scalars and arrays)."""
    if prop.get("type") == "object" or "properties" in prop or "$ref" in prop:
        return st.dictionaries(st.text(max_size=8), JSON, max_size=3)
    if "anyOf" in prop:
        return st.one_of([_value(p) for p in prop["anyOf"]])
    return from_schema(prop)


@st.composite
def _valid(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    # hypothesis-jsonschema 0.23's own object strategy uses a Hypothesis internal (`many.more`) that
    # Hypothesis 6.170 no longer has: objects are assembled here, property by property.
    required = set(schema.get("required", []))
    return {key: draw(_value(prop)) for key, prop in schema.get("properties", {}).items()
            if key in required or draw(st.booleans())}


def arguments(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    valid = _valid(schema)
    keys = sorted(schema.get("properties", {}))
    return st.one_of(valid, _mutated(valid, keys), st.dictionaries(st.text(max_size=12), JSON, max_size=4))


class Fuzzer:
    def __init__(self, world: CampaignWorld, portal: BlockingPortal, stack: ExitStack) -> None:
        self.world, self.portal = world, portal
        self.clients: dict[str, Any] = {}
        self.schemas: dict[str, dict[str, Any]] = {}
        for who in ("alice", "bob"):
            services = world.people[who]
            client = Client(build_server(lambda s=services: s, profile="all", version="fuzz"), mode="legacy")
            self.clients[who] = stack.enter_context(portal.wrap_async_context_manager(client))
        for tool in portal.call(self.clients["alice"].list_tools).tools:
            self.schemas[tool.name] = tool.input_schema

    def check(self, tool: str, args: Any) -> None:
        who = "bob" if tool.startswith("server_mcp.") else "alice"
        before = self.world.snapshot()
        outside = self.world.outside_files()
        try:
            result = self.portal.call(self.clients[who].call_tool, tool, args)
        except MCPError as exc:
            assert exc.error.code != -32603, f"{tool}({args!r}) answered a JSON-RPC internal error: {exc}"
            refused, text = True, str(exc)
        else:
            refused = bool(result.is_error)
            text = "".join(getattr(c, "text", "") for c in result.content)
            code = error_of(result).get("code") if refused else None
            # reverse-spec's internal-error words, unless they are the generated arguments echoed back (a refusal
            # names the unknown argument it refuses: hypothesis once called one "内部错误")
            own = "".join(str(k) + str(v) for k, v in args.items()) if isinstance(args, dict) else str(args)
            internal = "内部错误" in text and "内部错误" not in own
            assert code not in INTERNAL_CODES and not internal, f"{tool}({args!r}) failed internally: {text}"
        assert "Traceback" not in text, f"{tool}({args!r}) answered a traceback"
        assert self.world.outside_files() == outside, f"{tool}({args!r}) changed what a planted symlink leads to"
        if not tool.startswith(OWN_PATHS):
            answer = text + json.dumps(getattr(result, "structured_content", None) if not refused else None)
            assert str(self.world.project.parent) not in answer, f"{tool}({args!r}) answered an absolute path"
        if refused:
            assert self.world.snapshot() == before, f"{tool}({args!r}) was refused but changed state: {text}"


@pytest.fixture(scope="module")
def fuzzer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzer]:
    project = Path(tmp_path_factory.mktemp("fuzz")) / "project"
    project.mkdir()
    world = CampaignWorld.create(project, sources=True)
    try:
        with start_blocking_portal() as portal, ExitStack() as stack:
            yield Fuzzer(world, portal, stack)
    finally:
        world.close()


@pytest.mark.parametrize("tool", sorted(declared()))
def test_generated_and_mutated_arguments_never_fail_internally_and_a_refusal_changes_nothing(
        tool: str, fuzzer: Fuzzer) -> None:
    schema = fuzzer.schemas[tool]

    @settings(**({"max_examples": EXAMPLES} if EXAMPLES else {}), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(arguments(schema))
    def run(args: dict[str, Any]) -> None:
        fuzzer.check(tool, args)

    run()


def test_the_fuzzer_sees_every_declared_tool(fuzzer: Fuzzer) -> None:
    assert set(fuzzer.schemas) == set(declared())

