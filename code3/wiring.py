"""Builds the adapters the settings ask for. The only place where an engine or client is created."""

from __future__ import annotations

import secrets
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from adapters.event_store import open_store
from adapters.home import check_home_outside_work_trees
from adapters.keystore import Keystore
from adapters.llm.port import LLM, MissingKeyLLM
from adapters.local_forge import LocalForge
from adapters.local_ledger import LocalLedger
from adapters.offline_writer import OfflineWriter
from adapters.ports import Chain, Forge, Signer, SpecWriter
from adapters.project_record import ProjectRecord, read_record
from adapters.secret_box import SecretBox
from adapters.sql import open_db
from adapters.state_guard import guard_project
from code3.settings import CHAINS, FORGES, LLMS, SPEC_WRITERS, Settings
from domain.errors import Code, Code3Error
from mcp_tools.services import Services

if TYPE_CHECKING:
    from scheduler.worker import Worker


def guard(settings: Settings) -> None:
    """Refuse a project whose `.code3/` a repository could have planted (adapters.state_guard), and a
    CODE3_HOME (or CODE3_KEYSTORE) inside a git work tree (adapters.home)."""
    check_home(settings)
    guard_project(settings.project)


def check_home(settings: Settings) -> None:
    """Keys live outside every work tree: a CODE3_HOME inside one is refused (`code3 init`, `code3 mcp` at
    start, every command that opens the project's state)."""
    check_home_outside_work_trees(settings.home_dir, settings.keystore)


def ledger(settings: Settings) -> LocalLedger:
    """The embedded ledger itself (for its faucet and clock), whatever chain the services use. Opening it
    creates no key: the resolver is recorded by the first process that reports merges (`record_resolver`)."""
    guard(settings)
    return LocalLedger(settings.state_dir / "ledger.sqlite", cooling_period=settings.cooling_period)


def record_resolver(settings: Settings) -> None:
    """`code3 serve` and `code3 worker` report merges: on an embedded ledger that has no resolver yet, record
    CODE3_RESOLVER's key, else this process's own identity (one rule: the resolver is serve's identity)."""
    if settings.chain != "local":
        return
    found = ledger(settings)
    try:
        if found.config().resolver is None:
            name = settings.resolver_name
            own = name == settings.identity  # its own key is created on demand; another one must exist
            signer = identity(settings, name) if own else Keystore(settings.keystore_dir).load(name)
            found.initialize_roles(signer.address)
    finally:
        found.close()


def local_forge(settings: Settings, actor: str) -> LocalForge:
    """The embedded forge; its hooks' secrets are kept with the project's secrets, outside the work tree."""
    guard(settings)
    return LocalForge(settings.state_dir / "forge", actor=actor, secrets=settings.secrets_dir / "forge_hooks")


def chain(settings: Settings) -> Chain:
    if settings.chain == "local":
        return ledger(settings)
    if settings.chain == "aptos":
        if not settings.aptos_module_address:
            raise Code3Error(Code.VALIDATION, "CODE3_CHAIN=aptos needs the module's address",
                             "set CODE3_APTOS_MODULE_ADDRESS to where code3::bounty is published")
        from adapters.aptos import AptosChain

        return AptosChain(settings.aptos_node_url, settings.aptos_module_address, network=settings.aptos_network,
                          asset_metadata={settings.asset: settings.aptos_asset_metadata or ""})
    raise Code3Error(Code.VALIDATION, f"unknown CODE3_CHAIN={settings.chain!r}", f"use one of {', '.join(CHAINS)}")


def forge(settings: Settings, actor: str) -> Forge:
    """`actor` names the embedded forge's user; on GitHub the token's user is the actor."""
    if settings.forge == "local":
        return local_forge(settings, actor)
    if settings.forge == "github":
        if not settings.github_token:
            raise Code3Error(Code.VALIDATION, "CODE3_FORGE=github needs a token", "set GITHUB_TOKEN")
        from adapters.github import GitHubForge
        from adapters.github_errors import github_policy

        return GitHubForge(settings.github_token, base_url=settings.github_api_url,
                           git_base_url=settings.github_git_url, policy=github_policy(
                               budget_s=settings.github_retry_budget))
    raise Code3Error(Code.VALIDATION, f"unknown CODE3_FORGE={settings.forge!r}", f"use one of {', '.join(FORGES)}")


