"""A stat-keyed skeleton cache: (path, size, mtime_ns) → skeleton or skip reason; optionally kept on disk.

In memory it is a dict; `SkeletonCache(path)` also loads from and `save()`s to a SQLite file the caller
chooses (the parser never picks a location itself). The on-disk form stores the unresolved skeleton:
import resolution depends on the rest of the tree and is redone when the file listing changes.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from contextlib import closing
from dataclasses import dataclass

from domain.skeleton import FileSkeleton


@dataclass(slots=True)
class Entry:
    size: int
    mtime_ns: int
    raw: FileSkeleton | str  # a skeleton (imports unresolved) or the skip reason
    resolved: FileSkeleton | None = None
    listing: str | None = None  # fingerprint of the file listing `resolved` was computed against


class SkeletonCache:
    SCHEMA = ("CREATE TABLE IF NOT EXISTS skeletons (path TEXT PRIMARY KEY, size INTEGER NOT NULL, "
              "mtime_ns INTEGER NOT NULL, skip TEXT, skeleton TEXT)")

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = os.fspath(path) if path is not None else None
        self.entries: dict[tuple[str, str], Entry] = {}  # (root, rel path) → entry
        self._lock = threading.Lock()
        self._dirty = False
        if self.path and os.path.exists(self.path):
            self._load()

    def get(self, root: str, rel: str, size: int, mtime_ns: int) -> Entry | None:
        entry = self.entries.get((root, rel))
        if entry is not None and entry.size == size and entry.mtime_ns == mtime_ns:
            return entry
        return None

    def put(self, root: str, rel: str, size: int, mtime_ns: int, raw: FileSkeleton | str) -> Entry:
        entry = Entry(size, mtime_ns, raw)
        with self._lock:
            self.entries[(root, rel)] = entry
            self._dirty = True
        return entry

    def __len__(self) -> int:
        return len(self.entries)

    def _load(self) -> None:
        assert self.path is not None
        try:
            with closing(sqlite3.connect(self.path)) as db:
                db.execute(self.SCHEMA)
                rows = db.execute("SELECT path, size, mtime_ns, skip, skeleton FROM skeletons").fetchall()
        except sqlite3.DatabaseError:
            return  # a corrupt cache is an empty cache
        for key, size, mtime_ns, skip, skeleton in rows:
            root, _, rel = key.partition("\0")
            try:
                raw = skip if skip else FileSkeleton.model_validate_json(skeleton)
            except ValueError:
                continue
            self.entries[(root, rel)] = Entry(size, mtime_ns, raw)

    def save(self) -> None:
        """Write the entries to the cache file (no-op without a path or when nothing changed)."""
        if not self.path or not self._dirty:
            return
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        with self._lock:
            rows = [(f"{root}\0{rel}", e.size, e.mtime_ns, e.raw if isinstance(e.raw, str) else None,
                     None if isinstance(e.raw, str) else e.raw.model_dump_json())
                    for (root, rel), e in self.entries.items()]
            self._dirty = False
        with closing(sqlite3.connect(self.path)) as db, db:
            db.execute(self.SCHEMA)
            db.execute("DELETE FROM skeletons")
            db.executemany("INSERT INTO skeletons VALUES (?, ?, ?, ?, ?)", rows)

    def to_json(self) -> str:  # for debugging and tests
        return json.dumps(sorted(f"{r}:{p}" for r, p in self.entries))
