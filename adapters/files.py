"""Atomic writes of generated artifacts: a set of files appears whole or not at all."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from domain.errors import Code, Code3Error


def inside(root: Path, relative: str) -> Path:
    """`relative` resolved under `root`; a path that escapes the project is a validation error."""
    candidate = (root / relative).resolve()
    if Path(relative).is_absolute() or not candidate.is_relative_to(root.resolve()):
        raise Code3Error(Code.VALIDATION, f"path {relative!r} is outside the project",
                         "pass a path relative to the project root, such as specs/001-name/spec.md")
    return candidate


def write_files(directory: Path, files: dict[str, str]) -> None:
    """Write all `files` (paths relative to `directory`) or none: staged in a temp dir, then renamed in."""
    directory.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=directory))
    try:
        for rel, text in files.items():
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            with open(target, "rb") as fh:
                os.fsync(fh.fileno())
        for rel in files:
            final = directory / rel
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / rel, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def create_dir_atomically(parent: Path, name: str, files: dict[str, str]) -> Path:
    """Create `parent/name` holding `files` in one rename, failing with E_EXISTS if it appeared meanwhile."""
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=parent))
    try:
        write_files(staging, files)
        final = parent / name
        try:
            os.rename(staging, final)  # atomic; fails if `final` exists and is not empty
        except OSError:
            raise Code3Error(Code.EXISTS, f"{final.name} already exists",
                             "choose another feature_id or pass allow_overwrite=true") from None
        return final
    finally:
        shutil.rmtree(staging, ignore_errors=True)
