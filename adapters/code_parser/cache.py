"""A stat-keyed skeleton cache: (path, size, mtime_ns) → skeleton or skip reason; optionally kept on disk.

In memory it is a dict; `SkeletonCache(path)` also loads from and `save()`s to a SQLite file the caller
chooses (the parser never picks a location itself: the composition root puts it in the state directory).
Each entry remembers the file listing its imports were resolved against (`listing`): a scan with the same
listing uses it as is, another one re-resolves the imports (cheap) without parsing again.

Loading trusts the file's shape (it is our own output, in the project's state directory): rows are read
with `json.loads` and built without validation (see `_fast`), ~10x faster than validating them; a row that
does not even have that shape is dropped.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from contextlib import closing
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from domain.knowledge.skeleton import Export, FileSkeleton, Import


@dataclass(slots=True)
class Entry:
    size: int
    mtime_ns: int
    skeleton: FileSkeleton | str  # a skeleton, or the reason the file was skipped
    listing: str | None = None  # fingerprint of the file listing the imports were resolved against


M = TypeVar("M", bound=BaseModel)


def _fast(cls: type[M], values: dict[str, Any]) -> M:
    """What `cls.model_construct(**values)` builds, for a complete set of fields, without its per-call
    overhead (the cache holds tens of thousands of exports)."""
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", set(values))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


def _export(d: dict[str, Any]) -> Export:
    return _fast(Export, {"name": d["name"], "kind": d["kind"], "signature": d.get("signature", ""),
                          "doc": d.get("doc"), "start_line": d["start_line"], "end_line": d["end_line"],
                          "members": [_export(m) for m in d.get("members", ())]})


def _import(d: dict[str, Any]) -> Import:
    return _fast(Import, {"specifier": d["specifier"], "relative": d.get("relative", False),
                          "resolved": d.get("resolved"), "names": list(d.get("names", ())), "line": d.get("line")})


def _file(d: dict[str, Any]) -> FileSkeleton:
    return _fast(FileSkeleton, {"path": d["path"], "language": d["language"], "lines": d["lines"],
                                "sha256": d["sha256"], "exports": [_export(e) for e in d.get("exports", ())],
                                "imports": [_import(i) for i in d.get("imports", ())],
                                "parse_errors": list(d.get("parse_errors", ()))})


class SkeletonCache:
    SCHEMA = ("CREATE TABLE IF NOT EXISTS skeletons (path TEXT PRIMARY KEY, size INTEGER NOT NULL, "
              "mtime_ns INTEGER NOT NULL, skip TEXT, skeleton TEXT, listing TEXT)")
    VERSION = 7  # bump when the skeleton model or an extractor's output changes: old files are then ignored

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = os.fspath(path) if path is not None else None
        self.entries: dict[tuple[str, str], Entry] = {}  # (root, rel path) → entry
        self._lock = threading.Lock()
        self._dirty: set[tuple[str, str]] = set()  # keys to write at the next save()
        self._gone: set[tuple[str, str]] = set()  # keys to delete at the next save()
        if self.path and os.path.exists(self.path):
            self._load()

    def get(self, root: str, rel: str, size: int, mtime_ns: int) -> Entry | None:
        entry = self.entries.get((root, rel))
        if entry is not None and entry.size == size and entry.mtime_ns == mtime_ns:
            return entry
        return None

    def put(self, root: str, rel: str, size: int, mtime_ns: int, skeleton: FileSkeleton | str,
            listing: str | None = None) -> Entry:
        entry = Entry(size, mtime_ns, skeleton, listing)
        with self._lock:
            self.entries[(root, rel)] = entry
            self._dirty.add((root, rel))
        return entry

    def touch(self, root: str, rel: str) -> None:
        """Note that an entry was changed in place (re-resolved imports), so `save()` writes it."""
        with self._lock:
            self._dirty.add((root, rel))

    def forget(self, root: str, under: str, keep: set[str]) -> None:
        """Drop the entries of files under `under` ("" for all of root) that are no longer listed."""
        prefix = f"{under}/" if under else ""
        with self._lock:
            for key in [k for k in self.entries if k[0] == root and k[1].startswith(prefix) and k[1] not in keep]:
                del self.entries[key]
                self._dirty.discard(key)
                self._gone.add(key)

    def __len__(self) -> int:
        return len(self.entries)

    def _load(self) -> None:
        assert self.path is not None
        try:
            with closing(sqlite3.connect(self.path)) as db:
                if db.execute("PRAGMA user_version").fetchone()[0] != self.VERSION:
                    return
                rows = db.execute("SELECT path, size, mtime_ns, skip, skeleton, listing FROM skeletons").fetchall()
        except sqlite3.DatabaseError:
            return  # a corrupt cache is an empty cache
        for key, size, mtime_ns, skip, skeleton, listing in rows:
            root, _, rel = key.partition("\0")
            try:
                item: FileSkeleton | str = skip if skip else _file(json.loads(skeleton))
            except (ValueError, KeyError, TypeError):
                continue
            self.entries[(root, rel)] = Entry(size, mtime_ns, item, listing)

    def save(self) -> None:
        """Write the entries changed since the last save (no-op without a path or when nothing changed)."""
        if not self.path or not (self._dirty or self._gone):
            return
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        with self._lock:
            keys, self._dirty = self._dirty, set()
            gone, self._gone = self._gone, set()
            rows = []
            for key in keys:
                e = self.entries.get(key)
                if e is not None:
                    skip = e.skeleton if isinstance(e.skeleton, str) else None
                    data = None if isinstance(e.skeleton, str) else e.skeleton.model_dump_json()
                    rows.append((f"{key[0]}\0{key[1]}", e.size, e.mtime_ns, skip, data, e.listing))
        with closing(sqlite3.connect(self.path)) as db, db:
            if db.execute("PRAGMA user_version").fetchone()[0] != self.VERSION:
                db.execute("DROP TABLE IF EXISTS skeletons")
                db.execute(f"PRAGMA user_version = {self.VERSION}")
            db.execute(self.SCHEMA)
            db.executemany("INSERT OR REPLACE INTO skeletons VALUES (?, ?, ?, ?, ?, ?)", rows)
            db.executemany("DELETE FROM skeletons WHERE path = ?", [(f"{r}\0{p}",) for r, p in gone])
