"""`code3 init`: a git repository becomes a Code3 project an MCP client can publish bounties from.

One command: the project state (`.code3/`, kept out of git by `.git/info/exclude`), the acting identity
(its key in CODE3_HOME, outside the work tree), the repository on
the embedded forge (named from the git remote `origin`, else `<identity>/<directory>`), faucet funds
for the sponsor on the embedded ledger, and the MCP client configuration: a `.mcp.json` entry (other
servers in it are kept) and the equivalent `claude mcp add …` line. Running it again changes nothing
that is already in place (the faucet tops the balance up to the amount, it does not add it again).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from code3.settings import Settings
from domain.errors import Code, Code3Error
from domain.values import parse_repo

SERVER_NAME = "code3"
DEFAULT_FUNDS = 10_000_000  # 10 USDT in its smallest unit (6 decimals)
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

    @property
    def claude_line(self) -> str:
        env = " ".join(f"-e {k}={shlex.quote(v)}" for k, v in self.server["env"].items())
        command = " ".join(shlex.quote(part) for part in [self.server["command"], *self.server["args"]])
        return f"claude mcp add {SERVER_NAME} {env} -- {command}"


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


def server_entry(project: Path) -> dict[str, Any]:
    """How an MCP client starts this installation's `code3 mcp` for the project (absolute paths)."""
    script = Path(sys.executable).with_name("code3")
    command, args = (str(script), ["mcp"]) if script.exists() else (sys.executable, ["-m", "code3", "mcp"])
    return {"command": command, "args": args, "env": {"CODE3_PROJECT": str(project)}}


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


def _write_mcp_json(path: Path, server: dict[str, Any]) -> bool:
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
    config.setdefault("mcpServers", {})[SERVER_NAME] = server
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return True


def init_project(settings: Settings, funds: int = DEFAULT_FUNDS, repo: str | None = None) -> InitResult:
    from dataclasses import replace

    from adapters.keystore import Keystore
    from code3.wiring import build_services, guard, identity, ledger, local_forge

    project = git_root(settings.project)
    if project != settings.project:
        settings = replace(settings, project=project)
    guard(settings)  # planted state (tracked, linked, foreign, an old key) is refused before anything is written
    _ignore_state(project)
    signer = identity(settings, settings.identity) if settings.chain == "local" else \
        Keystore(settings.keystore_dir).get_or_create(settings.identity)
    services = build_services(settings)  # the event store, views and adapters: the project's state
    services.close()
    name = parse_repo(repo) if repo else repo_name(project, settings.identity)
    repo_url = balance = None
    if settings.forge == "local":
        forge = local_forge(settings, settings.identity)
        try:
            repo_url = forge.create_repo(name)
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
    server = server_entry(project)
    mcp_json = project / ".mcp.json"
    written = _write_mcp_json(mcp_json, server)
    return InitResult(project, settings.identity, signer.address, name, repo_url, balance, settings.asset,
                      mcp_json, server, written)


def report(result: InitResult) -> str:
    from domain.bounties.amounts import with_units

    funds = (f"{with_units(result.balance, result.asset)} on the embedded ledger"
             if result.balance is not None else "not funded (a real chain: fund the account from a wallet)")
    where = result.repo_url or "on GitHub (create it there if it does not exist)"
    return "\n".join([
        f"project    {result.project} (state in .code3/, excluded in .git/info/exclude; keys in CODE3_HOME)",
        f"identity   {result.identity} {result.address}",
        f"repository {result.repo} {where}",
        f"funds      {funds}",
        f"MCP config {result.mcp_json} (server {SERVER_NAME!r})" if result.mcp_json_written else
        f"MCP config {result.mcp_json} is tracked by git: left alone, add the entry below to it yourself",
        "",
        "Add the server to Claude Code (or open the project there: it reads .mcp.json):",
        f"  {result.claude_line}",
        "",
        ".mcp.json:",
        json.dumps({"mcpServers": {SERVER_NAME: result.server}}, indent=2),
        "",
        f'Then ask the client: specify "…", publish it to {result.repo} with amount "1000000" (1 USDT: amounts are '
        'in the smallest unit), asset "USDT", '
        'network "testnet".',
    ])
