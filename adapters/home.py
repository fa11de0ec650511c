"""Where Code3 keeps what must never be inside a work tree: `CODE3_HOME` (keys and per-project secrets).

A repository's author controls everything under its work tree, so identity keys, the serve token, the
webhook secret and the key that seals `secret` annotations live in the user's configuration directory,
as `~/.config/solana` or Foundry's keystores do: `CODE3_HOME`, by default `$XDG_CONFIG_HOME/code3`, else
`~/.config/code3`. Keys are in `keys/`; each project's secrets in `projects/<key>/`, the key derived
from the project's resolved path (moving a project means moving that directory, or re-creating them).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path


def code3_home(env: Mapping[str, str] | None = None) -> Path:
    """CODE3_HOME, else $XDG_CONFIG_HOME/code3, else ~/.config/code3 (resolved: no link is followed later).
    An `env` that names none of CODE3_HOME, XDG_CONFIG_HOME and HOME leaves the choice to the process's own."""
    e = os.environ if env is None else env
    if not any(e.get(name) for name in ("CODE3_HOME", "XDG_CONFIG_HOME", "HOME")):
        e = os.environ
    if e.get("CODE3_HOME"):
        return Path(e["CODE3_HOME"]).expanduser().resolve()
    if e.get("XDG_CONFIG_HOME"):
        return (Path(e["XDG_CONFIG_HOME"]).expanduser() / "code3").resolve()
    home = e.get("HOME")
    return ((Path(home) if home else Path.home()) / ".config" / "code3").resolve()


def project_key(project: Path) -> str:
    """A readable, collision-free directory name for a project: its name and a hash of its resolved path."""
    resolved = str(Path(project).resolve())
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(resolved).name).strip("-.")[:40] or "project"
    return f"{name}-{hashlib.sha256(resolved.encode('utf-8')).hexdigest()[:16]}"


def project_secrets_dir(project: Path, home: Path | None = None) -> Path:
    """`CODE3_HOME/projects/<key>/`: the serve token, the webhook secret and the annotations' key."""
    return (home or code3_home()) / "projects" / project_key(project)


def enclosing_work_tree(path: Path) -> Path | None:
    """The git work tree `path` lies in (the nearest ancestor holding a `.git`), None when it lies in none."""
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def check_home_outside_work_trees(home: Path, keystore: Path | None = None) -> None:
    """Refuse a CODE3_HOME (or CODE3_KEYSTORE) inside a git work tree: keys there could be committed, and a
    repository's committed `.mcp.json` could point a server's keys into the repository itself."""
    from domain.errors import Code, Code3Error

    for name, where in (("CODE3_HOME", home), ("CODE3_KEYSTORE", keystore)):
        if where is None:
            continue
        tree = enclosing_work_tree(Path(os.path.abspath(where)))
        if tree is not None:
            raise Code3Error(Code.PRECONDITION, f"{name} {where} is inside the git work tree {tree}: keys that hold "
                             "funds are never kept in a repository",
                             f"set {name} to a directory outside any git work tree (unset, CODE3_HOME is "
                             "~/.config/code3), then run the command again; if keys are already there, move them "
                             "out first")
