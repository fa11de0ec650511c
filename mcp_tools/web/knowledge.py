"""The code knowledge pages: the files CodeNexus knows (paged, filtered by tag) and one file's page — its tags,
comment and relationships (drawn as a small graph, `graph.py`) and its ai-loom annotations beside its lines.

What a page may show is what the MCP tools may answer, no more: a secret annotation is a place only (its line
range and the word "secret": no comment, tag or id, which the store does not even hold in clear); an
`internal` one's comment only when the server shares them (CODE3_LOOM_SHARE_INTERNAL, a server setting); any
comment with its credentials redacted. A file's lines are read through the project path resolver only, capped
at MAX_SHOWN_BYTES: a path outside the project, in its state directory, a key file or a symlink that leads
out is a 404, the same page as a file that does not exist, so the page tells nothing about what lies there.
Both pages follow /live (topic "all": a tag, relationship or annotation written by any process shows up).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from adapters.paths import PathRefused, ProjectPaths
from adapters.redact import redact
from mcp_tools.services import Services
from mcp_tools.web.graph import Neighbour, draw
from mcp_tools.web.refusals import port_of, refusal
from mcp_tools.web.render import page

PAGE_SIZE = 50
MAX_OFFSET = 10**7
MAX_SHOWN_BYTES = 512 * 1024  # a bigger file's page shows its knowledge without its lines
MAX_RELATIONSHIPS = 200  # per direction
MAX_ANNOTATIONS = 500
MAX_TAGS_LISTED = 200
TAG = re.compile(r"[a-z0-9_-]{2,50}")
NAV_LINK = ("/files", "Files", "files")
SHOWN_ON_404 = ("outside", "forbidden", "invalid")  # refusals that are a 404 whatever the file's knowledge


def file_href(path: str) -> str:
    return "/files/" + quote(path, safe="/")


# --- the list of files ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FileList:
    rows: list[Any]  # projections.knowledge.codenexus_queries.FileRow
    total: int
    exact: bool
    tag: str | None
    offset: int
    tags: list[dict[str, Any]]  # name, file_count: the filter's choices

    @property
    def previous(self) -> int | None:
        return max(self.offset - PAGE_SIZE, 0) if self.offset > 0 else None

    @property
    def next(self) -> int | None:
        return self.offset + PAGE_SIZE if self.offset + len(self.rows) < self.total else None


def file_list(s: Services, tag: str | None, offset: int) -> FileList:
    """A page of the files CodeNexus knows, in the order they became known, with `tag` when given."""
    from mcp_tools.codenexus.context import fresh
    from projections.knowledge import codenexus_queries as index

    fresh(s)
    tags, _ = index.tags(s.views, MAX_TAGS_LISTED)
    found = index.query(s.views, index.Filters(tags=[tag] if tag else []), PAGE_SIZE, offset)
    return FileList(found.rows, found.total, found.exact, tag, offset,
                    [{"name": t["name"], "file_count": t["file_count"]} for t in tags])


# --- one file ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Note:
    """An annotation as the page shows it: `comment` None when the page may not show it."""

    start_line: int
    end_line: int
    sensitivity: str
    priority: str | None = None
    comment: str | None = None
    tags: tuple[str, ...] = ()
    status: str | None = None
    withheld: str | None = None  # why the comment is not shown: "secret" or "internal"


@dataclass(frozen=True)
class Line:
    number: int
    text: str
    notes: list[Note]  # the annotations that start on this line
    marked: bool  # inside an annotated range
    side: int = 1  # rows the side cell that starts here spans (0: this line is beside a cell started above)


@dataclass
class FileView:
    path: str
    tags: list[str] = field(default_factory=list)
    comment: str = ""
    updated_at: str | None = None
    outgoing: list[dict[str, Any]] = field(default_factory=list)
    incoming: list[dict[str, Any]] = field(default_factory=list)
    counts: tuple[int, int] = (0, 0)
    notes: list[Note] = field(default_factory=list)
    lines: list[Line] | None = None
    unshown: str | None = None  # why the lines are not shown
    graph: Any = None


def shown_note(view: dict[str, Any], share_internal: bool) -> Note:
    """What the page may show of one stored annotation view (projections/knowledge/annotations.py)."""
    start, end = int(view["startLine"]), int(view["endLine"])
    if view["sensitivity"] == "secret":
        return Note(start, end, "secret", withheld="secret")
    status = (view.get("anchor") or {}).get("status")
    tags = tuple(view.get("tags") or ())
    if view["sensitivity"] == "internal" and not share_internal:
        return Note(start, end, "internal", view["priority"], None, tags, status, withheld="internal")
    comment = view.get("comment")
    return Note(start, end, view["sensitivity"], view["priority"], None if comment is None else redact(comment).text,
                tags, status, withheld=None if comment is not None else "sealed")


def _paths(s: Services) -> ProjectPaths:
    """The project's resolver with the page's own size cap (its private directories kept)."""
    base = s.paths if s.paths is not None else ProjectPaths(s.project)
    return dataclasses.replace(base, max_bytes=min(base.max_bytes, MAX_SHOWN_BYTES))


def file_view(s: Services, requested: str) -> FileView | None:
    """The page of one file, or None (a 404) when the path is refused or nothing is known of it."""
    from mcp_tools.ai_loom.access import fresh as fresh_annotations  # the tools' own read-your-writes
    from mcp_tools.codenexus.context import fresh
    from projections.knowledge import annotations as notes_index
    from projections.knowledge import codenexus_queries as index

    paths = _paths(s)
    text: str | None = None
    unshown: str | None = None
    try:
        path = paths.relative(paths.resolve(requested))
        text = paths.read_text(path)
    except PathRefused as refused:
        if refused.reason in SHOWN_ON_404:
            return None
        path = requested
        unshown = {"not_found": "The file is not in the project's work tree (its knowledge outlives it).",
                   "too_large": f"The file is larger than {MAX_SHOWN_BYTES // 1024} KiB: its lines are not shown.",
                   }.get(refused.reason, "The file is not UTF-8 text: its lines are not shown.")
    fresh(s)
    fresh_annotations(s)
    row = index.file_by_path(s.views, path)
    stored = notes_index.for_file(s.views, path, MAX_ANNOTATIONS)
    if text is None and row is None and not stored:
        return None
    view = FileView(path=path, unshown=unshown)
    view.notes = [shown_note(v, s.loom_share_internal) for v in stored]
    if row is not None:
        view.tags, view.comment, view.updated_at = row.tags, row.comment, row.updated_at
        view.outgoing, n_out = index.relationships(s.views, row.file_no, "out", MAX_RELATIONSHIPS)
        view.incoming, n_in = index.relationships(s.views, row.file_no, "in", MAX_RELATIONSHIPS)
        view.counts = (n_out, n_in)
    related = neighbours(view.outgoing, view.incoming)
    view.graph = draw(path, related, file_href) if related else None
    if text is not None:
        view.lines = lines_with_notes(text, view.notes)
    return view


def neighbours(outgoing: list[dict[str, Any]], incoming: list[dict[str, Any]]) -> list[Neighbour]:
    """Each related file once, with the relationship types in each direction (outgoing ones first)."""
    out: dict[str, list[str]] = {}
    inc: dict[str, list[str]] = {}
    for r in outgoing:
        out.setdefault(r["target"], []).append(r["type"])
    for r in incoming:
        inc.setdefault(r["source"], []).append(r["type"])
    order = list(dict.fromkeys([*out, *inc]))
    return [Neighbour(p, tuple(out.get(p, ())), tuple(inc.get(p, ()))) for p in order]


def lines_with_notes(text: str, notes: list[Note]) -> list[Line]:
    """The file's lines, each with the notes that start on it (a note past the end is shown on the last line).

    The notes that start on a line share one side cell, which spans the lines they cover up to the next such
    line, so a note stands beside its lines instead of stretching the first one."""
    split = text.splitlines() or [""]
    last = len(split)
    starting: dict[int, list[Note]] = {}
    marked: set[int] = set()
    for note in notes:
        start = min(max(note.start_line, 1), last)
        starting.setdefault(start, []).append(note)
        marked.update(range(start, min(note.end_line, last) + 1))
    starts = sorted(starting)
    spans: dict[int, int] = {}
    for i, start in enumerate(starts):
        end = max(min(max(note.end_line, start), last) for note in starting[start])
        following = starts[i + 1] if i + 1 < len(starts) else last + 1
        spans[start] = min(end, following - 1) - start + 1
    covered = {n for start, span in spans.items() for n in range(start + 1, start + span)}
    return [Line(i, line, starting.get(i, []), i in marked, spans.get(i, 0 if i in covered else 1))
            for i, line in enumerate(split, start=1)]


# --- routes -----------------------------------------------------------------------------------------------------------

def routes(web: Any) -> list[BaseRoute]:
    """/files (the list) and /files/<path> (one file), read through `web.read` (mcp_tools/web/app.py); the list
    joins the site's navigation."""
    from mcp_tools.web.render import NAV_LINKS

    if NAV_LINK not in NAV_LINKS:
        NAV_LINKS.append(NAV_LINK)

    async def files(request: Request) -> Response:
        tag = request.query_params.get("tag") or None
        raw_offset = request.query_params.get("offset", "0")
        if (tag is not None and not TAG.fullmatch(tag)) or not raw_offset.isdigit() or int(raw_offset) > MAX_OFFSET:
            return refusal(400, "Not a page of the file list", "A tag is 2 to 50 lower-case letters, digits, '-' "
                           "or '_'; the offset a whole number.", port_of(request.scope))
        listed = await web.read(lambda s: file_list(s, tag, int(raw_offset)))
        return page("files.html", nav="files", listed=listed, file_href=file_href, live="all")

    async def one_file(request: Request) -> Response:
        requested = request.path_params["path"]
        view = await web.read(lambda s: file_view(s, requested))
        if view is None:
            return refusal(404, "No such file", "Nothing is known of this path in the project, or it is not a "
                           "path this page shows.", port_of(request.scope))
        return page("file.html", nav="files", view=view, file_href=file_href, live="all")

    return [Route("/files", files, methods=["GET", "HEAD"]),
            Route("/files/{path:path}", one_file, methods=["GET", "HEAD"])]
