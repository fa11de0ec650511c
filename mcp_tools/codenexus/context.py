"""What every CodeNexus handler does: resolve paths through the project resolver, find a file's id
through its path lookup, save the changes of one command in one unit of work, read the index after
catching it up."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from adapters.event_store import Change
from adapters.git import GitError, git
from adapters.paths import PathRefused, ProjectPaths
from adapters.private_files import write_private
from domain.knowledge.file_meta import FileMeta, FilePath, NexusBaseline
from mcp_tools.services import Services
from projections.knowledge import codenexus

MAX_PATH = 1024


def project_paths(s: Services) -> ProjectPaths:
    return s.paths if s.paths is not None else ProjectPaths(s.project)


def project_id(s: Services) -> str:
    """The project's stable id, kept in `.code3/project_id` (created once): file ids derive from it, never
    from the absolute root, so a project moved or cloned elsewhere keeps its metadata."""
    given = getattr(s, "project_id", None)
    if isinstance(given, str) and given:
        return given
    state = s.project / ".code3"
    return _PROJECT_IDS.get(state) or _PROJECT_IDS.setdefault(state, read_or_create_project_id(state))


_PROJECT_IDS: dict[Path, str] = {}


def read_or_create_project_id(state: Path) -> str:
    path = state / "project_id"
    if not path.exists():  # 0600 in a 0700 directory whatever the umask; a racing process keeps the first id
        write_private(path, (str(uuid4()) + "\n").encode(), overwrite=False)
    found = path.read_text().strip()
    if not found or len(found) > 100:
        raise RuntimeError(f"{path} is empty or damaged; restore it from a backup (file ids derive from it)")
    return found


def _refuse_escape(value: object) -> None:
    """A path that names its way out of the root (`..`, absolute) is a permission matter (-32001)."""
    if isinstance(value, str) and "\x00" not in value:
        posix = value.replace("\\", "/")
        if posix.startswith("/") or re.match(r"[A-Za-z]:", posix) or ".." in posix.split("/"):
            raise PathRefused("outside", f"{value[:200]!r} leads outside the project root",
                              "pass a path relative to the project root, without '..'")


def existing_file(s: Services, value: object) -> str:
    """The project-relative path of an existing regular file (symlinks resolved, inside the root)."""
    _refuse_escape(value)
    paths = project_paths(s)
    real = paths.resolve(value, kind="any", must_exist=True)
    if not real.is_file():
        raise PathRefused("not_regular", f"{value!r} is not a regular file", "pass a file's path")
    return paths.relative(real)


def known_path(s: Services, value: object) -> str:
    """The project-relative form of a path that may no longer exist (metadata outlives deleted files)."""
    _refuse_escape(value)
    paths = project_paths(s)
    return paths.relative(paths.resolve(value, kind="any", must_exist=False))


class _Stale(Exception):
    """A path lookup moved under us (another writer); locate again."""


@dataclass
class Located:
    path: str
    file_id: UUID
    generation: int
    lookup: FilePath | None


def locate(s: Services, path: str) -> Located:
    """The file id that holds `path` now, or the one a new file there gets."""
    pid = project_id(s)
    lookup = s.store.get(FilePath, FilePath.create_id(pid, path))
    if lookup is None:
        return Located(path, FileMeta.create_id(pid, path, 0), 0, None)
    return Located(path, lookup.file_id_here(), lookup.generation, lookup)


def _claim(pid: str, where: Located, touched: list[bool]) -> Callable[[FilePath | None], FilePath | None]:
    """The path's part of a file change: taken for the file when the file's change recorded something (`touched`,
    decided first in the same unit of work); a path that leads elsewhere than located is stale (locate again)."""
    def apply(current: FilePath | None) -> FilePath | None:
        if current is None:
            if where.generation != 0:
                raise _Stale
            return FilePath(project_id=pid, path=where.path, file_id=str(where.file_id)) if touched[0] else None
        if current.file_id_here() != where.file_id:
            raise _Stale
        return current if touched[0] and current.claim_for(str(where.file_id)) else None

    return apply


def file_change(s: Services, where: Located, mutate: Callable[[FileMeta], Any], register: bool = False
                ) -> list[Change[Any]]:
    """The changes that apply `mutate` to the file (registering it and claiming its path when it is
    new); nothing is saved when `mutate` records nothing, unless `register` asks for a new file to be
    registered anyway (the target of a relationship)."""
    pid = project_id(s)
    touched = [False]

    def apply(current: FileMeta | None) -> FileMeta | None:
        meta = current if current is not None else FileMeta(project_id=pid, path=where.path,
                                                             generation=where.generation)
        mutate(meta)
        touched[0] = len(meta.pending_events) > (0 if current is not None else 0 if register else 1)
        return meta if touched[0] else None

    return [Change(FileMeta, where.file_id, apply),
            Change(FilePath, FilePath.create_id(pid, where.path), _claim(pid, where, touched))]


def save(s: Services, build: Callable[[], list[Change[Any]]], attempts: int = 5) -> list[Any]:
    """Run a command's unit of work; when a path lookup moved meanwhile, locate and build again."""
    for attempt in range(attempts):
        try:
            saved = s.store.update_all(*build())
            _remember_baseline(s)
            return saved
        except _Stale:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def change_file(s: Services, path: str, mutate: Callable[[FileMeta], Any]) -> tuple[FileMeta | None, Any]:
    """Load the file's metadata (or start it), apply `mutate`, save: the aggregate and what `mutate` returned."""
    outcome: list[Any] = [None]

    def apply(meta: FileMeta) -> None:
        outcome[0] = mutate(meta)

    meta = save(s, lambda: file_change(s, locate(s, path), apply))[0]
    return meta, outcome[0]


_BASELINE_KNOWN: set[Path] = set()
_BASELINE_LOCK = threading.Lock()


def _remember_baseline(s: Services) -> None:
    """The first write of a project records the git commit its paths refer to, so `sync_renames` knows
    where to look for renames from (one git call per process at most; nothing outside git)."""
    if s.project in _BASELINE_KNOWN:
        return
    with _BASELINE_LOCK:  # concurrent first writes of a serve: the later ones wait until it is recorded
        if s.project in _BASELINE_KNOWN:
            return
        _record_baseline(s)
        _BASELINE_KNOWN.add(s.project)


def _record_baseline(s: Services) -> None:
    pid = project_id(s)
    if s.store.get(NexusBaseline, NexusBaseline.create_id(pid)) is not None:
        return
    try:
        head = git("rev-parse", "HEAD", cwd=s.project)
    except (GitError, OSError):
        return
    s.store.update_all(Change(NexusBaseline, NexusBaseline.create_id(pid),
                              lambda current: NexusBaseline(project_id=pid, commit=head) if current is None else None))


def fresh(s: Services) -> None:
    """Bring the index up to the log's head (other processes' writes included) before a read."""
    codenexus.catch_up(s.store, s.views)


def iso_z(stamp: str | None) -> str | None:
    """'2025-07-01T15:30:00.123+00:00' → '2025-07-01T15:30:00Z' (the seed's form)."""
    if not stamp:
        return None
    return stamp[:19] + "Z"
