"""Configuration from the environment (flags override), each variable declared once.

A variable is one field of `Settings`: its type is the annotation, its default the field's, and `env(...)`
in the field's metadata gives its name, what it means and how its text is read (a `Reader`: the bound or
the choices, and what a valid value looks like); a field with `repr=False` holds a secret, never shown.
From those fields come `Settings.from_env`, `code3 config` (`describe`) and the table of
docs/configuration.md (`markdown_table`: tests/unit/test_settings.py keeps the page equal to it, and
`python -m code3.settings` rewrites it). A bad value is refused by name before anything is
opened: `Code3Error(E_VALIDATION, "CODE3_X='…' is not …", "set CODE3_X to …")`, which the CLI prints as
every other refusal.

`Settings(...)` itself reads nothing: tests and the demo build it from values. `home`, `keystore`,
`workspace` and `cache_dir` left None mean "the default, found when asked" (see the properties).

Why not pydantic-settings: importing it costs ~100 ms more on every `code3 mcp` or `code3` start (this
module takes ~15 ms, stdlib only); its `Settings(...)` would read the environment, which the tests and the
demo rely on it not doing; and a few defaults come from other variables (CODE3_HOME from XDG_CONFIG_HOME or
HOME, CODE3_CACHE_DIR from XDG_CACHE_HOME, or `off`), which a table of readers says as plainly.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from adapters.home import code3_home
from domain.bounties.contract_terms import DEFAULT_COOLING_PERIOD, MAX_COOLING_PERIOD
from domain.errors import Code, Code3Error

FORGES = ("local", "github")
CHAINS = ("local", "aptos")
LLMS = ("auto", "anthropic", "offline")
SPEC_WRITERS = ("template", "anthropic")  # who writes spec_mcp.specify/plan/tasks: opt-in to a model
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOG_FORMATS = ("text", "json")
KEY_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")  # adapters.keystore.NAME (importing it would load cryptography)
# bounds of variables that other modules also read at use (tests/unit/test_settings.py checks that they agree)
MIN_ANSWER_BYTES = 4096  # mcp_tools.answer_size.limit
MAX_SESSION_HOURS = 720  # mcp_tools.web.auth.session_hours


# Readers: how a variable's text becomes its value


@dataclass(frozen=True)
class Reader:
    """`parse` turns a value's text into the value, or raises ValueError; `expects` says what a valid value
    looks like (in the refusal, and with `documented` in `code3 config` and docs/configuration.md too); `example` is
    one."""

    expects: str
    example: str
    parse: Callable[[str], Any]
    documented: bool = False
    strip: bool = True  # read without surrounding blanks (a secret is taken as given)
    shown: Callable[[str], str] | None = None  # how a refused value appears in the message (default: as given)


def text(example: str = "x", *, strip: bool = True) -> Reader:
    return Reader("any text", example, str, strip=strip)


SECRET = text("…", strip=False)


def key_name() -> Reader:
    def parse(raw: str) -> str:
        if not KEY_NAME.fullmatch(raw):
            raise ValueError(raw)
        return raw

    return Reader("a key name: 1-32 lower-case letters, digits, '-' or '_', starting with a letter or digit",
                  "alice", parse)


def choice(*options: str, upper: bool = False, documented: bool = False) -> Reader:
    """One of `options`, in any case. Undocumented, the meaning names each option (a test checks that it does)."""
    def parse(raw: str) -> str:
        value = raw.upper() if upper else raw.lower()
        if value not in options:
            raise ValueError(raw)
        return value

    return Reader(f"one of {', '.join(options)}", options[-1], parse, documented=documented)


def whole(unit: str, low: int, high: int | None = None) -> Reader:
    """A whole number of `unit`, digits only, from `low` (to `high`)."""
    def parse(raw: str) -> int:
        if not re.fullmatch(r"[0-9]{1,20}", raw) or int(raw) < low or (high is not None and int(raw) > high):
            raise ValueError(raw)
        return int(raw)

    bound = f"from {low} to {high}" if high is not None else f"at least {low}"
    return Reader(f"a whole number of {unit}, {bound}", str(low), parse, documented=True)


def number(unit: str, low: float = 0, high: float | None = None, *, above: bool = False) -> Reader:
    """A finite number of `unit` (decimals allowed), at least `low` (above it, with `above`), at most `high`."""
    def parse(raw: str) -> float:
        value = float(raw)  # ValueError: no number
        if not math.isfinite(value) or value < low or (above and value == low) or (high is not None and value > high):
            raise ValueError(raw)
        return value

    bound = (f"above {low:g}" if above else f"at least {low:g}") + (f", at most {high:g}" if high is not None else "")
    return Reader(f"a number of {unit}, {bound}", f"{high if high is not None else low + 1:g}", parse,
                  documented=True)


def flag() -> Reader:
    def parse(raw: str) -> bool:
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(raw)

    return Reader("`1`/`true`/`yes`/`on`, or `0`/`false`/`no`/`off`", "1", parse, documented=True)


def _no_password(raw: str) -> str:
    return re.sub(r"(://[^/@:]*:)[^/@]*@", r"\1***@", raw)


def url(*schemes: str, example: str) -> Reader:
    """An absolute URL with one of `schemes` and a host; a password in it is never shown back."""
    def parse(raw: str) -> str:
        from urllib.parse import urlsplit

        parts = urlsplit(raw)
        if parts.scheme.lower() not in schemes or not parts.hostname or any(c.isspace() for c in raw):
            raise ValueError(raw)
        _ = parts.port  # ValueError: a port that is no number or out of range
        return raw

    return Reader(f"a {' or '.join(s + '://' for s in schemes)} URL with a host", example, parse, shown=_no_password)


def address() -> Reader:
    def parse(raw: str) -> str:
        if not re.fullmatch(r"(0x)?[0-9a-f]{1,64}", raw, re.IGNORECASE):
            raise ValueError(raw)
        return raw

    return Reader("an Aptos address: 0x and up to 64 hexadecimal digits", "0x1", parse)


def directory(*, resolve: bool = False) -> Reader:
    def parse(raw: str) -> Path:
        return Path(raw).expanduser().resolve() if resolve else Path(raw)

    return Reader("a directory", "/path/to/dir", parse)


def _cache_directory(raw: str) -> Path | None:
    return None if raw.lower() == "off" else Path(raw)


# Variables: one per field of Settings


@dataclass(frozen=True)
class Declared:
    """What `env(...)` puts in a field's metadata (see `env`)."""

    name: str
    meaning: str
    shown: str | None
    reader: Reader | None
    derive: Callable[[Mapping[str, str]], Any] | None
    see: str | None


