"""`code3 account migrate`: an older Code3 kept keys and secrets in `<project>/.code3/`; move them to CODE3_HOME.

Only the user's own files move: a tracked, linked, foreign or odd one (what a repository could have
planted) is refused with the reason, and nothing moves until every file has been checked. A destination
that already holds the same bytes is fine; one that holds other bytes is never overwritten.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from adapters.keystore import NAME
from adapters.private_files import check_entry, read_private, refuse, write_private
from adapters.state_guard import STATE, tracked_state
from code3.settings import Settings
from domain.errors import Code, Code3Error

ANNOTATION_KEY = "annotations.aead.key"


@dataclass(frozen=True)
class Move:
    source: Path
    target: Path
    root: Path  # the directory the target's checks start from


def _own_file(path: Path, tracked: set[str], project: Path) -> None:
    """Refuse what the user may not have written: tracked by git, a link, another user's, not a file."""
    if str(path.relative_to(project)) in tracked:
        raise refuse(path, "git tracks it, so the repository's author wrote or published it",
                     "do not use it: if it really is yours it is compromised (published); otherwise "
                     f"`git rm --cached {path.relative_to(project)}` and delete it")
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode):
        raise refuse(path, "it is a symbolic link", f"remove the link (`rm {path}`) and migrate the file it names "
                     "only if you know it is yours")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise refuse(path, f"it is owned by another user (uid {st.st_uid})", "only your own files are migrated")
    if not stat.S_ISREG(st.st_mode):
        raise refuse(path, "it is not a regular file", f"remove it (`rm {path}`)")


def _plan(settings: Settings) -> list[Move]:
    project, secrets = settings.project, settings.secrets_dir
    state = project / STATE
    if check_entry(state, directory=True) is None:  # a linked, foreign or odd .code3 is refused here
        return []
    tracked = set(tracked_state(project))
    moves: list[Move] = []
    for folder, target, root in ((state / "keys", settings.keystore_dir, settings.keystore_dir),
                                 (state / "forge" / "hook_secrets", secrets / "forge_hooks", secrets)):
        if not os.path.lexists(folder):
            continue
        _own_file_dir(folder)
        for path in sorted(folder.iterdir()):
            _own_file(path, tracked, project)
            if path.name == ANNOTATION_KEY:
                moves.append(Move(path, secrets / ANNOTATION_KEY, secrets))
            elif folder.name == "keys" and not (path.suffix == ".key" and NAME.fullmatch(path.stem)):
                raise refuse(path, "it is not a key file of Code3's keystore", f"move it away (`mv {path} …`)")
            else:
                moves.append(Move(path, target / path.name, root))
    for name in ("serve_token", "webhook_secret"):
        path = state / name
        if os.path.lexists(path):
            _own_file(path, tracked, project)
            moves.append(Move(path, secrets / name, secrets))
    return moves


def _own_file_dir(folder: Path) -> None:
    st = folder.lstat()
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise refuse(folder, "it is a symbolic link or not a directory", f"remove it (`rm {folder}`)")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise refuse(folder, f"it is owned by another user (uid {st.st_uid})", "only your own files are migrated")


def migrate(settings: Settings) -> dict[str, object]:
    """Move the project's old keys and secrets to CODE3_HOME; nothing moves unless all of them can."""
    moves = _plan(settings)
    contents = {}
    for move in moves:
        data = move.source.read_bytes()
        existing = read_private(move.target, root=move.root)
        if existing is not None and existing != data:
            raise Code3Error(Code.EXISTS, f"{move.target} already exists with other content; {move.source} "
                             "was not moved (nothing was)", f"keep both: rename the project's file (e.g. `mv "
                             f"{move.source} {move.source.with_stem(move.source.stem + '-old')}`) and migrate again")
        contents[move.source] = data
    moved = []
    for move in moves:
        write_private(move.target, contents[move.source], overwrite=False, root=move.root)
        move.source.unlink()
        moved.append({"from": str(move.source), "to": str(move.target)})
    for folder in (settings.project / STATE / "keys", settings.project / STATE / "forge" / "hook_secrets"):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    return {"moved": moved, "keystore": str(settings.keystore_dir), "secrets": str(settings.secrets_dir)}
