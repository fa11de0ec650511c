"""An issue's title and text as the forge holds them (the log keeps neither: the publish wrote them to the forge).

The embedded forge is a local SQLite read, made each time; a remote forge (GitHub) is asked at most once a minute
per issue (a board of 50 rows must not cost 50 API calls per view), and a forge that does not answer leaves the
title out rather than failing the page.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

TTL_S = 60.0
MAX_KEPT = 2_000
_KEPT: dict[tuple[int, str, int], tuple[float, Any]] = {}
_LOCK = threading.Lock()


def issue_ref(s: Any, repo: str, number: int) -> Any:
    """The forge's `IssueRef` for `repo#number`, or None when the forge does not have it or does not answer."""
    from domain.errors import Code3Error
    from mcp_tools.web.forge_pages import is_local

    local = is_local(s.forge)
    key = (id(s.forge), repo, number)
    if not local:
        with _LOCK:
            kept = _KEPT.get(key)
        if kept is not None and time.monotonic() - kept[0] < TTL_S:
            return kept[1]
    try:
        found = s.forge.get_issue(repo, number)
    except (Code3Error, OSError):
        found = None
    if not local:
        with _LOCK:
            if len(_KEPT) >= MAX_KEPT:
                _KEPT.clear()
            _KEPT[key] = (time.monotonic(), found)
    return found


CODE3_PREFIX = re.compile(r"\[code3\] \d{3}-[a-z0-9-]+: ")


def display_title(title: str) -> str:
    """The title a person reads: without the `[code3] <feature id>: ` marker the publish puts first (the forge's own
    page keeps it)."""
    found = CODE3_PREFIX.match(title)
    return title[found.end():] if found and title[found.end():].strip() else title


def number_of(task_id: str | None) -> int | None:
    """The issue number of a task id `owner/repo#N`."""
    if not task_id or "#" not in task_id:
        return None
    tail = task_id.rsplit("#", 1)[1]
    return int(tail) if tail.isascii() and tail.isdigit() else None