_DECLARED = "code3.env"


def env(name: str, meaning: str, *, shown: str | None = None, reader: Reader | None = None,
        derive: Callable[[Mapping[str, str]], Any] | None = None, see: str | None = None) -> dict[str, Any]:
    """A field's metadata: read from the environment variable `name`, which means `meaning` (Markdown, as
    docs/configuration.md shows it: one short sentence, the row at most 300 characters; the rest belongs in the
    prose of the page `see` names). `shown`: the default as the docs show it (else the field's default, or
    "unset"); `reader`: how a value is read (else any text); `derive`: the value when the variable is unset, from
    the environment (else the field's default); `see`: the page of docs/ (and its heading's anchor) that says
    more, e.g. `"security.md#where-keys-and-secrets-live"`, which the row links to."""
    return {_DECLARED: Declared(name, meaning, shown, reader, derive, see)}


@dataclass(frozen=True)
class Variable:
    """One environment variable, as `Settings` declares it: how it is read and what the docs say of it."""

    name: str
    attribute: str  # of Settings
    meaning: str
    default: str  # as the docs show it (Markdown)
    example: str  # a valid value, for the refusal's hint
    reader: Reader
    derive: Callable[[Mapping[str, str]], Any] | None
    secret: bool
    see: str | None  # a page of docs/, and its heading's anchor

    def read(self, env: Mapping[str, str]) -> Any:
        """The value this variable gives in `env`; MISSING when it is unset (or blank) and nothing derives one."""
        raw = env.get(self.name)
        if raw is None or not raw.strip():
            return self.derive(env) if self.derive else MISSING
        try:
            return self.reader.parse(raw.strip() if self.reader.strip else raw)
        except ValueError:
            raise self.refusal(raw) from None

    def refusal(self, raw: str) -> Code3Error:
        value = raw.strip()
        value = (self.reader.shown or str)(value)
        value = "(hidden)" if self.secret else repr(value if len(value) <= 60 else value[:60] + "…")
        default = self.default.replace("`", "")
        if default.startswith("unset"):  # "unset", "unset: SQLite at …", "unset (required with aptos)"
            default = default.removeprefix("unset").lstrip(": ").strip("()") or "nothing"
        return Code3Error(Code.VALIDATION, f"{self.name}={value} is not a valid value",
                          f"{self.name} takes {self.reader.expects.replace('`', '')}, e.g. {self.name}="
                          f"{self.example}; unset, it is {default}")

    def described(self) -> str:
        """The meaning, and the rule a value follows when its reader documents one."""
        return f"{self.meaning}; {self.reader.expects}" if self.reader.documented else self.meaning


