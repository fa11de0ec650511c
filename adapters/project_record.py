"""What `code3 init` set up in a project, kept in `<project>/.code3/init.json` (0600, never committed).

The forge repository the project's code is pushed to, and each identity init created or funded with the
CODE3_HOME its key lives in. A server reads it to refuse creating a second, unfunded key where init set one
up elsewhere (code3/wiring.py `identity`), and `code3 forge push|pull` read the repository's name from it.
It holds names, addresses and paths only: no key or secret.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from adapters.private_files import read_private, write_private

FILE = "init.json"


@dataclass(frozen=True)
class SetUp:
    """One identity init set up: its address and the CODE3_HOME (and keystore) its key is in."""

    address: str
    home: str
    keystore: str


@dataclass
class ProjectRecord:
    repo: str | None = None
    identities: dict[str, SetUp] = field(default_factory=dict)

    def to_json(self) -> bytes:
        return json.dumps({"repo": self.repo, "identities": {
            name: {"address": s.address, "home": s.home, "keystore": s.keystore}
            for name, s in sorted(self.identities.items())}}, indent=2).encode()


def read_record(state_dir: Path) -> ProjectRecord | None:
    """The record, None when init never ran here (or it cannot be read: then nothing is assumed of it)."""
    raw = read_private(state_dir / FILE, root=state_dir)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        identities = {str(name): SetUp(str(s["address"]), str(s["home"]), str(s["keystore"]))
                      for name, s in dict(data.get("identities") or {}).items()}
        return ProjectRecord(repo=data.get("repo"), identities=identities)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def record_init(state_dir: Path, repo: str, name: str, set_up: SetUp) -> ProjectRecord:
    """Add (or update) what one run of init set up; the others' entries are kept."""
    record = read_record(state_dir) or ProjectRecord()
    record.repo = repo
    record.identities[name] = set_up
    write_private(state_dir / FILE, record.to_json(), root=state_dir)
    return record
