"""Metadata follows files renamed or moved in git.

`sync_renames` asks git which files were renamed between the commit it last synced from (the baseline,
an event of `NexusBaseline`; the first time, the last commit before the first CodeNexus event) and the
index (commits and staged `git mv` alike, with git's rename detection), and records a `Moved` event for
each renamed file that has metadata: its id, tags, comment and relationships (both directions, since they
refer to file ids) stay with it. A file at the old path later is a new file with a new id.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from adapters.event_store import Change
from adapters.git import GitError, git
from domain.knowledge.file_meta import FileMeta, FilePath, MetaRefused, NexusBaseline
from mcp_tools import answer_size
from mcp_tools.codenexus.answers import Move, SyncAnswer
from mcp_tools.codenexus.arguments import PROFILES
from mcp_tools.codenexus.context import fresh, project_id
from mcp_tools.codenexus.errors import jsonrpc_errors
from mcp_tools.declare import tool
from mcp_tools.services import Services
from projections.knowledge import codenexus_queries as index


def renames(root: Any, since: str) -> list[tuple[str, str]]:
    """(old, new) paths relative to `root` renamed between commit `since` and the git index."""
    raw = git("diff", "--cached", "-M", "--name-status", "-z", "--relative", since, cwd=root)
    fields = raw.split("\0")
    found, i = [], 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                found.append((fields[i + 1], fields[i + 2]))
            i += 3
        else:
            i += 2
    return found


def _baseline_commit(s: Services) -> str:
    """The last commit before CodeNexus first recorded anything (the root commit when none is older)."""
    first = s.views.query("SELECT MIN(created_at) FROM nexus_files")[0][0]
    if first:
        when = datetime.fromisoformat(first).isoformat()
        found = git("rev-list", "-1", f"--before={when}", "HEAD", cwd=s.project)
        if found:
            return found
    return git("rev-list", "--max-parents=0", "-1", "HEAD", cwd=s.project)


@tool("sync_renames", profiles=PROFILES, idempotent=True, open_world=False)
@jsonrpc_errors
def sync_renames(s: Services) -> SyncAnswer:
    """Move metadata with the files renamed or moved in git since the last sync (git's rename detection)"""
    try:
        head = git("rev-parse", "HEAD", cwd=s.project)
    except GitError:
        raise MetaRefused("the project is not a git work tree with a commit", "commit the project in git first"
                          ) from None
    pid = project_id(s)
    fresh(s)
    baseline = s.store.get(NexusBaseline, NexusBaseline.create_id(pid))
    since = baseline.commit if baseline is not None else _baseline_commit(s)
    moved: list[Move] = []
    skipped: list[str] = []
    for old, new in renames(s.project, since):
        row = index.file_by_path(s.views, old)
        if row is None:
            continue
        if index.file_by_path(s.views, new) is not None:
            skipped.append(f"{old} -> {new}: {new} has metadata of its own")
            continue
        _move(s, pid, row.file_id, old, new)
        moved.append({"old_path": old, "new_path": new})
    s.store.update_all(Change.step(NexusBaseline, NexusBaseline.create_id(pid), lambda b: b.advance(head),
                                   create=lambda: NexusBaseline(project_id=pid, commit=head)))
    answer = {"success": True, "message": f"Moved the metadata of {len(moved)} renamed files", "moved": moved,
              "skipped": skipped, "baseline": head}
    return answer_size.cut_lists(answer, ("moved", "skipped"), {"since": since})  # type: ignore[return-value]


def _move(s: Services, pid: str, file_id: str, old: str, new: str) -> None:
    """The file's metadata moves to `new`, its old path is given up and its new one taken: one save."""
    moved = Change.step(FileMeta, UUID(file_id), lambda meta: meta.move(new), if_present=True)
    released = Change.step(FilePath, FilePath.create_id(pid, old), lambda lookup: lookup.release_from(file_id),
                           if_present=True)
    claimed = Change.step(FilePath, FilePath.create_id(pid, new), lambda lookup: lookup.claim_for(file_id),
                          create=lambda: FilePath(project_id=pid, path=new, file_id=file_id))
    s.store.update_all(moved, released, claimed)
