"""The annotation store the ai-loom tools and REST routes read: one row per annotation, rebuilt from the
log identically (on SQLite and PostgreSQL).

A row keeps the seed's Annotation view as the aggregate stood after the event, which never holds a
secret annotation's comment or quoted text (the log holds them sealed); ordered by priority, file, line.
A pure projector (projections/runner.py): the tools catch it up with `follow` before they read.
"""

from __future__ import annotations

import json
from typing import Any

from eventsourcing.application import Application

from adapters.sql import Cursor, SqlDb
from domain.knowledge.annotation import Annotation
from projections.versions import ready

SCHEMA = """
CREATE TABLE IF NOT EXISTS loom_annotations (id TEXT PRIMARY KEY, file_path TEXT NOT NULL, start_line INTEGER NOT NULL,
    priority TEXT NOT NULL, sensitivity TEXT NOT NULL, deleted INTEGER NOT NULL, updated_at TEXT NOT NULL,
    view TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS loom_annotations_order ON loom_annotations (deleted, priority, file_path, start_line, id);
CREATE INDEX IF NOT EXISTS loom_annotations_file ON loom_annotations (file_path, deleted, start_line);
"""
ORDER = "ORDER BY priority, file_path, start_line, id"


class AnnotationIndex:
    name = "loom_annotations"
    version = 1
    has_effects = False
    schema = SCHEMA
    tables = ("loom_annotations",)

    def __init__(self, app: Application) -> None:
        self.app = app

    def effect(self, event: Any) -> None:
        return None

    def apply(self, event: Any, cur: Cursor) -> None:
        if not isinstance(event, Annotation.Event):
            return
        annotation: Annotation = self.app.repository.get(event.originator_id, version=event.originator_version)
        view = annotation.view()  # a secret one's comment is None here, and its quote is never in a view
        cur.execute("INSERT INTO loom_annotations (id, file_path, start_line, priority, sensitivity, deleted, "
                    "updated_at, view) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                    "file_path = excluded.file_path, start_line = excluded.start_line, priority = excluded.priority, "
                    "sensitivity = excluded.sensitivity, deleted = excluded.deleted, updated_at = excluded.updated_at, "
                    "view = excluded.view",
                    (view["id"], view["filePath"], view["startLine"], view["priority"], view["sensitivity"],
                     int(annotation.deleted), view["updatedAt"], json.dumps(view, sort_keys=True)))


def page(views: SqlDb, limit: int, offset: int) -> tuple[list[dict[str, Any]], bool]:
    """Live annotations in stitch's order; and whether more follow."""
    ready(views, AnnotationIndex)
    rows = views.query(f"SELECT view FROM loom_annotations WHERE deleted = 0 {ORDER} LIMIT ? OFFSET ?",
                       (limit + 1, offset))
    return [json.loads(r[0]) for r in rows[:limit]], len(rows) > limit


def for_file(views: SqlDb, path: str, limit: int) -> list[dict[str, Any]]:
    """One file's live annotations by line (the web page's file view), at most `limit`."""
    ready(views, AnnotationIndex)
    rows = views.query("SELECT view FROM loom_annotations WHERE file_path = ? AND deleted = 0 "
                       "ORDER BY start_line, priority, id LIMIT ?", (path, limit))
    return [json.loads(r[0]) for r in rows]


def ids(views: SqlDb, limit: int) -> list[str]:
    ready(views, AnnotationIndex)
    return [r[0] for r in views.query(f"SELECT id FROM loom_annotations WHERE deleted = 0 {ORDER} LIMIT ?", (limit,))]


def dump(views: SqlDb) -> list[tuple[Any, ...]]:
    ready(views, AnnotationIndex)
    return [tuple(r) for r in views.query(f"SELECT id, deleted, view FROM loom_annotations {ORDER}")]


def ids_by_file(views: SqlDb) -> dict[str, list[str]]:
    """Live annotations' ids grouped by file (what the worker's re-anchoring walks file by file)."""
    ready(views, AnnotationIndex)
    grouped: dict[str, list[str]] = {}
    for ann_id, path in views.query(f"SELECT id, file_path FROM loom_annotations WHERE deleted = 0 {ORDER}"):
        grouped.setdefault(path, []).append(ann_id)
    return grouped
