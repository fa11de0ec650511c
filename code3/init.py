"""`code3 init`: a git repository becomes a Code3 project an MCP client can publish bounties from.

One command: the project state (`.code3/`, kept out of git by `.git/info/exclude`), the acting identity
(its key in CODE3_HOME, outside every work tree), the repository on the embedded forge (named from the git
remote `origin`, else `<identity>/<directory>`) holding the project's committed history of its current branch
(adapters.forge_sync; uncommitted changes are not pushed), faucet funds on the embedded ledger, what it set up
(adapters.project_record, so a server never silently creates a second identity), and the MCP client
configuration: a `.mcp.json` entry for one role (other servers in it are kept) whose env names the same
CODE3_HOME and identity, and the equivalent `claude mcp add …` line. Running it again changes nothing that is
already in place (the faucet tops the balance up to the amount, it does not add it again) and pushes new
commits to the forge (fast-forward only).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from code3.settings import Settings
from domain.errors import Code, Code3Error
from domain.values import parse_repo

if TYPE_CHECKING:
    from adapters.forge_sync import Synced

SERVER_NAME = "code3"
DEFAULT_FUNDS = 10_000_000  # 10 USDT in its smallest unit (6 decimals)
DEFAULT_ROLE = "sponsor"  # init's user is the one who funds bounties
# role -> the `code3 mcp` profile its entry starts (None: every tool), and what the role does
ROLES: dict[str, tuple[str | None, str]] = {
    "sponsor": ("sponsor", "specifies features and publishes them with a bounty"),
    "worker": ("server", "accepts tasks, forks, opens and submits PRs, claims payouts"),
    "knowledge": ("knowledge", "reverse-spec, CodeNexus and ai-loom: the code-understanding tools"),
    "all": (None, "every tool of every family"),
}
_REMOTE = re.compile(r"(?:[:/])(?P<owner>[A-Za-z0-9][A-Za-z0-9-]{0,38})/(?P<name>[A-Za-z0-9_.-]+?)(?:\.git)?/?$")


@dataclass(frozen=True)
class InitResult:
    project: Path
    identity: str
    address: str
    repo: str
    repo_url: str | None
    balance: int | None
    asset: str
    mcp_json: Path
    server: dict[str, Any]
    mcp_json_written: bool = True  # False: git tracks .mcp.json, left alone (add the entry below by hand)
    role: str = DEFAULT_ROLE
    code: Synced | None = None  # what reached the embedded forge (None: a real forge)
    created_key: bool = False

    @property
    def entry_name(self) -> str:
        return entry_name(self.role)

    @property
    def claude_line(self) -> str:
        env = " ".join(f"-e {k}={shlex.quote(v)}" for k, v in self.server["env"].items())
        command = " ".join(shlex.quote(part) for part in [self.server["command"], *self.server["args"]])
        return f"claude mcp add {self.entry_name} {env} -- {command}"


def entry_name(role: str) -> str:
    """`code3` for the default role, `code3-<role>` for the others: a sponsor and a worker share one file."""
    return SERVER_NAME if role == DEFAULT_ROLE else f"{SERVER_NAME}-{role}"


def git_root(directory: Path) -> Path:
    found = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=directory, capture_output=True, text=True)
    if found.returncode != 0:
        raise Code3Error(Code.PRECONDITION, f"{directory} is not in a git repository",
                         "run code3 init inside your project's git repository (git init first for a new one)")
    return Path(found.stdout.strip()).resolve()


def repo_name(project: Path, owner: str) -> str:
    """owner/name from the `origin` remote (GitHub-style URL), else `<owner>/<directory name>`."""
    remote = subprocess.run(["git", "remote", "get-url", "origin"], cwd=project, capture_output=True, text=True)
    match = _REMOTE.search(remote.stdout.strip()) if remote.returncode == 0 else None
    if match:
        return parse_repo(f"{match['owner']}/{match['name']}")
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", project.name).strip("-.") or "project"
    return parse_repo(f"{owner}/{name}")


def default_home(environ: Mapping[str, str]) -> Path | None:
    """The CODE3_HOME a server finds by itself when an MCP client starts it: clients pass a minimal environment
    (the TypeScript SDK: HOME, PATH, USER, SHELL, TERM, LOGNAME), so it is `~/.config/code3` from HOME alone."""
    home = environ.get("HOME")
    return (Path(home).expanduser() / ".config" / "code3").resolve() if home else None


def server_env(settings: Settings, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What the server needs, beyond a client's minimal environment, to act as the identity init set up:
    the project, and CODE3_HOME / CODE3_KEYSTORE / CODE3_IDENTITY where they differ from their defaults."""
    env = {"CODE3_PROJECT": str(settings.project)}
    if settings.home_dir != default_home(os.environ if environ is None else environ):
        env["CODE3_HOME"] = str(settings.home_dir)
    if settings.keystore is not None and settings.keystore_dir != settings.home_dir / "keys":
        env["CODE3_KEYSTORE"] = str(settings.keystore_dir)
    if settings.identity != "default":
        env["CODE3_IDENTITY"] = settings.identity
    return env


