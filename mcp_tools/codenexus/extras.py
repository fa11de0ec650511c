"""The tools beside the seed's that users need: remove tags, remove a relationship, describe a tag."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from adapters.event_store import Change
from domain.knowledge.file_meta import (
    MAX_TAG_DESCRIPTION,
    RELATIONSHIP_TYPES,
    FileMeta,
    FilePath,
    MetaRefused,
    Tag,
    parse_color,
    parse_description,
    parse_relationship_type,
    parse_tag,
    parse_tags,
)
from mcp_tools.codenexus.answers import DescribeTagAnswer, RemoveRelationshipAnswer, RemoveTagAnswer
from mcp_tools.codenexus.arguments import PROFILES, FilePathArg, no_credential, seed_schema
from mcp_tools.codenexus.context import change_file, file_change, iso_z, known_path, locate, project_id, save
from mcp_tools.codenexus.errors import jsonrpc_errors
from mcp_tools.declare import tool
from mcp_tools.dialects import FILE_NOT_FOUND, nexus_error
from mcp_tools.services import Services


def _known_file(s: Services, value: object) -> tuple[str, FileMeta]:
    """A file that has metadata (it may have been deleted from disk since)."""
    path = known_path(s, value)
    lookup = s.store.get(FilePath, FilePath.create_id(project_id(s), path))
    meta = s.store.get(FileMeta, locate(s, path).file_id) if lookup is not None and lookup.file_id else None
    if meta is None:
        if (s.project / path).is_file():
            raise MetaRefused(f"{path} has no metadata yet", "add a tag, comment or relationship first")
        raise nexus_error(FILE_NOT_FOUND, f"{path!r} does not exist and has no metadata")
    return path, meta


@tool("remove_tag", profiles=PROFILES, destructive=True, idempotent=True, open_world=False)
@jsonrpc_errors
def remove_tag(s: Services, file_path: FilePathArg,
               tags: Annotated[list[str], Field(description="List of tags to remove",
                                                json_schema_extra={"minItems": 1})]) -> RemoveTagAnswer:
    """Remove one or more tags from a file (tags it does not have are ignored)"""
    unwanted = parse_tags(tags)
    path, _ = _known_file(s, file_path)
    meta, removed = change_file(s, path, lambda meta: meta.remove_tags(unwanted))
    assert meta is not None  # _known_file found it
    return {"success": True, "message": f"Removed {len(removed)} tags from {path}", "removed_tags": removed,
            "total_tags": len(meta.tags), "updated_at": iso_z(meta.modified_on.isoformat()) or ""}


@tool("remove_relationship", profiles=PROFILES, destructive=True, idempotent=True, open_world=False)
@jsonrpc_errors
def remove_relationship(
        s: Services,
        source_path: Annotated[str, Field(description="Source file path")],
        target_path: Annotated[str, Field(description="Target file path")],
        relationship_type: Annotated[str, Field(description="Type of relationship",
                                                json_schema_extra={"enum": list(RELATIONSHIP_TYPES)})],
) -> RemoveRelationshipAnswer:
    """Remove a relationship between two files (a person's or a derived one)"""
    kind = parse_relationship_type(relationship_type)
    source, _ = _known_file(s, source_path)
    target = known_path(s, target_path)
    removed = [False]

    def build() -> list[Any]:
        tgt = locate(s, target)
        return file_change(s, locate(s, source),
                           lambda meta: removed.__setitem__(0, meta.unrelate(str(tgt.file_id), kind)))

    save(s, build)
    message = (f"Removed the {kind} relationship from {source} to {target}" if removed[0]
               else f"{source} had no {kind} relationship to {target}: nothing to remove")
    return {"success": True, "message": message, "removed": removed[0]}


@tool("describe_tag", profiles=PROFILES, idempotent=True, open_world=False)
@jsonrpc_errors
def describe_tag(
        s: Services,
        tag: Annotated[str, Field(description="The tag (lower-case a-z, 0-9, '_' or '-', 2-50 characters)")],
        description: Annotated[str, Field(description="What the tag means",
                                          json_schema_extra={"maxLength": MAX_TAG_DESCRIPTION})],
        color: Annotated[str | None, *seed_schema({"type": "string", "pattern": "^#[0-9a-fA-F]{6}$",
                                                    "description": "Display colour as #rrggbb"})] = None,
) -> DescribeTagAnswer:
    """Give a tag a description and a colour (what the codenexus://tags resource shows)"""
    name = parse_tag(tag)
    text = no_credential(parse_description(description, MAX_TAG_DESCRIPTION), "description")
    given = parse_color(color) if color is not None else None
    pid = project_id(s)
    described: Tag = s.store.update_all(Change.step(Tag, Tag.create_id(pid, name), lambda t: t.describe(text, given),
                                                    create=lambda: Tag.define(pid, name, text, given)))[0]
    return {"success": True, "message": f"Described tag {name}", "name": name,
            "description": described.description, "color": described.color}
