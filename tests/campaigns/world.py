"""A small embedded project for the campaigns: alice (sponsor) with a published bounty, bob and carol
(workers), a repository on the embedded forge — and a snapshot of everything a refused call must leave
unchanged (the event log, the ledger, the forge, the project's files). With `sources`, the project also
holds source files for reverse-spec, CodeNexus and ai-loom to work on, and symlinks a hostile repository
would plant (a specs entry, a source file and a directory leading to `outside`, a directory beside it)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.keystore import Keystore
from code3.settings import Settings
from code3.wiring import build_services, ledger, local_forge, record_resolver
from mcp_tools.lifecycle import publish, specs
from mcp_tools.services import Services

REPO = "alice/todo-app"
AMOUNT = 1_000_000


SOURCES = {
    "src/app.py": "from src import util\n\n\ndef main():\n    return util.helper()\n",
    "src/util.py": "def helper():\n    return 1\n\n\nclass Store:\n    def get(self, key):\n        return key\n",
    "src/__init__.py": "",
    "web/index.ts": "import { x } from './lib';\nexport function page(): number { return x; }\n",
    "web/lib.ts": "export const x = 1;\n",
}


def plant_sources(project: Path, outside: Path) -> None:
    for rel, text in SOURCES.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    outside.mkdir(exist_ok=True)
    (outside / "evil.py").write_text("def stolen():\n    return 'outside'\n")
    (outside / "evil.spec.md").write_text("---\ntype: module-spec\nrelatedFiles:\n  - \"src/util.py\"\n---\nfar\n")
    (project / "specs").mkdir(exist_ok=True)
    (project / "specs" / "linked").symlink_to(outside, target_is_directory=True)
    (project / "src" / "evil.py").symlink_to(outside / "evil.py")
    (project / "lib").symlink_to(outside, target_is_directory=True)


@dataclass
class CampaignWorld:
    project: Path
    people: dict[str, Services]
    outside: Path | None = None

    @classmethod
    def create(cls, project: Path, database_url: str | None = None, sources: bool = False) -> CampaignWorld:
        keys = Keystore(Settings(project=project).keystore_dir)
        for name in ("alice", "bob", "carol", "default"):
            keys.new(name)
        settings = Settings(project=project, identity="alice")
        record_resolver(Settings(project=project, identity="default"))  # "default" serves: it reports merges
        chain = ledger(settings)
        chain.mint(keys.load("alice").address, "USDT", 100 * AMOUNT)
        chain.close()
        forge = local_forge(settings, "alice")
        forge.create_repo(REPO)
        forge.close()
        outside = project.parent / f"{project.name}-outside" if sources else None
        if outside is not None:
            plant_sources(project, outside)
        world = cls(project, {n: build_services(Settings(project=project, identity=n, database_url=database_url))
                              for n in ("alice", "bob")}, outside)
        alice = world.people["alice"]
        spec = specs.specify(alice, "Users can export their to-do list as CSV")
        specs.plan(alice, spec["feature_id"])
        specs.tasks(alice, spec["feature_id"])
        publish.publish_issue_with_metadata(alice, repo=REPO, feature_id=spec["feature_id"],
                                            spec_path=spec["paths"]["spec"], amount=str(AMOUNT), asset="USDT",
                                            network=alice.chain.network)
        return world

    def snapshot(self) -> dict[str, Any]:
        """What a refusal must not change."""
        s = self.people["alice"]
        forge_rows = s.forge.db.query(  # type: ignore[attr-defined]
            "SELECT repo, number, title, body, labels, state, merged FROM issues ORDER BY repo, number")
        comments = s.forge.db.query("SELECT id, body FROM comments ORDER BY id")  # type: ignore[attr-defined]
        return {
            "events": s.store.recorder.max_notification_id(),
            "chain": s.chain.latest_version(),  # type: ignore[attr-defined]
            "forge": hashlib.sha256(repr((forge_rows, comments)).encode()).hexdigest(),
            "files": self.files(),
        }

    def files(self) -> dict[str, str]:
        found = {}
        for path in sorted(self.project.rglob("*")):
            rel = path.relative_to(self.project).as_posix()
            if rel.startswith(".code3") or not path.is_file():
                continue
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        return found

    def outside_files(self) -> dict[str, str]:
        """What the planted symlinks lead to: no call may change it, refused or not."""
        if self.outside is None:
            return {}
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(self.outside.iterdir())}

    def close(self) -> None:
        for services in self.people.values():
            services.close()
