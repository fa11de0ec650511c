"""What a client of each profile is told at `initialize`: instructions naming that profile's own tools only,
and, from `code3 serve`, Code3's own version in serverInfo (as `code3 mcp` answers)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from code3 import __version__
from mcp_tools.catalog import INSTRUCTIONS, PROFILES, declared
from mcp_tools.server import build_server
from tests.e2e.test_protocol_errors import TOKEN, messages
from tests.e2e.test_protocol_http import Serve, post_initialize

BACKTICKED = re.compile(r"`([^`]+)`")


def tools_of(profile: str) -> set[str]:
    return {name for name, decl in declared().items() if profile in decl.profiles}


@pytest.mark.parametrize("profile", list(PROFILES))
def test_each_profiles_instructions_name_its_own_tools_and_no_other(tmp_path: Path, profile: str) -> None:
    server = build_server(lambda: None, profile=profile, version=__version__)

    async def scenario() -> Any:
        async with Client(server) as client:
            return client.instructions, {t.name for t in (await client.list_tools()).tools}

    instructions, listed = asyncio.run(scenario())
    assert instructions == INSTRUCTIONS[profile] and listed == tools_of(profile)
    every_tool = set(declared())
    named = {word for word in BACKTICKED.findall(instructions) if word in every_tool}
    assert named == listed, f"{profile}: names {sorted(named - listed)}, omits {sorted(listed - named)}"
    # a namespaced or compound name of another profile's tool appears nowhere, backticked or not
    foreign = {name for name in every_tool - listed if "." in name or "_" in name}
    assert not [name for name in foreign if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", instructions)]


def test_no_profile_but_all_carries_the_bounty_instructions() -> None:
    for profile in ("reverse-spec", "codenexus", "ai-loom"):
        assert "bount" not in INSTRUCTIONS[profile].lower() and "spec_mcp" not in INSTRUCTIONS[profile]


def test_code3_serve_answers_code3s_version_in_server_info(tmp_path: Path) -> None:
    serve = Serve(tmp_path, env={"CODE3_SERVE_TOKEN": TOKEN})
    try:
        answer = post_initialize(serve.url, {"Authorization": f"Bearer {TOKEN}"})
    finally:
        serve.stop()
    assert answer.status_code == 200
    info = messages(answer)[-1]["result"]["serverInfo"]
    assert info == {"name": "code3", "version": __version__} and __version__ != "0"
