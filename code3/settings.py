"""Configuration from the environment (flags override): every variable, its default and its meaning."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from domain.contract import DEFAULT_COOLING_PERIOD

VARIABLES = {
    "CODE3_PROJECT": "project root; .code3/ and specs/ live under it (default: the current directory)",
    "CODE3_IDENTITY": "name of the key in the keystore that signs as this server (default: default)",
    "CODE3_KEYSTORE": "directory of named keys (default: <project>/.code3/keys)",
    "CODE3_WORKSPACE": "where forks are cloned for work (default: <project>/.code3/workspaces/<identity>)",
    "CODE3_FORGE": "local (embedded forge, the default)",
    "CODE3_CHAIN": "local (embedded ledger, the default)",
    "CODE3_DATABASE_URL": "postgresql://user:pass@host:port/db[?schema=s] for the event store "
                          "(default: SQLite at <project>/.code3/events.sqlite)",
    "CODE3_COOLING_PERIOD": "seconds between merge and claim on a new local ledger "
                            f"(default: {DEFAULT_COOLING_PERIOD})",
    "CODE3_ASSET": "default asset symbol (default: USDT)",
    "CODE3_LOG_LEVEL": "log level on stderr (default: WARNING)",
    "GITHUB_WEBHOOK_SECRET": "secret of the GitHub webhook "
                             "(default: generated once into <project>/.code3/webhook_secret)",
}


@dataclass
class Settings:
    project: Path
    identity: str = "default"
    keystore: Path | None = None
    workspace: Path | None = None
    forge: str = "local"
    chain: str = "local"
    database_url: str | None = None
    cooling_period: int = DEFAULT_COOLING_PERIOD
    asset: str = "USDT"
    log_level: str = "WARNING"
    webhook_secret: str | None = field(default=None, repr=False)
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def state_dir(self) -> Path:
        return self.project / ".code3"

    @property
    def keystore_dir(self) -> Path:
        return self.keystore or self.state_dir / "keys"

    @property
    def workspace_dir(self) -> Path:
        return self.workspace or self.state_dir / "workspaces" / self.identity

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: object) -> Settings:
        e = dict(os.environ if env is None else env)
        project = Path(str(overrides.pop("project", None) or e.get("CODE3_PROJECT") or os.getcwd())).resolve()
        values: dict[str, object] = {
            "project": project,
            "identity": e.get("CODE3_IDENTITY", "default"),
            "keystore": Path(e["CODE3_KEYSTORE"]) if e.get("CODE3_KEYSTORE") else None,
            "workspace": Path(e["CODE3_WORKSPACE"]) if e.get("CODE3_WORKSPACE") else None,
            "forge": e.get("CODE3_FORGE", "local"),
            "chain": e.get("CODE3_CHAIN", "local"),
            "database_url": e.get("CODE3_DATABASE_URL") or None,
            "cooling_period": int(e.get("CODE3_COOLING_PERIOD", DEFAULT_COOLING_PERIOD)),
            "asset": e.get("CODE3_ASSET", "USDT"),
            "log_level": e.get("CODE3_LOG_LEVEL", "WARNING").upper(),
            "webhook_secret": e.get("GITHUB_WEBHOOK_SECRET") or None,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]
