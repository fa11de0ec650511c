"""A small embedded project for the campaigns: alice (sponsor) with a published bounty, bob and carol
(workers), a repository on the embedded forge — and a snapshot of everything a refused call must leave
unchanged (the event log, the ledger, the forge, the project's files)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.keystore import Keystore
from code3.settings import Settings
from code3.wiring import build_services, ledger, local_forge
from mcp_tools.lifecycle import publish, specs
from mcp_tools.services import Services

REPO = "alice/todo-app"
AMOUNT = 1_000_000


@dataclass
class CampaignWorld:
    project: Path
    people: dict[str, Services]

    @classmethod
    def create(cls, project: Path, database_url: str | None = None) -> CampaignWorld:
        keys = Keystore(Settings(project=project).keystore_dir)
        for name in ("alice", "bob", "carol", "default"):
            keys.new(name)
        settings = Settings(project=project, identity="alice")
        chain = ledger(settings)
        chain.mint(keys.load("alice").address, "USDT", 100 * AMOUNT)
        chain.close()
        forge = local_forge(settings, "alice")
        forge.create_repo(REPO)
        forge.close()
        world = cls(project, {n: build_services(Settings(project=project, identity=n, database_url=database_url))
                              for n in ("alice", "bob")})
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

    def close(self) -> None:
        for services in self.people.values():
            services.close()
