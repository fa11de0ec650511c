"""What a command handler is given: the store, the ports and the acting identity. Built by code3.wiring."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from adapters.code_parser.port import CodeParser
from adapters.event_store import EventStore
from adapters.llm.port import LLM
from adapters.paths import ProjectPaths
from adapters.ports import Chain, Forge, Signer, SpecWriter
from adapters.sql import SqlDb
from domain.knowledge.annotation import Sealer


@dataclass
class Services:
    store: EventStore
    forge: Forge
    chain: Chain
    signer: Signer
    writer: SpecWriter
    project: Path
    workspace: Path
    views: SqlDb
    asset: str = "USDT"
    llm: LLM | None = None  # the model behind reverse-spec (None: the offline writer); see code3.wiring.llm
    paths: ProjectPaths | None = None  # the project path resolver (built from `project` when None)
    parser: CodeParser | None = None  # the code parser (a tree-sitter one on first use when None)
    sealer: Sealer | None = None  # seals secret annotations (a SecretBox in the keystore; see code3.wiring)
    loom_share_internal: bool = False  # ai-loom: answer `internal` annotations' comments (CODE3_LOOM_SHARE_INTERNAL)
    nexus_poll_s: float = 0.2  # seconds between the CodeNexus watcher's reads of the log (CODE3_NEXUS_POLL_S)
    amount_warn_below: int = 1_000_000  # publish warns below this many smallest units (CODE3_AMOUNT_WARN_BELOW)
    refuse_open_questions: bool = False  # plan and publish refuse open questions (CODE3_REFUSE_OPEN_QUESTIONS)

    def close(self) -> None:
        self.store.close()
        self.views.close()
        for port in (self.forge, self.chain, self.llm):
            close = getattr(port, "close", None)
            if close is not None:
                close()

    @property
    def specs_dir(self) -> Path:
        return self.project / "specs"
