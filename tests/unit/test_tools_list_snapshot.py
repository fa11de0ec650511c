"""`tools/list` keeps the names and input schemas the lifecycle had before the layout refactor
(tests/fixtures/tools_list_snapshot.json, taken from commit 3be1023): a tool declared once on its handler
publishes the same schema its hand-written stub did. Changes made on purpose (strict types, new arguments)
update the snapshot and say so in the commit; every tool now also declares an output schema."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from mcp_tools.catalog import PROFILES, TEXT_ANSWERS
from mcp_tools.published import NULLABLE, input_schema, untitled
from mcp_tools.server import build_server

SNAPSHOT = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "tools_list_snapshot.json").read_text())
# Deliberate changes since the snapshot: (tool, property) -> why.
CHANGED: dict[tuple[str, str], str] = {
    ("spec_mcp.publish_issue_with_metadata", "amount"): "the description says the unit with an example (issue 17)",
    ("server_mcp.accept_best_task", "min_amount"): "the description says the unit with an example (issue 17)",
    # fork_and_prepare also takes bounty_id or task_id (the worker needs no feature id known beforehand): repo and
    # issue_json became optional (the snapshot's `required` for it is [] since), the seed's call is unchanged
    ("server_mcp.fork_and_prepare", "repo"): "optional: taken from the bounty when bounty_id or task_id is given",
    ("server_mcp.fork_and_prepare", "issue_json"): "optional: one of issue_json, bounty_id, task_id",
}
# The snapshot itself was updated on purpose for issue 17 (mcp_tools.published): optional arguments published as
# their plain type (not anyOf with null), every schema with `required`, and `add` as seed 003's schema verbatim.
# Since then the published schemas carry no pydantic `title` keywords (no seed's schema has one): the snapshot's
# properties are compared without theirs (mcp_tools.published.untitled).


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
            assert published["properties"].get(prop) == untitled(before), f"{name}.{prop} changed"
        assert sorted(published.get("required", [])) == sorted(schema.get("required", [])), name


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_tool_declares_an_output_schema_but_those_whose_seed_answers_text(profile: str) -> None:
    """Seeds 000 and 003 define the answer as text: those tools declare no output schema (Claude Code shows a
    result's structuredContent instead of its text whenever there is one)."""
    tools = _tools(profile)
    missing = [name for name, tool in tools.items() if tool.output_schema is None]  # type: ignore[attr-defined]
    assert sorted(missing) == sorted(TEXT_ANSWERS & set(tools)), f"tools without an output schema: {missing}"


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_no_published_input_schema_carries_a_title_keyword(profile: str) -> None:
    def titles(schema: object, where: str) -> list[str]:
        if isinstance(schema, list):
            return [t for i, item in enumerate(schema) for t in titles(item, f"{where}[{i}]")]
        if not isinstance(schema, dict):
            return []
        found = [where] if isinstance(schema.get("title"), str) else []
        for key, value in schema.items():
            if key == "properties":
                found += [t for name, sub in value.items() for t in titles(sub, f"{where}.{name}")]
            elif key not in ("default", "const", "enum", "examples", "title"):
                found += titles(value, f"{where}.{key}")
        return found

    tools = _tools(profile)
    assert not [t for name, tool in tools.items() for t in titles(tool.input_schema, name)]  # type: ignore[attr-defined]
    if "server_mcp.open_pr" in tools:  # an argument *named* title is kept
        assert "title" in tools["server_mcp.open_pr"].input_schema["properties"]  # type: ignore[attr-defined]


# --- what generic clients can fill (issue 17) -------------------------------------------------------------------------

SEED_003_ADD = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]}  # seed 003's ListTools answer, verbatim


def _nullable(prop: dict[str, object]) -> bool:
    variants = prop.get("anyOf")
    return (isinstance(variants, list) and {"type": "null"} in variants) or prop.get("type") == "null"


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_no_optional_argument_is_published_as_anyof_with_null_outside_the_seeds_nullable_ones(profile: str) -> None:
    found = set()
    for name, tool in _tools(profile).items():
        schema = tool.input_schema  # type: ignore[attr-defined]
        assert schema.get("type") == "object" and isinstance(schema.get("required"), list), name
        for prop, spec in schema.get("properties", {}).items():
            if _nullable(spec):
                found.add((name, prop))
            if prop not in schema["required"] and (name, prop) not in NULLABLE:
                assert spec.get("type") in ("string", "integer", "number", "boolean", "array", "object"), (name, prop)
    assert found == {(t, p) for t, p in NULLABLE if t in _tools(profile)}, found


def test_the_seed_001_nullable_arguments_keep_anyof_with_null() -> None:
    tools = _tools("all")
    for name, prop in NULLABLE:
        spec = tools[name].input_schema["properties"][prop]  # type: ignore[attr-defined]
        assert {"type": "null"} in spec["anyOf"] and {"type": "string"} in spec["anyOf"], (name, spec)


def test_add_publishes_exactly_seed_003s_schema_and_real_defaults_are_published() -> None:
    for profile in ("client-local", "client-remote", "server", "all"):
        assert _tools(profile)["add"].input_schema == SEED_003_ADD, profile  # type: ignore[attr-defined]
    loom = {name: tool.input_schema["properties"] for name, tool in _tools("ai-loom").items()}  # type: ignore[attr-defined]
    assert loom["ai-loom.stitch"]["maxChars"] == {**loom["ai-loom.stitch"]["maxChars"], "type": "integer",
                                                   "default": 4000}  # DESIGN.md's default budget
    assert loom["ai-loom.list_contexts"]["limit"]["default"] == 50
    assert loom["ai-loom.list_contexts"]["offset"]["default"] == 0
    assert _tools("reverse-spec")["batch"].input_schema["required"] == []  # type: ignore[attr-defined]


def test_the_published_transform_keeps_the_rest_of_a_property() -> None:
    prop = {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None, "description": "size"}
    schema = input_schema("t", {"type": "object", "properties": {"n": prop, "m": {**prop, "default": 7}}})
    assert schema["properties"]["n"] == {"type": "integer", "minimum": 1, "description": "size; may be omitted"}
    assert schema["properties"]["m"] == {"type": "integer", "minimum": 1, "description": "size", "default": 7}
    assert schema["required"] == []
