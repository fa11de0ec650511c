"""One file replaced atomically: written to a temporary sibling, flushed to disk, renamed over the target.

A reader sees the old content or the new, never a part; a crash leaves at worst a stray `.tmp` sibling.
(adapters/files.py writes whole sets of files; this is for one file written often, such as a generated
spec or a checkpoint, where copying its directory each time would cost more than the write.)
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
