"""docs/tools.md is generated from the tools' declarations (mcp_tools/reference.py): the committed page is the one
the declarations render, so the reference cannot drift from what `tools/list` publishes, and it names every tool
of every profile with every argument and every answer field."""

from __future__ import annotations

import re

from mcp_tools import reference
from mcp_tools.catalog import PROFILES
from mcp_tools.manifest import build


def test_the_committed_tool_reference_is_the_generated_one() -> None:
    committed = reference.PAGE.read_text(encoding="utf-8")
    assert committed == reference.render(), f"docs/tools.md is stale: run `{reference.COMMAND}`"


def test_the_reference_names_every_tool_of_every_profile_with_its_arguments_and_fields() -> None:
    page = reference.PAGE.read_text(encoding="utf-8")
    sections = dict(re.findall(r"^### `([^`]+)`\n(.*?)(?=^##|\Z)", page, re.MULTILINE | re.DOTALL))
    entries = build()
    assert set(sections) == {entry.name for entry in entries}
    for entry in entries:
        section = sections[entry.name]
        listed = entry.listed.model_dump(by_alias=True, mode="json", exclude_none=True)
        for profile in entry.profiles:
            assert profile in PROFILES and f"`{profile}`" in section.split("\n\n")[1], (entry.name, profile)
        for argument in listed["inputSchema"].get("properties", {}):
            assert f"- `{argument}` (" in section, (entry.name, argument)
        for path, *_ in reference.fields(reference.answer_schema(entry.name, listed)):
            assert f"- `{path}` (" in section, (entry.name, path)


def test_the_types_say_the_json_type_with_its_bounds() -> None:
    defs = {"Item": {"type": "object", "properties": {"x": {"type": "integer"}}}}
    assert reference._type({"type": "integer", "minimum": 1, "maximum": 100}, {}) == "integer, 1 to 100"
    assert reference._type({"type": "array", "items": {"$ref": "#/$defs/Item"}}, defs) == "array of object"
    assert reference._type({"anyOf": [{"type": "string"}, {"type": "null"}]}, {}) == "string or null"
    assert reference._type({"enum": ["a", "b"], "type": "string"}, {}) == 'one of `"a"`, `"b"`'
    assert list(reference.fields({"properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
                                  "required": ["items"], "$defs": defs})) == [
        ("items", "array of object", "required", ""), ("items[].x", "integer", "optional", "")]
    assert reference._text("writes specs/<NNN-slug>/ and `<kept>`") == r"writes specs/\<NNN-slug>/ and `<kept>`"