def _variable(f: Any) -> Variable:
    d: Declared = f.metadata[_DECLARED]
    secret = not f.repr
    reader = d.reader or (SECRET if secret else text())
    default = f.default
    plain = None if default in (None, MISSING) or isinstance(default, bool) else \
        f"{default:g}" if isinstance(default, float) else str(default)
    shown = d.shown or (f"`{plain}`" if plain is not None else "unset")
    return Variable(d.name, f.name, d.meaning, shown, plain or reader.example, reader, d.derive, secret, d.see)


def _xdg_cache(env: Mapping[str, str]) -> Path | None:
    """The user's cache directory by the XDG convention; None with no home."""
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "code3"
    home = env.get("HOME")
    return Path(home) / ".cache" / "code3" if home else None


def _cwd(env: Mapping[str, str]) -> Path:
    return Path(os.getcwd()).resolve()


_GITHUB = "with `CODE3_FORGE=github`: "
_APTOS = "with `CODE3_CHAIN=aptos`: "
# pages of docs/ (and headings) several declarations link to
_SEE_KEYS = "security.md#where-keys-and-secrets-live"
_SEE_APTOS = "aptos.md#configuration"
_SEE_MODEL = "reverse-spec.md#which-model-writes"


@dataclass
class Settings:
    """Every setting, in the order `code3 config` and docs/configuration.md list them."""

    project: Path = field(metadata=env(
        "CODE3_PROJECT", "project root; `.code3/` (events, ledger, forge, caches, workspaces: no key or secret) and "
        "`specs/` live under it", shown="current directory", reader=directory(resolve=True), derive=_cwd))
    home: Path | None = field(default=None, metadata=env(  # None: from the environment when asked (home_dir)
        "CODE3_HOME", "keys and secrets, outside any work tree: `keys/NAME.key` (identities) and "
        "`projects/<name>-<hash>/` (each project's secrets)", shown="`$XDG_CONFIG_HOME/code3`, else `~/.config/code3`",
        reader=directory(resolve=True), derive=code3_home, see=_SEE_KEYS))
    identity: str = field(default="default", metadata=env(
        "CODE3_IDENTITY", "the keystore key this server signs as: the acting sponsor or worker is never a tool "
        "argument", reader=key_name(), see="operations.md#identities-one-serve-per-identity"))
    keystore: Path | None = field(default=None, metadata=env(
        "CODE3_KEYSTORE", "directory of named keys (files are mode 0600)", shown="`CODE3_HOME/keys`",
        reader=directory(resolve=True), see=_SEE_KEYS))
    workspace: Path | None = field(default=None, metadata=env(
        "CODE3_WORKSPACE", "where `fork_and_prepare` clones forks", shown="`<project>/.code3/workspaces/<identity>`",
        reader=directory()))
    database_url: str | None = field(default=None, metadata=env(
        "CODE3_DATABASE_URL", "`postgresql://user:pass@host:port/db[?schema=name]` for the event store",
        shown="unset: SQLite at `<project>/.code3/events.sqlite`",
        reader=url("postgresql", "postgres", example="postgresql://code3:secret@127.0.0.1:5432/code3"),
        see="operations.md#postgresql"))
    db_outage_exit: float = field(default=300.0, metadata=env(  # also read at use by adapters.db_watchdog.outage_limit
        "CODE3_DB_OUTAGE_EXIT", "on PostgreSQL: seconds a serve or worker runs on without its database before it "
        "exits with status 3, for its supervisor to restart it (`0`: never)",
        reader=number("seconds"), see="operations.md#on-postgresql-connections-come-back"))
    forge: str = field(default="local", metadata=env(
        "CODE3_FORGE", "`local` (embedded forge) or `github`", reader=choice(*FORGES), see="github.md"))
    chain: str = field(default="local", metadata=env(
        "CODE3_CHAIN", "`local` (embedded ledger) or `aptos`", reader=choice(*CHAINS), see="aptos.md"))
    github_token: str | None = field(default=None, repr=False, metadata=env(
        "GITHUB_TOKEN", f"{_GITHUB}the token the forge acts with (its user is the actor); never logged, passed to git "
        "only through the environment", see="github.md#the-token"))
    github_api_url: str = field(default="https://api.github.com", metadata=env(
        "CODE3_GITHUB_API_URL", f"{_GITHUB}REST base URL (GitHub Enterprise: `https://HOST/api/v3`)",
        reader=url("https", "http", example="https://github.example.com/api/v3"), see="github.md#the-token"))
    github_git_url: str | None = field(default=None, metadata=env(
        "CODE3_GITHUB_GIT_URL", f"{_GITHUB}git base URL for clone and push", shown="derived from the API URL",
        reader=url("https", "http", example="https://github.example.com"), see="github.md#the-token"))
    github_retry_budget: float = field(default=120.0, metadata=env(
        "CODE3_GITHUB_RETRY_BUDGET", f"{_GITHUB}seconds of rate-limit / 5xx waiting before a tool answers "
        "`E_GH_RATE_LIMIT` with the reset time", reader=number("seconds"),
        see="github.md#what-the-github-adapter-does"))
    aptos_node_url: str = field(default="https://fullnode.testnet.aptoslabs.com/v1", metadata=env(
        "CODE3_APTOS_NODE_URL", f"{_APTOS}fullnode REST URL (with `/v1`)",
        reader=url("https", "http", example="https://fullnode.testnet.aptoslabs.com/v1"), see=_SEE_APTOS))
    aptos_network: str = field(default="testnet", metadata=env(
        "CODE3_APTOS_NETWORK", f"{_APTOS}the network name `publish` checks its `network` argument against",
        see=_SEE_APTOS))
    aptos_module_address: str | None = field(default=None, metadata=env(
        "CODE3_APTOS_MODULE_ADDRESS", f"{_APTOS}where `code3::bounty` is published",
        shown="unset (required with `aptos`)", reader=address(), see=_SEE_APTOS))
    aptos_asset_metadata: str | None = field(default=None, metadata=env(
        "CODE3_APTOS_ASSET_METADATA", f"{_APTOS}the fungible-asset metadata object of the escrowed asset (USDT)",
        reader=address(), see=_SEE_APTOS))
    resolver: str | None = field(default=None, metadata=env(  # None: the identity of the first serve or worker
        "CODE3_RESOLVER", "embedded ledger: the key whose merge reports it accepts, recorded by the first "
        "`code3 serve` or `code3 worker`; run the serve that gets the merge webhook as it",
        shown="the first serve's or worker's `CODE3_IDENTITY`", reader=key_name(),
        see="security.md#what-the-resolver-is-trusted-with"))
    cooling_period: int = field(default=DEFAULT_COOLING_PERIOD, metadata=env(
        "CODE3_COOLING_PERIOD", "seconds from merge to claim, fixed when a local ledger is created",
        reader=whole("seconds", 1, MAX_COOLING_PERIOD)))
    asset: str = field(default="USDT", metadata=env("CODE3_ASSET", "default asset symbol"))
    amount_warn_below: int = field(default=1_000_000, metadata=env(
        "CODE3_AMOUNT_WARN_BELOW", "publish warns (never refuses) when an amount, in the asset's smallest unit, is "
        "below this (`0`: never)", shown="`1000000` (1 USDT)",
        reader=whole("smallest units", 0), see="lifecycle.md#amounts-and-open-questions"))
    refuse_open_questions: bool = field(default=False, metadata=env(
        "CODE3_REFUSE_OPEN_QUESTIONS", "on, `plan` and `publish` refuse a spec with `[NEEDS CLARIFICATION]` "
        "markers, listing them; off, they count and name them",
        shown="off", reader=flag(), see="lifecycle.md#amounts-and-open-questions"))
    spec_kit_templates_dir: Path | None = field(default=None, metadata=env(
        "SPEC_KIT_TEMPLATES_DIR", "a directory of your own spec-kit templates (e.g. a project's "
        "`.specify/templates`) for `spec_mcp.specify`, `plan` and `tasks`", shown="unset: the built-in templates",
        reader=directory(), see="lifecycle.md#feature-ids-and-specs"))
    llm: str = field(default="auto", metadata=env(
        "CODE3_LLM", "who writes reverse-spec's specs: `auto` (Claude when `ANTHROPIC_API_KEY` "
        "is set, else the offline writer), `anthropic` (the key required) or `offline`", reader=choice(*LLMS),
        see=_SEE_MODEL))
    spec_writer: str = field(default="template", metadata=env(
        "CODE3_SPEC_WRITER", "who writes `spec_mcp.*`'s specs: `template` (no model, whatever keys are set) or "
        "`anthropic` (opt-in: a `CODE3_LLM_MODEL` call of at most 8192 output tokens per tool call, billed)",
        reader=choice(*SPEC_WRITERS), see="lifecycle.md#feature-ids-and-specs"))
    llm_model: str = field(default="claude-sonnet-4-6", metadata=env(
        "CODE3_LLM_MODEL", "with the Anthropic LLM: the model id", see=_SEE_MODEL))
    anthropic_api_key: str | None = field(default=None, repr=False, metadata=env(
        "ANTHROPIC_API_KEY", "key of the Anthropic Messages API; when set, reverse-spec's specs are written by "
        "Claude (`spec_mcp`'s only with `CODE3_SPEC_WRITER=anthropic`; never logged)", see=_SEE_MODEL))
    anthropic_base_url: str | None = field(default=None, metadata=env(
        "ANTHROPIC_BASE_URL", "base URL of the Anthropic Messages API", shown="`https://api.anthropic.com`",
        reader=url("https", "http", example="https://api.anthropic.com"), see=_SEE_MODEL))
    web_session_hours: float = field(default=12.0, metadata=env(  # also read at use by mcp_tools.web.auth
        "CODE3_WEB_SESSION_HOURS", "how long a login to `code3 serve`'s web page lasts, in hours (the session "
        "cookie's `Max-Age`, also checked by the serve)", reader=number("hours", 0, MAX_SESSION_HOURS, above=True),
        see="web.md#logging-in"))
    loom_share_internal: bool = field(default=False, metadata=env(
        "CODE3_LOOM_SHARE_INTERNAL", "ai-loom: on, `internal` annotations' comments are answered and stitched; "
        "off, they are withheld (`secret` ones always are)", shown="off", reader=flag(), see="ai-loom.md#sensitivity"))
    nexus_poll_s: float = field(default=0.2, metadata=env(  # mcp_tools.codenexus.subscriptions reads it from Services
        "CODE3_NEXUS_POLL_S", "CodeNexus: seconds between the subscription watcher's reads of the event log (a "
        "change another process makes is announced within about that)", reader=number("seconds", 0.01, 60),
        see="codenexus.md#resources-prompts-and-subscriptions"))
    log_level: str = field(default="WARNING", metadata=env(
        "CODE3_LOG_LEVEL", "log level (stderr); `--log-level` overrides it",
        reader=choice(*LOG_LEVELS, upper=True, documented=True), see="operations.md#logs"))
    log_format: str = field(default="text", metadata=env(
        "CODE3_LOG_FORMAT", "`text`, or `json`: each stderr log line one JSON object (time, level, logger, message, "
        "extra fields), secrets scrubbed as in text", reader=choice(*LOG_FORMATS), see="operations.md#logs"))
    max_answer_bytes: int = field(default=49_152, metadata=env(  # also read at use by mcp_tools.answer_size
        "CODE3_MAX_ANSWER_BYTES", "the most bytes of a tool answer's JSON-RPC line (a page's text stays under 50 000 "
        "characters, what Claude Code shows whole); a longer answer is cut into pages or refused",
        shown="`49152` (48 KB)",
        reader=whole("bytes", MIN_ANSWER_BYTES), see="mcp.md#the-answer-cap"))
    cache_dir: Path | None = field(default=None, metadata=env(  # None: no cache
        "CODE3_CACHE_DIR", "where `code3 mcp` and `code3 serve` keep the tools/list manifest, rebuilt whenever "
        "Code3's sources or the SDK change; `off` keeps none (every start then imports every tool family, ~0.3 s "
        "more)", shown="`$XDG_CACHE_HOME/code3`, else `~/.cache/code3`",
        reader=Reader("a directory, or off", "off", _cache_directory), derive=_xdg_cache, see="mcp.md#start-up"))
    serve_token: str | None = field(default=None, repr=False, metadata=env(  # its length is checked by the serve
        "CODE3_SERVE_TOKEN", "the bearer token `code3 serve` requires on `/mcp` and its other routes but the "
        "webhook, at least 16 characters (never logged)",
        shown="generated once into `CODE3_HOME/projects/<key>/serve_token`",
        see="security.md#who-can-do-what-through-code3-serve"))
    webhook_secret: str | None = field(default=None, repr=False, metadata=env(
        "GITHUB_WEBHOOK_SECRET", "the webhook's HMAC-SHA256 secret (`X-Hub-Signature-256`)",
        shown="generated once into `CODE3_HOME/projects/<key>/webhook_secret`", see="github.md#the-webhook"))
    passphrase: str | None = field(default=None, repr=False, metadata=env(  # read at use by adapters.key_export
        "CODE3_PASSPHRASE", "the passphrase of `code3 account export` / `import` (never an argument)",
        shown="unset: asked on the terminal", see="commands.md#code3-account"))

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
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        """Every variable read from `env` (default: the process's environment). Keyword overrides (the flags)
        win where not None, and the variable one overrides is not read. A bad value raises
        Code3Error(E_VALIDATION) naming the variable and what a valid value looks like."""
        e = os.environ if env is None else env
        values: dict[str, Any] = {name: value for name, value in overrides.items() if value is not None}
        if "project" in values:
            values["project"] = Path(str(values["project"])).resolve()
        for variable in VARIABLES.values():
            if variable.attribute not in values and (value := variable.read(e)) is not MISSING:
                values[variable.attribute] = value
        return cls(**values)


