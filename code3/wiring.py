"""Builds the adapters the settings ask for. The only place where an engine or client is created."""

from __future__ import annotations

import os
import secrets

from adapters.event_store import open_store
from adapters.keystore import Keystore
from adapters.local_forge import LocalForge
from adapters.local_ledger import LocalLedger
from adapters.offline_writer import OfflineWriter
from code3.settings import Settings
from domain.errors import Code, Code3Error
from mcp_tools.context import Services
from projections.views import open_views


def ledger(settings: Settings) -> LocalLedger:
    if settings.chain != "local":
        raise Code3Error(Code.VALIDATION, f"CODE3_CHAIN={settings.chain!r} is not available in this version",
                         "use CODE3_CHAIN=local (the embedded ledger)")
    return LocalLedger(settings.state_dir / "ledger.sqlite", cooling_period=settings.cooling_period)


def forge(settings: Settings, actor: str) -> LocalForge:
    if settings.forge != "local":
        raise Code3Error(Code.VALIDATION, f"CODE3_FORGE={settings.forge!r} is not available in this version",
                         "use CODE3_FORGE=local (the embedded forge)")
    return LocalForge(settings.state_dir / "forge", actor=actor)


def build_services(settings: Settings) -> Services:
    signer = Keystore(settings.keystore_dir).load(settings.identity)
    return Services(
        store=open_store(settings.project, settings.database_url),
        forge=forge(settings, signer.name),
        chain=ledger(settings),
        signer=signer,
        writer=OfflineWriter(),
        project=settings.project,
        workspace=settings.workspace_dir,
        views=open_views(settings.project, settings.database_url),
        asset=settings.asset,
    )


def webhook_secret(settings: Settings) -> bytes:
    """GITHUB_WEBHOOK_SECRET, or the project's own generated one (the embedded forge signs with it)."""
    if settings.webhook_secret:
        return settings.webhook_secret.encode()
    path = settings.state_dir / "webhook_secret"
    if not path.exists():
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
    return path.read_text().strip().encode()


def ensure_identity(settings: Settings) -> None:
    """On the embedded default, a server started in an empty directory creates its key instead of failing."""
    if settings.chain == "local":
        Keystore(settings.keystore_dir).get_or_create(settings.identity)
