"""Configuration from the environment (flags override): every variable, its default and its meaning."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from adapters.home import code3_home
from domain.contract import DEFAULT_COOLING_PERIOD

VARIABLES = {
    "CODE3_PROJECT": "project root; .code3/ (non-secret state) and specs/ live under it (default: the current "
                     "directory)",
    "CODE3_HOME": "where keys and secrets live, outside any work tree: keys/ (identities) and projects/<key>/ "
                  "(each project's serve token, webhook secret and annotations' key) (default: "
                  "$XDG_CONFIG_HOME/code3, else ~/.config/code3)",
    "CODE3_IDENTITY": "name of the key in the keystore that signs as this server (default: default)",
    "CODE3_KEYSTORE": "directory of named keys (default: CODE3_HOME/keys)",
    "CODE3_WORKSPACE": "where forks are cloned for work (default: <project>/.code3/workspaces/<identity>)",
    "CODE3_FORGE": "local (the embedded forge, default) or github",
    "CODE3_CHAIN": "local (the embedded ledger, default) or aptos",
    "GITHUB_TOKEN": "with CODE3_FORGE=github: the token the forge acts with (never logged)",
    "CODE3_GITHUB_API_URL": "with CODE3_FORGE=github: REST base URL (default: https://api.github.com; "
                            "GitHub Enterprise: https://HOST/api/v3)",
    "CODE3_GITHUB_GIT_URL": "with CODE3_FORGE=github: git base URL for clone/push (default: derived from the API URL)",
    "CODE3_GITHUB_RETRY_BUDGET": "with CODE3_FORGE=github: seconds of rate-limit/5xx waiting before "
                                 "E_GH_RATE_LIMIT (default: 120)",
    "CODE3_APTOS_NODE_URL": "with CODE3_CHAIN=aptos: fullnode REST URL including /v1 "
                            "(default: https://fullnode.testnet.aptoslabs.com/v1)",
    "CODE3_APTOS_NETWORK": "with CODE3_CHAIN=aptos: network name checked against publish's `network` "
                           "(default: testnet)",
    "CODE3_APTOS_MODULE_ADDRESS": "with CODE3_CHAIN=aptos: address the code3::bounty module is published at (required)",
    "CODE3_APTOS_ASSET_METADATA": "with CODE3_CHAIN=aptos: metadata object address of the escrowed asset (USDT)",
    "CODE3_DATABASE_URL": "postgresql://user:pass@host:port/db[?schema=s] for the event store "
                          "(default: SQLite at <project>/.code3/events.sqlite)",
    "CODE3_DB_OUTAGE_EXIT": "on PostgreSQL: seconds serve and worker run with their database out of reach before "
                            "they exit (status 3) for a supervisor to restart them (default: 300; 0: never)",
    "CODE3_RESOLVER": "embedded ledger: name of the keystore key recorded as the resolver (the account that "
                      "reports merges) by the first `code3 serve` or `code3 worker` on a ledger that has none "
                      "(default: that process's own identity, CODE3_IDENTITY)",
    "CODE3_COOLING_PERIOD": "seconds between merge and claim on a new local ledger "
                            f"(default: {DEFAULT_COOLING_PERIOD})",
    "CODE3_ASSET": "default asset symbol (default: USDT)",
    "SPEC_KIT_TEMPLATES_DIR": "directory of your own spec-kit templates (spec-template.md, plan-template.md, "
                              "tasks-template.md; e.g. a project's .specify/templates) for spec_mcp.specify/plan/tasks "
                              "(default: Code3's built-in templates with spec-kit's sections)",
    "CODE3_LLM": "reverse-spec and spec_mcp.* writer: auto (default: Claude when ANTHROPIC_API_KEY is set, else the "
                 "offline writer), anthropic (the key is required: without it tools answer 未检测到 ANTHROPIC_API_KEY) "
                 "or offline",
    "CODE3_LLM_MODEL": "with the Anthropic LLM: the model id (default: claude-sonnet-4-6)",
    "ANTHROPIC_API_KEY": "key of the Anthropic Messages API; when set, specs are written by Claude (never logged)",
    "ANTHROPIC_BASE_URL": "base URL of the Anthropic Messages API (default: https://api.anthropic.com)",
    "CODE3_LOG_LEVEL": "log level on stderr (default: WARNING)",
    "CODE3_LOG_FORMAT": "text (default) or json: each stderr log line one JSON object (time, level, logger, "
                        "message and the record's extra fields), secrets scrubbed as in text",
    "CODE3_MAX_ANSWER_BYTES": "the most bytes a tool answer takes as the JSON-RPC line a client receives (its text and "
                              "structuredContent both carry the payload); prepare, batch, ai-loom.list_contexts and "
                              "stitch cut a bigger answer and say how to fetch the rest, any other is refused with a "
                              "coded error (default: 262144, at least 4096)",
    "CODE3_CACHE_DIR": "where `code3 mcp` and `code3 serve` keep the tools/list manifest, rebuilt whenever Code3's "
                       "sources or the SDK change, so a start-up need not import every tool family "
                       "(default: $XDG_CACHE_HOME/code3, else ~/.cache/code3; off: build it at every start)",
    "CODE3_SERVE_TOKEN": "bearer token `code3 serve` requires on /mcp and its other routes but the webhook, at least "
                         "16 characters (default: generated once into CODE3_HOME/projects/<key>/serve_token; "
                         "never logged)",
    "CODE3_WEB_SESSION_HOURS": "how long a login to `code3 serve`'s web page lasts, in hours (default: 12; at most "
                               "720): the session cookie's Max-Age, also checked by the serve",
    "CODE3_LOOM_SHARE_INTERNAL": "ai-loom: 1/true/yes/on to answer `internal` annotations' comments over MCP and "
                                 "REST and stitch them; off by default (their comments are null and stitch leaves "
                                 "them out); `secret` ones never leave whatever this says",
    "GITHUB_WEBHOOK_SECRET": "secret of the GitHub webhook "
                             "(default: generated once into CODE3_HOME/projects/<key>/webhook_secret)",
}


@dataclass
class Settings:
    project: Path
    identity: str = "default"
    home: Path | None = None  # CODE3_HOME; None: from the environment when asked (adapters.home.code3_home)
    keystore: Path | None = None
    workspace: Path | None = None
    forge: str = "local"
    chain: str = "local"
    database_url: str | None = None
    cooling_period: int = DEFAULT_COOLING_PERIOD
    resolver: str | None = None  # None: the identity of the serve or worker that first opens the ledger
    asset: str = "USDT"
    log_level: str = "WARNING"
    webhook_secret: str | None = field(default=None, repr=False)
    serve_token: str | None = field(default=None, repr=False)
    github_token: str | None = field(default=None, repr=False)
    github_api_url: str = "https://api.github.com"
    github_git_url: str | None = None
    github_retry_budget: float = 120.0
    aptos_node_url: str = "https://fullnode.testnet.aptoslabs.com/v1"
    aptos_network: str = "testnet"
    aptos_module_address: str | None = None
    aptos_asset_metadata: str | None = None
    spec_kit_templates_dir: Path | None = None
    llm: str = "auto"
    llm_model: str = "claude-sonnet-4-6"
    anthropic_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str | None = None
    loom_share_internal: bool = False
    cache_dir: Path | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def state_dir(self) -> Path:
        return self.project / ".code3"

    @property
    def home_dir(self) -> Path:
        """CODE3_HOME: keys and secrets, outside any work tree."""
        return self.home or code3_home()

    @property
    def keystore_dir(self) -> Path:
        return self.keystore or self.home_dir / "keys"

    @property
    def secrets_dir(self) -> Path:
        """This project's secrets (serve token, webhook secret, annotations' key): CODE3_HOME/projects/<key>/."""
        from adapters.home import project_secrets_dir

        return project_secrets_dir(self.project, self.home_dir)

    @property
    def resolver_name(self) -> str:
        """The key a merge-reporting process records as the embedded ledger's resolver: CODE3_RESOLVER, else
        its own identity."""
        return self.resolver or self.identity

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
            "home": code3_home(e),
            "keystore": Path(e["CODE3_KEYSTORE"]).expanduser().resolve() if e.get("CODE3_KEYSTORE") else None,
            "workspace": Path(e["CODE3_WORKSPACE"]) if e.get("CODE3_WORKSPACE") else None,
            "forge": e.get("CODE3_FORGE", "local"),
            "chain": e.get("CODE3_CHAIN", "local"),
            "database_url": e.get("CODE3_DATABASE_URL") or None,
            "cooling_period": int(e.get("CODE3_COOLING_PERIOD", DEFAULT_COOLING_PERIOD)),
            "resolver": e.get("CODE3_RESOLVER") or None,
            "asset": e.get("CODE3_ASSET", "USDT"),
            "log_level": e.get("CODE3_LOG_LEVEL", "WARNING").upper(),
            "webhook_secret": e.get("GITHUB_WEBHOOK_SECRET") or None,
            "serve_token": e.get("CODE3_SERVE_TOKEN") or None,
            "github_token": e.get("GITHUB_TOKEN") or None,
            "github_api_url": e.get("CODE3_GITHUB_API_URL") or "https://api.github.com",
            "github_git_url": e.get("CODE3_GITHUB_GIT_URL") or None,
            "github_retry_budget": float(e.get("CODE3_GITHUB_RETRY_BUDGET") or 120),
            "aptos_node_url": e.get("CODE3_APTOS_NODE_URL") or "https://fullnode.testnet.aptoslabs.com/v1",
            "aptos_network": e.get("CODE3_APTOS_NETWORK") or "testnet",
            "aptos_module_address": e.get("CODE3_APTOS_MODULE_ADDRESS") or None,
            "aptos_asset_metadata": e.get("CODE3_APTOS_ASSET_METADATA") or None,
            "spec_kit_templates_dir": Path(e["SPEC_KIT_TEMPLATES_DIR"]) if e.get("SPEC_KIT_TEMPLATES_DIR") else None,
        }
        values.update({
            "llm": (e.get("CODE3_LLM") or "auto").lower(),
            "llm_model": e.get("CODE3_LLM_MODEL") or "claude-sonnet-4-6",
            "anthropic_api_key": e.get("ANTHROPIC_API_KEY") or None,
            "anthropic_base_url": e.get("ANTHROPIC_BASE_URL") or None,
            "loom_share_internal": _flag(e.get("CODE3_LOOM_SHARE_INTERNAL")),
            "cache_dir": _cache_dir(e),
        })
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]


def _cache_dir(e: dict[str, str]) -> Path | None:
    """CODE3_CACHE_DIR, or the user's cache directory by the XDG convention; None for `off` or no home."""
    chosen = (e.get("CODE3_CACHE_DIR") or "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen)
    if e.get("XDG_CACHE_HOME"):
        return Path(e["XDG_CACHE_HOME"]) / "code3"
    home = e.get("HOME")
    return Path(home) / ".cache" / "code3" if home else None


def _flag(value: str | None) -> bool:
    """An on/off variable: 1, true, yes or on (any case) is on; anything else, or unset, is off."""
    return (value or "").strip().lower() in ("1", "true", "yes", "on")
