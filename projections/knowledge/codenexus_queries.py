"""Reads of the CodeNexus index: one file, its relationships, the tags, filtered queries, statistics.

`query` plans each call: it drives from the most selective filter (a file's relationships, the rarest
tag, the rarest comment gram, a relationship type, or all files), walks that index in `file_no` order
and checks the other filters per row, so a page of 20 costs about 20 probes and the count one index
range. Every list is bounded by its caller's limit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from adapters.sql import SqlDb
from projections.knowledge.codenexus import ensure

MAX_TERM_GRAMS = 6


@dataclass(frozen=True)
class FileRow:
    file_no: int
    file_id: str
    path: str
    tags: list[str]
    comment: str
    created_at: str
    updated_at: str


_FILE_COLUMNS = "file_no, file_id, path, tags, comment, created_at, updated_at"


def _file(row: Any) -> FileRow:
    return FileRow(int(row[0]), row[1], row[2], json.loads(row[3]), row[4], row[5], row[6])


def file_by_path(views: SqlDb, path: str) -> FileRow | None:
    ensure(views)
    rows = views.query(f"SELECT {_FILE_COLUMNS} FROM nexus_files WHERE path = ?", (path,))
    return _file(rows[0]) if rows else None


def files_by_no(views: SqlDb, numbers: list[int]) -> dict[int, FileRow]:
    if not numbers:
        return {}
    marks = ", ".join("?" * len(numbers))
    return {int(r[0]): _file(r) for r in views.query(
        f"SELECT {_FILE_COLUMNS} FROM nexus_files WHERE file_no IN ({marks})", numbers)}


def relationships(views: SqlDb, file_no: int, direction: str, limit: int) -> tuple[list[dict[str, Any]], int]:
    """Outgoing (`direction="out"`: this file is the source) or incoming ones, with the total count."""
    mine, other = ("source_no", "target_no") if direction == "out" else ("target_no", "source_no")
    rows = views.query(
        f"SELECT f.path, r.type, r.description, r.origin, r.created_at FROM nexus_relationships r "
        f"JOIN nexus_files f ON f.file_no = r.{other} WHERE r.{mine} = ? ORDER BY r.type, f.path LIMIT ?",
        (file_no, limit))
    total = views.query(f"SELECT COUNT(*) FROM nexus_relationships WHERE {mine} = ?", (file_no,))[0][0]
    key = "target" if direction == "out" else "source"
    found = [{key: r[0], "type": r[1], "description": r[2], "origin": r[3], "created_at": r[4]} for r in rows]
    return found, int(total)


def relationship_created(views: SqlDb, source: str, target: str, kind: str) -> str | None:
    rows = views.query("SELECT r.created_at FROM nexus_relationships r JOIN nexus_files s ON s.file_no = r.source_no "
                       "JOIN nexus_files t ON t.file_no = r.target_no WHERE s.path = ? AND t.path = ? AND r.type = ?",
                       (source, target, kind))
    return str(rows[0][0]) if rows else None


def tags(views: SqlDb, limit: int) -> tuple[list[dict[str, Any]], int]:
    """Tags in use or described, most used first."""
    ensure(views)
    where = "WHERE file_count > 0 OR description <> '' OR color IS NOT NULL"
    rows = views.query(f"SELECT name, description, color, file_count, created_at FROM nexus_tags {where} "
                       "ORDER BY file_count DESC, name LIMIT ?", (limit,))
    total = views.query(f"SELECT COUNT(*) FROM nexus_tags {where}")[0][0]
    return [{"name": r[0], "description": r[1], "color": r[2], "file_count": int(r[3]), "created_at": r[4]}
            for r in rows], int(total)


@dataclass
class Filters:
    tags: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)  # lower-cased comment terms, each must be contained
    related_no: int | None = None
    relationship_type: str | None = None


@dataclass
class _Plan:
    driver: str
    driver_params: list[Any]
    estimate: int | None  # how many rows the driver yields (exact), when known
    conditions: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)


@dataclass
class Page:
    rows: list[FileRow]
    total: int
    exact: bool = True  # False: `total` extrapolated from the first SCAN_CAP rows of a long driving index


SCAN_CAP = 500  # a count that needs per-row checks examines at most this many rows of the driving index


def query(views: SqlDb, filters: Filters, limit: int, offset: int) -> Page:
    """One page of matching files (in `file_no` order) and how many match in all."""
    ensure(views)
    plan = _plan(views, filters)
    where = f"WHERE {' AND '.join(plan.conditions)}" if plan.conditions else ""
    base = f"FROM {plan.driver} d {where}"
    params = (*plan.driver_params, *plan.params)
    exact = True
    if not plan.conditions and plan.estimate is not None:
        total = plan.estimate
    elif plan.estimate is None or plan.estimate <= SCAN_CAP:
        total = int(views.query(f"SELECT COUNT(*) {base}", params)[0][0])
    else:
        sampled = int(views.query(f"SELECT COUNT(*) FROM (SELECT d.file_no FROM {plan.driver} d ORDER BY d.file_no "
                                  f"LIMIT {SCAN_CAP}) d {where}", params)[0][0])
        total, exact = round(sampled * plan.estimate / SCAN_CAP), False
    if exact and offset >= total:
        return Page([], total)
    numbers = [int(r[0]) for r in views.query(f"SELECT d.file_no {base} ORDER BY d.file_no LIMIT ? OFFSET ?",
                                                (*params, limit, offset))]
    if not exact and numbers and len(numbers) < limit:  # the last page is reached: the count is known after all
        total, exact = offset + len(numbers), True
    elif not exact and not numbers:  # past the end: fewer than `offset` match
        total = min(total, offset)
    found = files_by_no(views, numbers)
    return Page([found[n] for n in numbers if n in found], max(total, offset + len(numbers)), exact)


def _related_set(kind: str | None) -> str:
    typed = " AND type = ?" if kind else ""
    return (f"SELECT target_no AS file_no FROM nexus_relationships WHERE source_no = ?{typed} "
            f"UNION SELECT source_no FROM nexus_relationships WHERE target_no = ?{typed}")


def _counts(views: SqlDb, keys: list[str]) -> dict[str, int]:
    if not keys:
        return {}
    marks = ", ".join("?" * len(keys))
    found = {k: int(n) for k, n in views.query(f"SELECT key, n FROM nexus_counts WHERE key IN ({marks})", keys)}
    return {k: found.get(k, 0) for k in keys}


def _plan(views: SqlDb, f: Filters) -> _Plan:
    # (estimate, exact, driver, driver params, condition, condition params)
    options: list[tuple[int, bool, str, list[Any], str, list[Any]]] = []
    if f.related_no is not None:
        sql = _related_set(f.relationship_type)
        half: list[Any] = [f.related_no, f.relationship_type] if f.relationship_type else [f.related_no]
        both = half + half
        degree = views.query("SELECT COALESCE(SUM(n), 0) FROM nexus_rel_ends WHERE file_no = ?", (f.related_no,))
        options.append((int(degree[0][0]), False, f"({sql})", both, f"d.file_no IN ({sql})", both))
    elif f.relationship_type:
        count = _counts(views, [f"type:{f.relationship_type}"])[f"type:{f.relationship_type}"]
        options.append((count, True, "(SELECT file_no FROM nexus_rel_ends WHERE type = ?)", [f.relationship_type],
                        "EXISTS (SELECT 1 FROM nexus_rel_ends x WHERE x.type = ? AND x.file_no = d.file_no)",
                        [f.relationship_type]))
    if f.tags:
        marks = ", ".join("?" * len(f.tags))
        counts = dict(views.query(f"SELECT name, file_count FROM nexus_tags WHERE name IN ({marks})", f.tags))
        for tag in f.tags:
            options.append((int(counts.get(tag, 0)), True, "(SELECT file_no FROM nexus_file_tags WHERE tag = ?)",
                            [tag], "EXISTS (SELECT 1 FROM nexus_file_tags x WHERE x.tag = ? AND x.file_no = d.file_no)",
                            [tag]))
    contains = "strpos(x.comment_lower, ?) > 0" if views.postgres else "instr(x.comment_lower, ?) > 0"
    verify: list[tuple[str, list[Any]]] = []
    term_grams = {term: _term_grams(term) for term in f.terms}
    gram_counts = _counts(views, sorted({f"gram:{g}" for gs in term_grams.values() for g in gs}))
    for term, pieces in term_grams.items():
        for gram in pieces:
            options.append((gram_counts[f"gram:{gram}"], True,
                            "(SELECT file_no FROM nexus_comment_grams WHERE gram = ?)", [gram],
                            "EXISTS (SELECT 1 FROM nexus_comment_grams x WHERE x.gram = ? AND x.file_no = d.file_no)",
                            [gram]))
        if len(term) > 3:
            verify.append((f"EXISTS (SELECT 1 FROM nexus_files x WHERE x.file_no = d.file_no AND {contains})", [term]))
    if not options:
        files = _counts(views, ["files"])["files"]
        return _Plan("nexus_files", [], files, [c for c, _ in verify], [p for _, ps in verify for p in ps])
    options.sort(key=lambda o: o[0])
    best = options[0]
    plan = _Plan(best[2], best[3], best[0] if best[1] else None)
    for _, _, _, _, condition, params in options[1:]:
        plan.conditions.append(condition)
        plan.params.extend(params)
    for condition, params in verify:
        plan.conditions.append(condition)
        plan.params.extend(params)
    return plan


def _term_grams(term: str) -> list[str]:
    """The grams that must all be present for `term` to be a substring (exact up to 3 characters)."""
    if len(term) <= 3:
        return [term]
    triples = list(dict.fromkeys(term[i:i + 3] for i in range(len(term) - 2)))
    if len(triples) <= MAX_TERM_GRAMS:
        return triples
    step = (len(triples) - 1) / (MAX_TERM_GRAMS - 1)
    return list(dict.fromkeys(triples[round(i * step)] for i in range(MAX_TERM_GRAMS)))


def relation_kinds(views: SqlDb, file_no: int, others: list[int]) -> dict[int, list[tuple[str, str]]]:
    """For each of `others`: the (direction, type) pairs linking it with `file_no` ("out": file_no → other)."""
    if not others:
        return {}
    marks = ", ".join("?" * len(others))
    found: dict[int, list[tuple[str, str]]] = {}
    for r in views.query(f"SELECT target_no, type FROM nexus_relationships WHERE source_no = ? AND target_no IN "
                         f"({marks}) ORDER BY type", (file_no, *others)):
        found.setdefault(int(r[0]), []).append(("out", r[1]))
    for r in views.query(f"SELECT source_no, type FROM nexus_relationships WHERE target_no = ? AND source_no IN "
                         f"({marks}) ORDER BY type", (file_no, *others)):
        found.setdefault(int(r[0]), []).append(("in", r[1]))
    return found


def scope_stats(views: SqlDb, prefix: str | None) -> dict[str, Any]:
    """Files, relationships and tags under a path prefix (None: the whole project), for the prompts."""
    ensure(views)
    if prefix is None:
        files = views.query("SELECT file_no, path, tags FROM nexus_files")
    else:
        files = views.query("SELECT file_no, path, tags FROM nexus_files WHERE path = ? OR substr(path, 1, ?) = ?",
                            (prefix, len(prefix) + 1, prefix.rstrip("/") + "/"))
    inside = {int(r[0]): r[1] for r in files}
    rels = [(int(s), int(t), k) for s, t, k in views.query("SELECT source_no, target_no, type FROM nexus_relationships")
            if int(s) in inside or int(t) in inside]
    tag_counts: dict[str, int] = {}
    for r in files:
        for tag in json.loads(r[2]):
            tag_counts[tag] = tag_counts.get(tag, 0) + 1
    fan_out: dict[int, int] = {}
    fan_in: dict[int, int] = {}
    for s, t, _ in rels:
        fan_out[s] = fan_out.get(s, 0) + 1
        fan_in[t] = fan_in.get(t, 0) + 1
    paths = dict(inside)
    missing = [n for s, t, _ in rels for n in (s, t) if n not in paths]
    paths.update({n: row.path for n, row in files_by_no(views, sorted(set(missing))[:1000]).items()})
    return {"files": inside, "relationships": rels, "tags": tag_counts, "fan_out": fan_out, "fan_in": fan_in,
            "paths": paths}