def server_entry(project: Path, settings: Settings | None = None, role: str = DEFAULT_ROLE) -> dict[str, Any]:
    """How an MCP client starts this installation's `code3 mcp` for the project (absolute paths), with the
    role's profile."""
    if role not in ROLES:
        raise Code3Error(Code.VALIDATION, f"unknown role {role!r}", f"use one of {', '.join(ROLES)}")
    script = Path(sys.executable).with_name("code3")
    command, args = (str(script), ["mcp"]) if script.exists() else (sys.executable, ["-m", "code3", "mcp"])
    profile = ROLES[role][0]
    env = server_env(settings) if settings is not None else {"CODE3_PROJECT": str(project)}
    return {"command": command, "args": [*args, "--profile", profile] if profile else args, "env": env}


def exclude_file(project: Path) -> Path:
    """The repository's own `info/exclude` (worktrees included): ignore rules that no commit carries."""
    found = subprocess.run(["git", "rev-parse", "--git-path", "info/exclude"], cwd=project, capture_output=True,
                           text=True)
    if found.returncode != 0:
        raise Code3Error(Code.PRECONDITION, f"git cannot tell where {project}'s info/exclude is",
                         "run code3 init inside a git work tree")
    path = Path(found.stdout.strip())
    return path if path.is_absolute() else (project / path)


def _ignore_state(project: Path) -> None:
    """`.code3/` (events, ledger, forge, caches) is never committed. The rule goes into `.git/info/exclude`,
    not the tracked `.gitignore`: init changes no tracked file, so checking out another tag stays possible."""
    exclude = exclude_file(project)
    text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if not any(line.strip() in (".code3", ".code3/", "/.code3", "/.code3/") for line in text.splitlines()):
        exclude.parent.mkdir(parents=True, exist_ok=True)
        prefix = "" if not text or text.endswith("\n") else "\n"
        with exclude.open("a", encoding="utf-8") as fh:
            fh.write(f"{prefix}# Code3 project state (events, local ledger and forge; keys live in CODE3_HOME)\n"
                     "/.code3/\n")


def _write_mcp_json(path: Path, server: dict[str, Any], name: str = SERVER_NAME) -> bool:
    """Add the server to `.mcp.json`; False (nothing written) when git tracks the file: init leaves tracked
    files alone (the report shows the entry to add by hand). A linked `.mcp.json` is refused."""
    if path.is_symlink():
        raise Code3Error(Code.PRECONDITION, f"{path} is a symbolic link: init writes no file through a link",
                         f"remove the link (`rm {path}`) and run code3 init again")
    tracked = subprocess.run(["git", "ls-files", "--", path.name], cwd=path.parent, capture_output=True, text=True)
    if tracked.returncode == 0 and tracked.stdout.strip():
        return False
    config: dict[str, Any] = {}
    if path.exists():
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            raise Code3Error(Code.PRECONDITION, f"{path} is not valid JSON",
                             "fix or remove it, then run code3 init again") from None
    config.setdefault("mcpServers", {})[name] = server
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return True


