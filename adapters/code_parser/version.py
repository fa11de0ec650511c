"""The code parser's version: what a spec's baseline records, so a parser upgrade is not read as drift.

It is a digest of what decides a skeleton — the parser's own sources (adapters/code_parser/**/*.py and the
skeleton model) and the installed tree-sitter runtime and grammars' versions — so any change to an extractor
gives a new version without anyone remembering to bump a number. Computed once per process.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import metadata
from pathlib import Path

_HERE = Path(__file__).resolve().parent


@cache
def parser_version() -> str:
    digest = hashlib.sha256()
    sources = [*sorted(_HERE.rglob("*.py")), _HERE.parent.parent / "domain" / "knowledge" / "skeleton.py"]
    for source in sources:
        name = source.relative_to(_HERE).as_posix() if source.is_relative_to(_HERE) else source.name
        try:
            digest.update(name.encode() + b"\0" + source.read_bytes() + b"\0")
        except OSError:
            continue
    grammars = sorted(f"{d.metadata['Name']}=={d.version}".lower() for d in metadata.distributions()
                      if (d.metadata["Name"] or "").lower().replace("_", "-").startswith("tree-sitter"))
    digest.update("\n".join(grammars).encode())
    return digest.hexdigest()[:12]
