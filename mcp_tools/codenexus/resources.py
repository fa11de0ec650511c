"""The seed's resources, read from the CodeNexus index: a file's metadata, all tags, a file's
relationships (incoming and outgoing, always both). Every list is capped and says when it was."""

from __future__ import annotations

import hashlib
from typing import Any

from adapters.paths import PathRefused
from domain.knowledge.file_meta import default_color
from mcp_tools.codenexus.context import fresh, iso_z, known_path, project_paths
from mcp_tools.codenexus.errors import jsonrpc_errors
from mcp_tools.dialects import FILE_NOT_FOUND, nexus_error
from mcp_tools.services import Services
from projections.knowledge import codenexus_queries as index

MAX_LISTED = 200  # relationships per direction in a resource
MAX_TAGS = 1000


def _content_hash(s: Services, path: str) -> str | None:
    try:
        opened = project_paths(s).open_binary(path)
    except PathRefused:
        return None
    digest = hashlib.sha256()
    with opened as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def _row(s: Services, value: object) -> tuple[str, index.FileRow | None]:
    path = known_path(s, value)
    fresh(s)
    row = index.file_by_path(s.views, path)
    if row is None and not (s.project / path).is_file():
        raise nexus_error(FILE_NOT_FOUND, f"{path!r} does not exist and has no metadata")
    return path, row


def _plain(items: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return [{key: r[key], "type": r["type"], "description": r["description"], "origin": r["origin"]} for r in items]


@jsonrpc_errors
def file_metadata(s: Services, value: object) -> dict[str, Any]:
    path, row = _row(s, value)
    out, total = index.relationships(s.views, row.file_no, "out", MAX_LISTED) if row else ([], 0)
    found: dict[str, Any] = {"file_path": path, "hash": _content_hash(s, path), "tags": row.tags if row else [],
                             "comment": row.comment if row else "", "relationships": _plain(out, "target"),
                             "updated_at": iso_z(row.updated_at) if row else None}
    if total > len(out):
        found.update(relationships_truncated=True, relationships_total=total)
    return found


@jsonrpc_errors
def file_relationships(s: Services, value: object) -> dict[str, Any]:
    path, row = _row(s, value)
    out, n_out = index.relationships(s.views, row.file_no, "out", MAX_LISTED) if row else ([], 0)
    inc, n_in = index.relationships(s.views, row.file_no, "in", MAX_LISTED) if row else ([], 0)
    found: dict[str, Any] = {"file_path": path, "outgoing_relationships": _plain(out, "target"),
                             "incoming_relationships": _plain(inc, "source"),
                             "relationship_count": {"outgoing": n_out, "incoming": n_in, "total": n_out + n_in}}
    if n_out > len(out) or n_in > len(inc):
        found["truncated"] = True
    return found


@jsonrpc_errors
def all_tags(s: Services) -> dict[str, Any]:
    fresh(s)
    rows, total = index.tags(s.views, MAX_TAGS)
    listed = [{"name": r["name"], "description": r["description"], "color": r["color"] or default_color(r["name"]),
               "file_count": r["file_count"], "created_at": iso_z(r["created_at"])} for r in rows]
    found: dict[str, Any] = {"tags": listed, "total_count": total}
    if total > len(listed):
        found["truncated"] = True
    return found