def identity(settings: Settings, name: str) -> Signer:
    """The key `name`. On the embedded default one that is missing is created (stderr says so), unless
    `code3 init` set the project up: then only `code3 init` and `code3 account new` create keys, and a missing
    one is refused (`missing_identity`) instead of silently becoming a second, unfunded identity."""
    keystore = Keystore(settings.keystore_dir)
    if settings.chain == "local" and name not in keystore.names():
        record = read_record(settings.state_dir)
        if record is not None:
            raise missing_identity(settings, name, record)
        created = keystore.get_or_create(name)
        print(f"code3: created the identity {name!r} ({created.address}) in {keystore.directory} on first use "
              "(embedded default)", file=sys.stderr, flush=True)
        return created
    return keystore.load(name)


def missing_identity(settings: Settings, name: str, record: ProjectRecord) -> Code3Error:
    """The refusal of a server that would create a key in a project `code3 init` set up: where it looked,
    where init put the key (when it did), and what to run."""
    looked = f"no key {name!r} in CODE3_HOME {settings.home_dir} (keystore {settings.keystore_dir})"
    set_up = record.identities.get(name)
    if set_up is not None:
        env = f"CODE3_HOME={set_up.home}" + (f" CODE3_KEYSTORE={set_up.keystore}"
                                             if set_up.keystore != str(Path(set_up.home) / "keys") else "")
        return Code3Error(Code.NOT_FOUND, f"{looked}: code3 init set this project up with {name!r} "
                          f"({set_up.address}) in CODE3_HOME {set_up.home}; this server creates no second one",
                          f"start the server with {env} in its environment (run `code3 init` again in "
                          f"{settings.project} to write it into .mcp.json's env), then restart the MCP client")
    option = "" if name == "default" else f" --identity {name}"
    return Code3Error(Code.NOT_FOUND, f"{looked}: this project was set up by code3 init, and a server creates no "
                      "key by itself", f"create it with `code3 init{option}` in {settings.project} (add `--role "
                      f"worker` for a worker's entry; or `code3 account new {name}`), with this server's CODE3_HOME")


class LazySigner:
    """The acting identity, loaded the first time a tool signs: the local tools (specify, plan, tasks)
    need no key. On the embedded default a missing key is created then, and stderr says so."""

    def __init__(self, settings: Settings) -> None:
        self.name = settings.identity
        self._settings = settings
        self._signer: Signer | None = None
        self._loading = threading.Lock()  # concurrent first calls load (or create) the key once

    def load(self) -> Signer:
        if self._signer is None:
            with self._loading:
                if self._signer is None:
                    self._signer = identity(self._settings, self.name)
        return self._signer

    @property
    def address(self) -> str:
        return self.load().address

    @property
    def private_key_hex(self) -> str:
        return self.load().private_key_hex

    def __repr__(self) -> str:
        return f"LazySigner(name={self.name!r}, loaded={self._signer is not None})"


def llm(settings: Settings) -> LLM | None:
    """The model behind reverse-spec and the spec writer: Claude with a key, None (the offline writers) without
    one; with CODE3_LLM=anthropic and no key, a stand-in whose every call answers 未检测到 ANTHROPIC_API_KEY."""
    if settings.llm not in LLMS:
        raise Code3Error(Code.VALIDATION, f"unknown CODE3_LLM={settings.llm!r}", f"use one of {', '.join(LLMS)}")
    if settings.llm == "offline":
        return None
    if settings.anthropic_api_key:
        return _anthropic(settings, settings.anthropic_api_key)
    return MissingKeyLLM() if settings.llm == "anthropic" else None


