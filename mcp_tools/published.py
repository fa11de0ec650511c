"""The input schema a client sees, derived from the one pydantic writes for a tool's signature.

Generic clients fill arguments from the published schema: the MCP Inspector CLI turns `--tool-arg
maxChars=800` into a number only when the property's type is `integer` or `number`, and sends the string
"800" for `anyOf: [{type: integer}, {type: null}]`, which the strict check then refuses. So an optional
argument (`X | None`) is published as its plain type `X`, with its default when it has a real one, and a
description that says it may be omitted when its default is None. The argument model is unchanged: it
still accepts an explicit null (the published schema is a subset of what runs, never a superset), and
still refuses "800" for an integer.

The exceptions are the arguments a seed types as `T | null` (NULLABLE): they keep `anyOf` with null.
Every schema says `required` (an empty list when nothing is), as seed 002's `query_files` does.
Applied once, in `mcp_tools.binding.sdk_tool`, which both the tools/list manifest and the running tool
come from.
"""

from __future__ import annotations

import copy
from typing import Any

# (tool, argument): typed `T | null` by a seed, published with anyOf-null and accepting an explicit null
NULLABLE: frozenset[tuple[str, str]] = frozenset({
    ("spec_mcp.specify", "feature_id"),  # seed 001: "feature_id": "string | null"
    ("spec_mcp.plan", "tech_constraints"),  # seed 001: "tech_constraints": "string | null"
})
OMITTED = "may be omitted"


def input_schema(tool: str, schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` (pydantic's, for `tool`'s arguments) as published: optional arguments as their plain type."""
    published = copy.deepcopy(schema)
    for name, prop in (published.get("properties") or {}).items():
        if (tool, name) not in NULLABLE:
            published["properties"][name] = _plain(prop)
    published.setdefault("required", [])
    return published


def _plain(prop: dict[str, Any]) -> dict[str, Any]:
    """`{anyOf: [X, {type: null}], default, …}` as X with the rest of the property's keywords; the default
    kept unless it is None (then the description says the argument may be omitted)."""
    variants = prop.get("anyOf")
    if not isinstance(variants, list) or len(variants) != 2 or {"type": "null"} not in variants:
        return prop
    (kept,) = [v for v in variants if v != {"type": "null"}]
    plain = {**{k: v for k, v in prop.items() if k != "anyOf"}, **kept}
    if "default" in plain and plain["default"] is None:
        del plain["default"]
        description = plain.get("description", "")
        if "omit" not in description.lower() and "optional" not in description.lower():
            plain["description"] = f"{description}; {OMITTED}" if description else OMITTED.capitalize()
    return plain


_DATA_KEYWORDS = frozenset({"default", "const", "enum", "examples"})


def untitled(schema: Any) -> Any:
    """`schema` without the `title` keyword pydantic writes on every schema ("Feature Id", "accept_taskArguments"):
    no seed's input schema has one, and each costs a model's context and a client's bytes for nothing the
    property's name does not say. A property *named* title (open_pr's) is kept. Applied in
    `mcp_tools.binding.sdk_tool`, so the listing and the tool that runs publish the same schema."""
    if isinstance(schema, list):
        return [untitled(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, dict):
            out[key] = {name: untitled(sub) for name, sub in value.items()}
        elif key in _DATA_KEYWORDS:
            out[key] = value
        else:
            out[key] = untitled(value)
    return out
