"""Completions for the arguments every Code3 family names the same way: feature ids (the project's
`specs/`), task ids, bounty ids and repositories (the bounty board, read by prefix a page at a time). The front
filters what a completer returns by what was typed, sorts it and caps it; a family adds its own with `@completer`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from mcp_tools.declare import completer

EVERY_PROFILE = ("client-local", "client-remote", "server")
FEATURE_DIR = re.compile(r"^[0-9]{3}-[a-z0-9][a-z0-9-]*$")
PAGE = 101  # the front answers at most 100 values; one more tells it there are more


@completer("feature_id", profiles=EVERY_PROFILE)
def feature_ids(s: Any, typed: str, resolved: dict[str, str]) -> Iterable[str]:
    from adapters.paths import PathRefused, ProjectPaths

    paths = getattr(s, "paths", None) or ProjectPaths(s.project)
    try:  # the resolver's: a specs/ that leads out of the project is not listed
        specs = paths.resolve("specs", kind="dir")
    except PathRefused:
        return []
    return paths.run(lambda: [d.name for d in specs.iterdir()
                              if FEATURE_DIR.match(d.name) and d.is_dir() and not d.is_symlink()])


def _board(s: Any, column: str, typed: str) -> list[str]:
    """The board's values of `column` starting with `typed`: one indexed page (the store's size does not matter)."""
    from projections.bounties.board import BountyBoard
    from projections.bounties.board_prefix import starting_with
    from projections.runner import follow

    follow(s.store, s.views, BountyBoard())  # read our own writes
    return starting_with(s.views, column, typed, PAGE)


@completer("task_id", profiles=EVERY_PROFILE)
def task_ids(s: Any, typed: str, resolved: dict[str, str]) -> Iterable[str]:
    return _board(s, "task_id", typed)


@completer("bounty_id", profiles=EVERY_PROFILE)
def bounty_ids(s: Any, typed: str, resolved: dict[str, str]) -> Iterable[str]:
    return _board(s, "bounty_id", typed)


@completer("repo", profiles=EVERY_PROFILE)
def repositories(s: Any, typed: str, resolved: dict[str, str]) -> Iterable[str]:
    return _board(s, "repo", typed)