def _anthropic(settings: Settings, key: str) -> LLM:
    from adapters.llm.anthropic_llm import AnthropicLLM
    from adapters.scrub import register_secret

    register_secret(key)
    return AnthropicLLM(key, model=settings.llm_model, base_url=settings.anthropic_base_url)


def spec_model(settings: Settings) -> LLM | None:
    """The one place that decides whether `spec_mcp.*` call a model: only when the user opted in with
    CODE3_SPEC_WRITER=anthropic. An ANTHROPIC_API_KEY that Claude Code passes down with its whole environment
    is no such choice (the calls would be billed to that key, outside Claude Code's usage)."""
    if settings.spec_writer not in SPEC_WRITERS:
        raise Code3Error(Code.VALIDATION, f"unknown CODE3_SPEC_WRITER={settings.spec_writer!r}",
                         f"use one of {', '.join(SPEC_WRITERS)}")
    if settings.spec_writer == "template":
        return None
    if settings.anthropic_api_key:
        return _anthropic(settings, settings.anthropic_api_key)
    return MissingKeyLLM("export ANTHROPIC_API_KEY, or set CODE3_SPEC_WRITER=template to write specs from the "
                         "templates without a model")


def spec_writer(model: LLM | None, templates: Path | None = None, project: Path | None = None) -> SpecWriter:
    """`templates`: SPEC_KIT_TEMPLATES_DIR (a user's spec-kit templates), None for the built-in ones. With a
    model, the LLM-backed writer: the offline writer's output as its frame, the project's skeleton as context."""
    if model is None:
        return OfflineWriter(templates)
    from adapters.llm.spec_writer import LLMSpecWriter, project_skeleton

    context = (lambda: project_skeleton(project)) if project is not None else None
    return LLMSpecWriter(model, context, offline=OfflineWriter(templates))


def build_services(settings: Settings) -> Services:
    guard(settings)
    model = llm(settings)
    return Services(
        store=open_store(settings.project, settings.database_url),
        forge=forge(settings, settings.identity),
        chain=chain(settings),
        signer=LazySigner(settings),  # the Signer protocol, its key loaded on first use
        writer=spec_writer(spec_model(settings), settings.spec_kit_templates_dir, settings.project),
        llm=model,
        project=settings.project,
        workspace=settings.workspace_dir,
        views=open_db(settings.project, settings.database_url),
        asset=settings.asset,
        sealer=SecretBox(settings.secrets_dir),  # secret annotations' key, created on the first seal
        loom_share_internal=settings.loom_share_internal,
        nexus_poll_s=settings.nexus_poll_s,
        amount_warn_below=settings.amount_warn_below,
        refuse_open_questions=settings.refuse_open_questions,
    )


def worker(settings: Settings) -> Worker:
    """The worker, able to act as any key of the keystore (auto-claim for local winners, refunds for sponsors)."""
    from scheduler.worker import Worker

    return Worker(lambda name: build_services(replace(settings, identity=name)), settings.identity,
                  Keystore(settings.keystore_dir))


def webhook_secret(settings: Settings) -> bytes:
    """GITHUB_WEBHOOK_SECRET, or the project's own generated one (the embedded forge signs with it)."""
    from adapters.private_files import read_or_create_private
    from adapters.scrub import register_secret

    if settings.webhook_secret:
        register_secret(settings.webhook_secret)
        return settings.webhook_secret.encode()
    # 0600 in the project's 0700 secrets directory (CODE3_HOME), written once (a racing process reads the same)
    secret = read_or_create_private(settings.secrets_dir / "webhook_secret", secrets.token_hex(32).encode()).strip()
    register_secret(secret)
    return secret


def ensure_identity(settings: Settings, reports_merges: bool = False) -> None:
    """On the embedded default, a server started in an empty directory creates its key instead of failing;
    `reports_merges` (serve, worker): also record the ledger's resolver if it has none (`record_resolver`)."""
    guard(settings)  # a refused project gets no key either
    if settings.chain == "local":
        identity(settings, settings.identity)
        if reports_merges:
            record_resolver(settings)