def init_project(settings: Settings, funds: int = DEFAULT_FUNDS, repo: str | None = None,
                 role: str = DEFAULT_ROLE) -> InitResult:
    from dataclasses import replace

    from adapters.forge_sync import create_or_push
    from adapters.keystore import Keystore
    from adapters.project_record import SetUp, read_record, record_init
    from code3.wiring import build_services, guard, ledger, local_forge

    if role not in ROLES:
        raise Code3Error(Code.VALIDATION, f"unknown role {role!r}", f"use one of {', '.join(ROLES)}")
    project = git_root(settings.project)
    if project != settings.project:
        settings = replace(settings, project=project)
    guard(settings)  # a CODE3_HOME in a work tree, planted state (tracked, linked, foreign, an old key): refused
    _ignore_state(project)
    keystore = Keystore(settings.keystore_dir)
    created = settings.identity not in keystore.names()
    signer = keystore.get_or_create(settings.identity)  # init (and `account new`) create keys; servers do not
    services = build_services(settings)  # the event store, views and adapters: the project's state
    services.close()
    recorded = read_record(settings.state_dir)
    name = parse_repo(repo) if repo else (recorded.repo if recorded and recorded.repo else
                                          repo_name(project, settings.identity))
    repo_url = balance = code = None
    if settings.forge == "local":
        forge = local_forge(settings, settings.identity)
        try:
            code = create_or_push(forge, name, project)
            repo_url = forge.repo_url(name)
        finally:
            forge.close()
    if settings.chain == "local":
        chain = ledger(settings)
        try:
            missing = funds - chain.balance(signer.address, settings.asset)
            balance = chain.mint(signer.address, settings.asset, missing) if missing > 0 else \
                chain.balance(signer.address, settings.asset)
        finally:
            chain.close()
    record_init(settings.state_dir, name, settings.identity,
                SetUp(signer.address, str(settings.home_dir), str(settings.keystore_dir)))
    server = server_entry(project, settings, role)
    mcp_json = project / ".mcp.json"
    written = _write_mcp_json(mcp_json, server, entry_name(role))
    return InitResult(project, settings.identity, signer.address, name, repo_url, balance, settings.asset,
                      mcp_json, server, written, role, code, created)


def _code_line(code: Synced | None) -> str:
    if code is None:
        return "not pushed (a real forge: push your code there)"
    head = (code.after or "")[:12]
    said = {
        "created": f"{code.commits} commit(s) of your branch {code.branch} ({head}) pushed as its default branch",
        "pushed": f"{code.commits} new commit(s) of your branch {code.branch} pushed ({head})",
        "up-to-date": f"its {code.branch} is your {code.branch} ({head}): nothing to push",
        "forge-ahead": f"its {code.branch} is {code.commits} commit(s) ahead of yours (merged work): bring them "
                       "back with `code3 forge pull`",
        "no-commit": "your repository has no commit yet: the forge holds a README only; commit your code, then "
                     "run `code3 forge push`",
    }[code.state]
    return said + ("" if code.state == "no-commit" else "; uncommitted changes are not pushed")


def report(result: InitResult) -> str:
    from domain.bounties.amounts import with_units

    funds = (f"{with_units(result.balance, result.asset)} on the embedded ledger"
             if result.balance is not None else "not funded (a real chain: fund the account from a wallet)")
    where = result.repo_url or "on GitHub (create it there if it does not exist)"
    name, (profile, does) = result.entry_name, ROLES[result.role]
    others = [r for r in ROLES if r != result.role and r != "all"]
    return "\n".join([
        f"project    {result.project} (state in .code3/, excluded in .git/info/exclude; keys in CODE3_HOME)",
        f"identity   {result.identity} {result.address}" + (" (created)" if result.created_key else ""),
        f"repository {result.repo} {where}",
        f"code       {_code_line(result.code)}",
        f"funds      {funds}",
        f"MCP config {result.mcp_json} (server {name!r}, role {result.role}: {does})" if result.mcp_json_written else
        f"MCP config {result.mcp_json} is tracked by git: left alone, add the entry below to it yourself",
        "",
        "The forge follows your code only here and on `code3 forge push` (fast-forward only); merged pull requests "
        "come back to your branch with `code3 forge pull`.",
        "Specs are written from spec-kit's templates, no model, even with ANTHROPIC_API_KEY in the client's "
        "environment; to have a model write them, add CODE3_SPEC_WRITER=anthropic (and the key) to the entry's env: "
        "one request per specify/plan/tasks call, billed to that key.",
        "",
        f"Add the server to Claude Code (or open the project there: it reads .mcp.json); it starts "
        f"`code3 mcp{' --profile ' + profile if profile else ''}` as {result.identity}:",
        f"  {result.claude_line}",
        "",
        ".mcp.json:",
        json.dumps({"mcpServers": {name: result.server}}, indent=2),
        "",
        "Another role starts from its own entry in the same file, each identity with its own key: e.g. "
        + "; ".join(f"`code3 init --role {r}" + (" --identity bob`" if r == "worker" else "`") for r in others)
        + " (then restart the MCP client).",
        "",
        f'Then ask the client: specify "…", publish it to {result.repo} with amount "5000000" (5 USDT: amounts are '
        'in the smallest unit), asset "USDT", '
        'network "testnet".' if result.role in ("sponsor", "all") else
        "Then ask the client for the open bounties (`server_mcp.accept_best_task`) and work on one."
        if result.role == "worker" else "Then ask the client about the code (reverse-spec, CodeNexus, ai-loom).",
    ])
