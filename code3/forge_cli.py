"""`code3 forge push` and `code3 forge pull`: the project's code and its repository on the embedded forge.

The forge follows the project only at `code3 init` and on `forge push` (fast-forward only); merged pull
requests come back with `forge pull`. The repository is the one `code3 init` set up (adapters.project_record),
or the one named on the command line.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace

from code3.settings import Settings
from domain.errors import Code, Code3Error

HINTS = {
    "pushed": "", "pulled": "", "up-to-date": "",
    "forge-ahead": "the forge has merged work yours lacks: `code3 forge pull`, then `code3 forge push` again",
    "project-ahead": "your branch has commits the forge lacks: `code3 forge push`",
}


def sync(settings: Settings, action: str, repo: str | None) -> dict[str, object]:
    """Push or pull the project's code; the answer says what moved (adapters.forge_sync.Synced)."""
    from adapters import forge_sync
    from adapters.project_record import read_record
    from code3.init import git_root
    from code3.wiring import guard, local_forge
    from domain.values import parse_repo

    project = git_root(settings.project)
    settings = replace(settings, project=project)  # from a subdirectory too: the state is the work tree's
    guard(settings)
    record = read_record(settings.state_dir)
    name = parse_repo(repo) if repo else (record.repo if record else None)
    if name is None:
        raise Code3Error(Code.PRECONDITION, f"{project} has no repository on the embedded forge yet",
                         "run `code3 init` first (it pushes your code), or name one: `code3 forge push OWNER/REPO`")
    forge = local_forge(settings, settings.identity)
    try:
        done = (forge_sync.push if action == "push" else forge_sync.pull)(forge, name, project)
    finally:
        forge.close()
    answer: dict[str, object] = asdict(done)
    if HINTS.get(done.state):
        answer["hint"] = HINTS[done.state]
    return answer


def cmd_sync(settings: Settings, action: str, repo: str | None) -> int:
    print(json.dumps(sync(settings, action, repo)))
    return 0
