"""The CodeNexus index: files, tags, relationships and a comment n-gram index, beside the events.

Rows are keyed by `file_no`, a small integer given in log order (so a rebuild from the log gives the
same numbers), which every other table references; results come out in `file_no` order, the order in
which files first got metadata, so each index range is already sorted and a page costs its size.

Comment search is a case-insensitive substring match with the same meaning on SQLite and PostgreSQL:
the projector lower-cases in Python and keeps every 1-, 2- and 3-character gram of the lower-cased
comment (whitespace excluded) in `nexus_comment_grams`; a query term of up to three characters is
answered by the gram table alone, a longer one by its trigrams and then checked on the stored text. It finds "启动" in
"主入口文件，包含应用启动逻辑", which word tokenizers (FTS5's default and trigram) do not.

Read-your-writes: `catch_up` is the one follower of pure projectors (projections/runner.py `follow`): each
page is applied in one transaction that locks the tracking row, so tools in several processes may call it
at once without a lease and no event is applied twice; a bad event found by replaying a failed page one
event at a time becomes a dead letter. The worker does not drive this projection (the tools and the MCP
server's log watcher keep it current). Version 2 is the version the index kept in `nexus_counts` before
projector versions were tracked (`legacy_version` adopts such an index instead of rebuilding it).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from eventsourcing.application import Application

from adapters.sql import Cursor, SqlDb
from domain.knowledge.file_meta import FileMeta, Tag
from projections.runner import follow
from projections.versions import ready, rebuild_from_scratch

NAME = "codenexus"
TABLES = ("nexus_files", "nexus_file_tags", "nexus_tags", "nexus_relationships", "nexus_rel_ends",
          "nexus_comment_grams", "nexus_counts")
_DDL = """
CREATE TABLE IF NOT EXISTS nexus_files (file_no INTEGER PRIMARY KEY, file_id TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL UNIQUE, tags TEXT NOT NULL, comment TEXT NOT NULL, comment_lower TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nexus_file_tags (tag TEXT NOT NULL, file_no INTEGER NOT NULL,
    PRIMARY KEY (tag, file_no)) {clustered};
CREATE TABLE IF NOT EXISTS nexus_tags (name TEXT PRIMARY KEY, description TEXT NOT NULL, color TEXT,
    file_count INTEGER NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nexus_relationships (source_no INTEGER NOT NULL, type TEXT NOT NULL,
    target_no INTEGER NOT NULL, description TEXT NOT NULL, origin TEXT NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (source_no, type, target_no)) {clustered};
CREATE INDEX IF NOT EXISTS nexus_relationships_target ON nexus_relationships (target_no, type, source_no);
CREATE TABLE IF NOT EXISTS nexus_rel_ends (type TEXT NOT NULL, file_no INTEGER NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (type, file_no)) {clustered};
CREATE TABLE IF NOT EXISTS nexus_comment_grams (gram TEXT NOT NULL, file_no INTEGER NOT NULL,
    PRIMARY KEY (gram, file_no)) {clustered};
CREATE TABLE IF NOT EXISTS nexus_counts (key TEXT PRIMARY KEY, n INTEGER NOT NULL)
"""
CHUNK = 400  # rows per multi-row statement


def schema(postgres: bool) -> str:
    """The DDL; on SQLite the link tables are clustered on their keys (WITHOUT ROWID)."""
    return _DDL.format(clustered="" if postgres else "WITHOUT ROWID")


def stamp(ts: datetime) -> str:
    return ts.isoformat()


def grams(text_lower: str) -> set[str]:
    """Every 1-, 2- and 3-character gram without whitespace: what the comment index holds."""
    found = {c for c in text_lower if not c.isspace()}
    found.update(a + b for a, b in itertools.pairwise(text_lower) if not a.isspace() and not b.isspace())
    found.update(text_lower[i:i + 3] for i in range(len(text_lower) - 2)
                 if not any(c.isspace() for c in text_lower[i:i + 3]))
    return found


class CodeNexusIndex:
    """The projector (the Runner protocol: name, has_effects, schema, effect, apply)."""

    name = NAME
    version = 2
    has_effects = False
    tables = TABLES

    def __init__(self, postgres: bool = False) -> None:
        self.schema = schema(postgres)

    @staticmethod
    def legacy_version(cur: Cursor) -> int:
        """The version an index built before tracked versions says it has (its own row in nexus_counts)."""
        row = cur.execute("SELECT n FROM nexus_counts WHERE key = 'schema'").fetchone()
        return int(row[0]) if row else 0

    def effect(self, event: Any) -> None:
        return None

    def apply(self, event: Any, cur: Cursor) -> None:
        if isinstance(event, FileMeta.Event):
            self._file_event(event, cur)
        elif isinstance(event, Tag.Defined | Tag.Described):
            cur.execute("INSERT INTO nexus_tags (name, description, color, file_count, created_at) "
                        "VALUES (?, ?, ?, 0, ?) ON CONFLICT (name) DO UPDATE SET description = excluded.description, "
                        "color = excluded.color", (event.name, event.description, event.color,
                                                   stamp(event.timestamp)))

    def _file_event(self, event: Any, cur: Cursor) -> None:
        at = stamp(event.timestamp)
        if isinstance(event, FileMeta.Registered):
            _register(cur, str(event.originator_id), event.path, at)
            return
        file_no = _file_no(cur, str(event.originator_id))
        if file_no is None:
            raise LookupError(f"no file registered as {event.originator_id}")
        if isinstance(event, FileMeta.Tagged):
            _tag(cur, file_no, event.tags, at)
        elif isinstance(event, FileMeta.Untagged):
            _untag(cur, file_no, event.tags)
        elif isinstance(event, FileMeta.Commented):
            _comment(cur, file_no, event.comment)
        elif isinstance(event, FileMeta.RelationshipCreated):
            target = _file_no(cur, event.target_id)
            if target is None:  # the target registers in the same save; be tolerant of the order anyway
                target = _register(cur, event.target_id, event.target_path, at)
            _relate(cur, file_no, target, event.kind, event.description, event.origin, at)
        elif isinstance(event, FileMeta.RelationshipRemoved):
            target = _file_no(cur, event.target_id)
            if target is not None:
                _unrelate(cur, file_no, target, event.kind)
        elif isinstance(event, FileMeta.Moved):
            cur.execute("UPDATE nexus_files SET path = ? WHERE file_no = ?", (event.new_path, file_no))
        cur.execute("UPDATE nexus_files SET updated_at = ? WHERE file_no = ?", (at, file_no))


def _register(cur: Cursor, file_id: str, path: str, at: str) -> int:
    existing = _file_no(cur, file_id)
    if existing is not None:
        return existing
    file_no = int(cur.execute("SELECT COALESCE(MAX(file_no), 0) + 1 FROM nexus_files").fetchone()[0])
    cur.execute("INSERT INTO nexus_files (file_no, file_id, path, tags, comment, comment_lower, created_at, "
                "updated_at) VALUES (?, ?, ?, '[]', '', '', ?, ?)", (file_no, file_id, path, at, at))
    bump(cur, ["files"], 1)
    return file_no


def _file_no(cur: Cursor, file_id: str) -> int | None:
    row = cur.execute("SELECT file_no FROM nexus_files WHERE file_id = ?", (file_id,)).fetchone()
    return int(row[0]) if row else None


def _tag(cur: Cursor, file_no: int, tags: list[str], at: str) -> None:
    current = json.loads(cur.execute("SELECT tags FROM nexus_files WHERE file_no = ?", (file_no,)).fetchone()[0])
    for tag in tags:
        if tag in current:
            continue
        current.append(tag)
        cur.execute("INSERT INTO nexus_file_tags (tag, file_no) VALUES (?, ?)", (tag, file_no))
        cur.execute("INSERT INTO nexus_tags (name, description, color, file_count, created_at) "
                    "VALUES (?, '', NULL, 1, ?) ON CONFLICT (name) "
                    "DO UPDATE SET file_count = nexus_tags.file_count + 1", (tag, at))
    cur.execute("UPDATE nexus_files SET tags = ? WHERE file_no = ?", (json.dumps(current, ensure_ascii=False), file_no))


def _untag(cur: Cursor, file_no: int, tags: list[str]) -> None:
    current = json.loads(cur.execute("SELECT tags FROM nexus_files WHERE file_no = ?", (file_no,)).fetchone()[0])
    for tag in tags:
        if tag not in current:
            continue
        current.remove(tag)
        cur.execute("DELETE FROM nexus_file_tags WHERE tag = ? AND file_no = ?", (tag, file_no))
        cur.execute("UPDATE nexus_tags SET file_count = file_count - 1 WHERE name = ?", (tag,))
    cur.execute("UPDATE nexus_files SET tags = ? WHERE file_no = ?", (json.dumps(current, ensure_ascii=False), file_no))


def _comment(cur: Cursor, file_no: int, comment: str) -> None:
    old = cur.execute("SELECT comment_lower FROM nexus_files WHERE file_no = ?", (file_no,)).fetchone()[0]
    lower = comment.lower()
    before, after = grams(old), grams(lower)
    for chunk in _chunks(sorted(before - after)):
        cur.execute(f"DELETE FROM nexus_comment_grams WHERE file_no = ? AND gram IN ({', '.join('?' * len(chunk))})",
                    (file_no, *chunk))
    bump(cur, [f"gram:{g}" for g in sorted(before - after)], -1)
    insert_grams(cur, [(g, file_no) for g in sorted(after - before)])
    bump(cur, [f"gram:{g}" for g in sorted(after - before)], 1)
    cur.execute("UPDATE nexus_files SET comment = ?, comment_lower = ? WHERE file_no = ?", (comment, lower, file_no))


def insert_grams(cur: Cursor, rows: list[tuple[str, int]]) -> None:
    for chunk in _chunks(rows):
        cur.execute(f"INSERT INTO nexus_comment_grams (gram, file_no) VALUES {', '.join(['(?, ?)'] * len(chunk))}",
                    [v for row in chunk for v in row])


def bump(cur: Cursor, keys: list[str], delta: int) -> None:
    """Keep `nexus_counts` (files, files per relationship type, files per comment gram): the planner's
    estimates and the totals of single-index queries, read in O(1). A count that reaches 0 is removed."""
    for chunk in _chunks(keys):
        marks = ", ".join("?" * len(chunk))
        if delta > 0:
            cur.execute(f"INSERT INTO nexus_counts (key, n) VALUES {', '.join(['(?, ?)'] * len(chunk))} "
                        "ON CONFLICT (key) DO UPDATE SET n = nexus_counts.n + excluded.n",
                        [v for k in chunk for v in (k, delta)])
        else:
            cur.execute(f"UPDATE nexus_counts SET n = n + ? WHERE key IN ({marks})", (delta, *chunk))
            cur.execute(f"DELETE FROM nexus_counts WHERE n <= 0 AND key IN ({marks})", chunk)


def _chunks(items: list[Any]) -> Iterable[list[Any]]:
    for i in range(0, len(items), CHUNK):
        yield items[i:i + CHUNK]


def _relate(cur: Cursor, source: int, target: int, kind: str, description: str, origin: str, at: str) -> None:
    exists = cur.execute("SELECT 1 FROM nexus_relationships WHERE source_no = ? AND type = ? AND target_no = ?",
                         (source, kind, target)).fetchone()
    if exists:
        cur.execute("UPDATE nexus_relationships SET description = ?, origin = ?, created_at = ? "
                    "WHERE source_no = ? AND type = ? AND target_no = ?",
                    (description, origin, at, source, kind, target))
        return
    cur.execute("INSERT INTO nexus_relationships (source_no, type, target_no, description, origin, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)", (source, kind, target, description, origin, at))
    for end in {source, target}:
        if cur.execute("SELECT 1 FROM nexus_rel_ends WHERE type = ? AND file_no = ?", (kind, end)).fetchone():
            cur.execute("UPDATE nexus_rel_ends SET n = n + 1 WHERE type = ? AND file_no = ?", (kind, end))
        else:
            cur.execute("INSERT INTO nexus_rel_ends (type, file_no, n) VALUES (?, ?, 1)", (kind, end))
            bump(cur, [f"type:{kind}"], 1)


def _unrelate(cur: Cursor, source: int, target: int, kind: str) -> None:
    cur.execute("DELETE FROM nexus_relationships WHERE source_no = ? AND type = ? AND target_no = ?",
                (source, kind, target))
    if cur.rowcount:
        for end in {source, target}:
            cur.execute("UPDATE nexus_rel_ends SET n = n - 1 WHERE type = ? AND file_no = ?", (kind, end))
            cur.execute("DELETE FROM nexus_rel_ends WHERE type = ? AND file_no = ? AND n <= 0", (kind, end))
            if cur.rowcount:
                bump(cur, [f"type:{kind}"], -1)


# -- following the log ------------------------------------------------------------------------------
# The one follower of projections/runner.py, as every pure projector: `follow` under the tracking row's lock.


def ensure(views: SqlDb) -> CodeNexusIndex:
    """The index's tables in this version's shape (an index of another version is emptied, to be rebuilt)."""
    projector = CodeNexusIndex(views.postgres)
    ready(views, projector)
    return projector


def position(views: SqlDb) -> int:
    rows = views.query("SELECT position FROM projection_tracking WHERE name = ?", (NAME,))
    return int(rows[0][0]) if rows else 0


def catch_up(app: Application, views: SqlDb, limit: int = 1000) -> int:
    """Apply every event beyond the tracked position; returns how many were passed. Cheap when current."""
    return follow(app, views, CodeNexusIndex(views.postgres), limit)


def rebuild(app: Application, views: SqlDb) -> int:
    """Empty the tables and apply the whole log again (the tests compare its result with the live index)."""
    rebuild_from_scratch(views, ensure(views))
    return catch_up(app, views)


def dump(views: SqlDb) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, sorted: two indexes hold the same facts when their dumps are equal."""
    ensure(views)
    return {table: sorted(tuple(r) for r in views.query(f"SELECT * FROM {table}")) for table in TABLES}