VARIABLES: dict[str, Variable] = {v.name: v for v in map(_variable, fields(Settings))}
"""Every variable by its name, in the order of the fields."""


def describe() -> str:
    """`code3 config`: every variable, its default and its meaning."""
    import textwrap

    lines = []
    for v in VARIABLES.values():
        lines.append(f"{v.name} (default: {v.default.replace('`', '')})")
        lines.append(textwrap.fill(v.described().replace("`", ""), 116, initial_indent="    ",
                                   subsequent_indent="    ", break_on_hyphens=False, break_long_words=False))
    return "\n".join(lines)


def markdown_table() -> str:
    """The table of docs/configuration.md: each row links to the page of docs/ its declaration names (`see`)."""
    rows = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for v in VARIABLES.values():
        meaning = v.described() + (f" (see [{v.see.partition('#')[0]}]({v.see}))" if v.see else "")
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in (f"`{v.name}`", v.default, meaning)) + " |")
    return "\n".join(rows) + "\n"


TABLE_START, TABLE_END = "<!-- configuration -->\n", "<!-- /configuration -->\n"


def with_table(page: str) -> str:
    """`page` (docs/configuration.md) with the table between its configuration markers rendered anew."""
    start, end = page.index(TABLE_START) + len(TABLE_START), page.index(TABLE_END)
    return page[:start] + "\n" + markdown_table() + "\n" + page[end:]


if __name__ == "__main__":  # python -m code3.settings [docs/configuration.md]: rewrite the configuration table
    import sys

    target = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "docs" /
                  "configuration.md")
    target.write_text(with_table(target.read_text(encoding="utf-8")), encoding="utf-8")
