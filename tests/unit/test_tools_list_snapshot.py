"""`tools/list` keeps the names and input schemas the lifecycle had before the layout refactor
(tests/fixtures/tools_list_snapshot.json, taken from commit 3be1023): a tool declared once on its handler
publishes the same schema its hand-written stub did. Changes made on purpose (strict types, new arguments)
update the snapshot and say so in the commit; every tool now also declares an output schema."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from mcp_tools.server import build_server

SNAPSHOT = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "tools_list_snapshot.json").read_text())
# Deliberate changes since the snapshot: (tool, property) -> why.
CHANGED: dict[tuple[str, str], str] = {
    ("spec_mcp.publish_issue_with_metadata", "amount"): "the description says the unit with an example (issue 17)",
    ("server_mcp.accept_best_task", "min_amount"): "the description says the unit with an example (issue 17)",
}


def _tools(profile: str) -> dict[str, object]:
    async def go() -> dict[str, object]:
        return {t.name: t for t in await build_server(lambda: None, profile=profile, version="t").list_tools()}

    return anyio.run(go)


@pytest.mark.parametrize("profile", sorted(SNAPSHOT))
def test_the_lifecycle_tools_keep_their_names_and_input_schemas(profile: str) -> None:
    tools = _tools(profile)
    for name, schema in SNAPSHOT[profile].items():
        assert name in tools, f"{name} left profile {profile}"
        published = tools[name].input_schema  # type: ignore[attr-defined]
        for prop, before in schema.get("properties", {}).items():
            if (name, prop) in CHANGED:
                continue
            assert published["properties"].get(prop) == before, f"{name}.{prop} changed"
        assert sorted(published.get("required", [])) == sorted(schema.get("required", [])), name


@pytest.mark.parametrize("profile", sorted(SNAPSHOT))
def test_every_tool_declares_an_output_schema(profile: str) -> None:
    missing = [name for name, tool in _tools(profile).items() if tool.output_schema is None]  # type: ignore[attr-defined]
    assert not missing, f"tools without an output schema: {missing}"
