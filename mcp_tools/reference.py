"""The tool reference (docs/tools.md), rendered from the declarations: every tool of every profile with its
description, its arguments and its answer's fields, as tools/list publishes them (`mcp_tools.manifest.build`,
the same schemas a client receives). Nothing in it is written by hand, so it cannot drift from the code:
tests/unit/test_tool_reference.py fails when the committed page differs from what this module renders.

    .venv/bin/python -m mcp_tools.reference            # rewrite docs/tools.md
    .venv/bin/python -m mcp_tools.reference --check    # exit 1 when docs/tools.md is stale
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcp_tools.catalog import HANDLER_MODULES, PROFILES

PAGE = Path(__file__).resolve().parent.parent / "docs" / "tools.md"
COMMAND = ".venv/bin/python -m mcp_tools.reference"

# The families in the order the page shows them: (module prefix, heading, the page that explains the family).
FAMILIES: tuple[tuple[str, str, str], ...] = (
    ("mcp_tools.lifecycle.", "The bounty lifecycle (seed 001)", "lifecycle.md"),
    ("mcp_tools.add_demo", "add (seed 003)", "mcp.md"),
    ("mcp_tools.reverse_spec.", "reverse-spec (seed 000)", "reverse-spec.md"),
    ("mcp_tools.codenexus.", "CodeNexus (seed 002)", "codenexus.md"),
    ("mcp_tools.ai_loom.", "ai-loom (seed 004)", "ai-loom.md"),
)
NONE = "—"  # a cell with nothing to say


def render() -> str:
    """The whole page."""
    from mcp_tools.catalog import declared
    from mcp_tools.manifest import build

    entries = {entry.name: entry for entry in build()}
    decls = declared()
    missing = [name for name in decls if _family(entries[name].module) is None]
    if missing:
        raise RuntimeError(f"tools of no family in mcp_tools.reference.FAMILIES: {missing}")
    # the page's order whatever order the families were imported in: family, declaring module, declaration
    order = {name: i for i, name in enumerate(decls)}
    ordered = sorted(decls, key=lambda name: (_family(entries[name].module), HANDLER_MODULES.index(
        entries[name].module), order[name]))
    lines = [
        "# Tool reference",
        "",
        "<!-- Generated from the tools' declarations by `" + COMMAND + "`: do not edit by hand. -->",
        "",
        "Every tool Code3 serves, as `tools/list` publishes it: its description, its arguments (the input schema)",
        "and the fields of its answer (the output schema, which every success's `structuredContent` follows).",
        "This page is generated from the declarations (`@tool` on each handler, `mcp_tools/catalog.py` for the",
        f"profiles) by `{COMMAND}`; `tests/unit/test_tool_reference.py` fails when it is",
        "stale. What a family does beyond its schemas, and how it fails, is on the family's own page, linked",
        "from each heading.",
        "",
        "## Profiles",
        "",
        "`code3 mcp --profile P` answers with these tools and this `serverInfo` (`code3 serve` serves `all`):",
        "",
    ]
    for profile, (server, version) in PROFILES.items():
        names = [name for name in ordered if profile in entries[name].profiles]
        shown = "every tool below" if profile == "all" else ", ".join(f"[`{name}`](#{slug(name)})" for name in names)
        lines.append(f"- `{profile}` (serverInfo `{server}` {version or 'with Code3’s version'}): {shown}")
    for family, (_, heading, page) in enumerate(FAMILIES):
        lines += ["", f"## {heading}", "", f"What these tools do beyond their schemas: [{page}]({page})."]
        for name in (name for name in ordered if _family(entries[name].module) == family):
            listed = entries[name].listed.model_dump(by_alias=True, mode="json", exclude_none=True)
            lines += _tool(listed, sorted(entries[name].profiles, key=list(PROFILES).index),
                           decls[name].render is not None, answer_schema(name, listed))
    return "\n".join(lines) + "\n"


def _family(module: str) -> int | None:
    """The index in FAMILIES of the family that declares tools in `module`."""
    return next((i for i, (prefix, _, _) in enumerate(FAMILIES) if module.startswith(prefix)), None)


def answer_schema(name: str, listed: dict[str, Any]) -> dict[str, Any]:
    """The schema of a tool's answer: its output schema, or for a tool whose seed answers text (TEXT_ANSWERS,
    no output schema) the schema of the JSON its text carries, from its declared answer type."""
    if "outputSchema" in listed:
        return dict(listed["outputSchema"])
    from typing import Annotated

    from mcp.server.mcpserver.tools import Tool
    from mcp.types import CallToolResult

    from mcp_tools.catalog import declared

    def answers() -> None:  # a function returning the answer type: the output schema the SDK derives for it
        raise NotImplementedError

    answers.__annotations__ = {"return": Annotated[CallToolResult, declared()[name].output_type]}
    return dict(Tool.from_function(answers).output_schema or {})


def _tool(listed: dict[str, Any], profiles: list[str], rendered: bool, output: dict[str, Any]) -> list[str]:
    hints = listed.get("annotations", {})
    flags = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
    lines = ["", f"### `{listed['name']}`", "", _text(listed.get("description", "")) or NONE, "",
             "Profiles: " + ", ".join(f"`{p}`" for p in profiles) + ". Annotations: "
             + ", ".join(f"`{flag}` {'true' if hints.get(flag) else 'false'}" for flag in flags) + ".", ""]
    schema = listed.get("inputSchema", {})
    required = set(schema.get("required", []))
    arguments = list((schema.get("properties") or {}).items())
    if arguments:
        lines += ["Arguments:", ""]
        for arg, prop in arguments:
            need = "required" if arg in required else \
                f"default `{json.dumps(prop['default'], ensure_ascii=False)}`" if "default" in prop else "optional"
            lines.append(_item(0, arg, f"{_type(prop, schema.get('$defs', {}))}, {need}",
                               _text(prop.get("description", ""))))
    else:
        lines.append("Arguments: none.")
    lines.append("")
    about = _paragraphs(output.get("description", ""))
    lines += ["Answer:", "", *about, *([""] if about else [])]
    if "outputSchema" not in listed:
        lines += ["Text only, as the seed defines it (no output schema, no `structuredContent`): "
                  + ("the text is written for people, from these values." if rendered else
                     "the text is the JSON of these fields."), ""]
    elif rendered:
        lines += ["The text content is written for people; `structuredContent` carries these fields.", ""]
    for path, kind, need, text in fields(output):
        lines.append(_item(path.count("."), path, kind if need == "required" else f"{kind}, optional", text))
    return lines


def _item(depth: int, name: str, kind: str, text: str) -> str:
    """One argument or field as a list item (nested fields indented under their parent)."""
    return "  " * depth + f"- `{name}` ({kind})" + (f": {text}" if text else "")


def fields(schema: dict[str, Any], defs: dict[str, Any] | None = None, prefix: str = ""
           ) -> Iterator[tuple[str, str, str, str]]:
    """(dotted path, type, required or optional, description) for every field of an answer, nested ones after
    their parent (`paths.spec`; the items of a list of objects as `results[].file_path`)."""
    defs = schema.get("$defs", {}) if defs is None else defs
    required = set(schema.get("required", []))
    for name, prop in (schema.get("properties") or {}).items():
        path = prefix + name
        target = _object(prop, defs)
        text = _text(prop.get("description") or (target or {}).get("description", ""))
        yield path, _type(prop, defs), "required" if name in required else "optional", text
        if target is not None:
            yield from fields(target, defs, path + ".")
        elif (item := _object(prop.get("items") or {}, defs)) is not None:
            yield from fields(item, defs, path + "[].")


def _object(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any] | None:
    """The object schema `prop` refers to when it has fields of its own (directly, by `$ref` or nullable)."""
    for variant in [prop, *prop.get("anyOf", [])]:
        found = _resolve(variant, defs)
        if found.get("properties"):
            return found
    return None


def _resolve(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = prop.get("$ref")
    return defs[ref.rsplit("/", 1)[1]] if isinstance(ref, str) else prop


def _type(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    """A property's JSON type in words, with its bounds: `integer, 1 to 100`, `array of string`."""
    prop = {**_resolve(prop, defs), **{k: v for k, v in prop.items() if k != "$ref"}}
    if "anyOf" in prop:
        return " or ".join(_type(variant, defs) for variant in prop["anyOf"])
    if "enum" in prop:
        return "one of " + ", ".join(f"`{json.dumps(v, ensure_ascii=False)}`" for v in prop["enum"])
    kind = prop.get("type", "any")
    if kind == "array":
        kind = f"array of {_type(prop.get('items') or {}, defs)}"
    elif kind == "object" and isinstance(prop.get("additionalProperties"), dict):
        kind = f"object of {_type(prop['additionalProperties'], defs)}"
    bounds = []
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None and high is not None:
        bounds.append(f"{low} to {high}")
    elif low is not None:
        bounds.append(f"at least {low}")
    elif high is not None:
        bounds.append(f"at most {high}")
    for key, unit in (("minLength", "characters"), ("maxLength", "characters"), ("minItems", "items"),
                      ("maxItems", "items")):
        if key in prop:
            bounds.append(f"{'at least' if key.startswith('min') else 'at most'} {prop[key]} {unit}")
    if "pattern" in prop:
        bounds.append(f"matching `{prop['pattern']}`")
    return ", ".join([kind, *bounds])


def _text(text: str) -> str:
    """One line of Markdown: whitespace collapsed, and a `<` that would open an HTML tag escaped (outside code
    spans), so `specs/<NNN-slug>/` shows as written."""
    parts = " ".join(text.split()).split("`")
    return "`".join(re.sub(r"<(?=[A-Za-z/!?])", r"\\<", part) if i % 2 == 0 else part
                    for i, part in enumerate(parts))


def _paragraphs(text: str) -> list[str]:
    """A schema's description as Markdown paragraphs (its blank lines kept, its line breaks not)."""
    out: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        if paragraph.strip():
            out += [_text(paragraph), ""]
    return out[:-1]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped but `-` and `_`, spaces as `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is stale: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
