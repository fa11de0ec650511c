"""The seed's four tools: add_tag, add_comment, create_relationship, query_files.

Input schemas are the seed's (names, types, descriptions, enum, minItems, maxLength, limit 1-100
default 20); the constraints are checked by the domain, not by the argument parser, so a breach is the
seed's -32002 Validation failed rather than a generic argument error. Each write is get → change → save
in one unit of work and records nothing when repeated.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from pydantic import Field

from domain.knowledge.file_meta import (
    MAX_COMMENT,
    MAX_DESCRIPTION,
    RELATIONSHIP_TYPES,
    MetaRefused,
    parse_comment,
    parse_description,
    parse_relationship_type,
    parse_tags,
)
from mcp_tools import answer_size
from mcp_tools.codenexus.answers import (
    AddCommentAnswer,
    AddTagAnswer,
    CreateRelationshipAnswer,
    QueryFilesAnswer,
    QueryResult,
)
from mcp_tools.codenexus.arguments import PROFILES, FilePathArg, no_credential, seed_schema
from mcp_tools.codenexus.context import (
    change_file,
    existing_file,
    file_change,
    fresh,
    iso_z,
    known_path,
    locate,
    save,
)
from mcp_tools.codenexus.errors import jsonrpc_errors
from mcp_tools.declare import tool
from mcp_tools.dialects import FILE_NOT_FOUND, nexus_error
from mcp_tools.services import Services
from projections.knowledge import codenexus_queries as index

MAX_QUERY = 500
MAX_TERMS = 10
MAX_OFFSET = 1_000_000


@tool("add_tag", profiles=PROFILES, idempotent=True, open_world=False)
@jsonrpc_errors
def add_tag(s: Services, file_path: FilePathArg,
            tags: Annotated[list[str], Field(description="List of tags to add", json_schema_extra={"minItems": 1})]
            ) -> AddTagAnswer:
    """Add one or more tags to a file"""
    wanted = parse_tags(tags)
    path = existing_file(s, file_path)
    meta, added = change_file(s, path, lambda meta: meta.add_tags(wanted))
    assert meta is not None  # tags were given: the file has metadata now
    message = (f"Successfully added {len(added)} tags to {path}" if added
               else f"{path} already has {', '.join(wanted)}: nothing to add")
    return {"success": True, "message": message, "added_tags": added, "total_tags": len(meta.tags),
            "updated_at": iso_z(meta.modified_on.isoformat()) or ""}


@tool("add_comment", profiles=PROFILES, idempotent=True, open_world=False)
@jsonrpc_errors
def add_comment(s: Services, file_path: FilePathArg,
                comment: Annotated[str, Field(description="Comment text (supports Markdown)",
                                              json_schema_extra={"maxLength": MAX_COMMENT})]) -> AddCommentAnswer:
    """Add or update comment for a file"""
    text = no_credential(parse_comment(comment), "comment")
    path = existing_file(s, file_path)
    meta, changed = change_file(s, path, lambda meta: meta.set_comment(text))
    updated = iso_z(meta.modified_on.isoformat()) if meta is not None else None
    message = f"Successfully updated comment for {path}" if changed else f"Comment of {path} unchanged"
    return {"success": True, "message": message, "comment_length": len(text), "updated_at": updated or ""}


@tool("create_relationship", profiles=PROFILES, idempotent=True, open_world=False)
@jsonrpc_errors
def create_relationship(
        s: Services,
        source_path: Annotated[str, Field(description="Source file path")],
        target_path: Annotated[str, Field(description="Target file path")],
        relationship_type: Annotated[str, Field(description="Type of relationship",
                                                json_schema_extra={"enum": list(RELATIONSHIP_TYPES)})],
        description: Annotated[str, *seed_schema({"type": "string", "description":
                                                   "Optional description of the relationship",
                                                   "maxLength": MAX_DESCRIPTION})] = "",
) -> CreateRelationshipAnswer:
    """Create a relationship between two files"""
    kind = parse_relationship_type(relationship_type)
    text = no_credential(parse_description(description), "description")
    source, target = existing_file(s, source_path), existing_file(s, target_path)
    if source == target:
        raise MetaRefused(f"{source} cannot be related to itself", "pick two different files")

    def build() -> list[Any]:
        src, tgt = locate(s, source), locate(s, target)
        return [*file_change(s, tgt, lambda meta: None, register=True),
                *file_change(s, src, lambda meta: meta.relate(str(tgt.file_id), target, kind, text))]

    save(s, build)
    fresh(s)
    created = iso_z(index.relationship_created(s.views, source, target, kind))
    return {"success": True, "message": f"Successfully created relationship between {source} and {target}",
            "relationship": {"source": source, "target": target, "type": kind, "description": text,
                             "origin": "manual"},
            "created_at": created or ""}


@tool("query_files", profiles=PROFILES, read_only=True, open_world=False)
@jsonrpc_errors
def query_files(
        s: Services,
        tags: Annotated[list[str] | None, *seed_schema({"type": "array", "items": {"type": "string"},
                                                         "description": "Filter by tags (AND logic)"})] = None,
        comment_contains: Annotated[str | None, *seed_schema({
            "type": "string", "description": "Filter by comment content (full-text search)"})] = None,
        related_to: Annotated[str | None, *seed_schema({
            "type": "string", "description": "Find files related to this file"})] = None,
        relationship_type: Annotated[str | None, *seed_schema({
            "type": "string", "enum": list(RELATIONSHIP_TYPES), "description": "Filter by relationship type"})] = None,
        limit: Annotated[int, Field(description="Maximum number of results",
                                    json_schema_extra={"minimum": 1, "maximum": 100})] = 20,
        offset: Annotated[int, Field(description="Skip this many results (paging; 0 for the first page)",
                                     json_schema_extra={"minimum": 0})] = 0,
) -> QueryFilesAnswer:
    """Query files by tags, comments, or relationships"""
    started = time.perf_counter()
    filters = index.Filters(tags=parse_tags(tags, at_least_one=False) if tags is not None else [])
    if comment_contains is not None:
        if not isinstance(comment_contains, str) or len(comment_contains) > MAX_QUERY:
            raise MetaRefused(f"comment_contains is longer than {MAX_QUERY} characters", "search for fewer words")
        filters.terms = list(dict.fromkeys(comment_contains.lower().split()))
        if len(filters.terms) > MAX_TERMS:
            raise MetaRefused(f"comment_contains has more than {MAX_TERMS} words", "search for fewer words")
    if relationship_type is not None:
        filters.relationship_type = parse_relationship_type(relationship_type)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        raise MetaRefused(f"limit must be an integer from 1 to 100, not {limit!r}", "pass a limit from 1 to 100")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
        raise MetaRefused(f"offset must be an integer from 0 to {MAX_OFFSET}", "pass next_offset from the last page")
    related = known_path(s, related_to) if related_to is not None else None
    fresh(s)
    page = index.Page([], 0)
    anchor = None
    if related is not None:
        anchor = index.file_by_path(s.views, related)
        if anchor is None and not (s.project / related).is_file():
            raise nexus_error(FILE_NOT_FOUND, f"{related!r} does not exist and has no metadata")
    if related is None or anchor is not None:
        filters.related_no = anchor.file_no if anchor is not None else None
        page = index.query(s.views, filters, limit, offset)
    rows = page.rows
    reasons = _reasons(s, filters, comment_contains, anchor, rows)
    results: list[QueryResult] = [{"file_path": r.path, "tags": r.tags, "comment": r.comment,
                                   "match_reason": reasons[r.file_no]} for r in rows]
    answer: QueryFilesAnswer = {"success": True, "results": results, "total_count": page.total,
                                "query_time_ms": round((time.perf_counter() - started) * 1000, 3)}
    if not page.exact:
        answer["total_count_exact"] = False
    if offset + len(rows) < page.total:
        answer["next_offset"] = offset + len(rows)
    return answer_size.cut_page(answer, "results", offset, next_key="next_offset")


def _reasons(s: Services, f: index.Filters, query: str | None, anchor: index.FileRow | None,
             rows: list[index.FileRow]) -> dict[int, str]:
    common = []
    if f.tags:
        common.append(f"tags: {', '.join(f.tags)}")
    if f.terms:
        common.append(f"comment contains: {(query or '').strip()}")
    links = index.relation_kinds(s.views, anchor.file_no, [r.file_no for r in rows]) if anchor else {}
    reasons = {}
    for row in rows:
        parts = list(common)
        if anchor is not None:
            parts.extend(f"{kind} {anchor.path}" if direction == "in" else f"{anchor.path} {kind} this file"
                         for direction, kind in links.get(row.file_no, []))
        elif f.relationship_type:
            parts.append(f"has {f.relationship_type} relationships")
        reasons[row.file_no] = "; ".join(parts) or "has metadata (no filter)"
    return reasons
