"""The two stacks a lifecycle runs on: the embedded default, and the real adapters against stand-ins.

A Stack gives the settings that select it and the operator's powers no port has (create a
repository, merge a PR, mint funds, move the clock), so one test body runs on either. Each chain is
initialised with the resolver the test names: the account whose merge reports the contract accepts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from adapters.ledger_tables import ESCROW
from adapters.local_forge import LocalForge
from adapters.local_ledger import LocalLedger


class Stack(Protocol):
    kind: str
    network: str

    def settings(self, identity: str) -> dict[str, Any]: ...
    def env(self, identity: str) -> dict[str, str]: ...
    def create_repo(self, repo: str) -> None: ...
    def merge_pr(self, url: str) -> None: ...
    def issue_count(self, repo: str) -> int: ...
    def mint(self, address: str, amount: int) -> None: ...
    def advance(self, seconds: int) -> None: ...
    def use_resolver(self, address: str) -> None:
        """Record the account whose merge reports the chain accepts (once: the first one named stays)."""
        ...
    def escrow(self) -> int: ...
    @property
    def cooling_period(self) -> int: ...
    def close(self) -> None: ...


class LocalStack:
    kind = "local"
    network = "local"

    def __init__(self, project: Path, cooling_period: int, resolver: str | None = None) -> None:
        self.ledger = LocalLedger(project / ".code3" / "ledger.sqlite", cooling_period=cooling_period,
                                  resolver=resolver)
        from code3.settings import Settings

        # as code3.wiring.local_forge builds it: the hooks' secrets with the project's, in CODE3_HOME
        self.forge = LocalForge(project / ".code3" / "forge", actor="alice",
                                secrets=Settings(project=project).secrets_dir / "forge_hooks")

    def settings(self, identity: str) -> dict[str, Any]:
        return {}

    def env(self, identity: str) -> dict[str, str]:
        return {}

    def create_repo(self, repo: str) -> None:
        self.forge.create_repo(repo)

    def merge_pr(self, url: str) -> None:
        self.forge.merge_pr(url)

    def issue_count(self, repo: str) -> int:
        return len(self.forge.list_issues(repo))

    def mint(self, address: str, amount: int) -> None:
        self.ledger.mint(address, "USDT", amount)

    def advance(self, seconds: int) -> None:
        self.ledger.advance(seconds)

    def use_resolver(self, address: str) -> None:
        self.ledger.initialize_roles(address)

    def escrow(self) -> int:
        return self.ledger.balance(ESCROW, "USDT")

    @property
    def cooling_period(self) -> int:
        return self.ledger.cooling_period

    def close(self) -> None:
        self.ledger.close()
        self.forge.close()


class RemoteStack:
    """githubkit against the GitHub stand-in, aptos-sdk against the fullnode stand-in."""

    kind = "remote"
    network = "testnet"

    def __init__(self, root: Path, cooling_period: int, resolver: str | None = None) -> None:
        from tests.fakes.aptos_node import MODULE_ADDRESS, USDT_METADATA, AptosNode
        from tests.fakes.github_server import FakeGitHub

        self.github = FakeGitHub(root / "github", tokens={f"token-{n}": n for n in ("alice", "bob", "carol")})
        self.node = AptosNode(root / "aptos-node.sqlite", MODULE_ADDRESS, {USDT_METADATA: "USDT"},
                              cooling_period=cooling_period, resolver=resolver)
        self.module_address, self.asset_metadata = MODULE_ADDRESS, USDT_METADATA

    def settings(self, identity: str) -> dict[str, Any]:
        return {"forge": "github", "chain": "aptos", "github_token": f"token-{identity}",
                "github_api_url": self.github.api_url, "aptos_node_url": self.node.url,
                "aptos_module_address": self.module_address, "aptos_asset_metadata": self.asset_metadata}

    def env(self, identity: str) -> dict[str, str]:
        """The same selection as environment variables, for `code3` subprocesses."""
        names = {"forge": "CODE3_FORGE", "chain": "CODE3_CHAIN", "github_token": "GITHUB_TOKEN",
                 "github_api_url": "CODE3_GITHUB_API_URL", "aptos_node_url": "CODE3_APTOS_NODE_URL",
                 "aptos_module_address": "CODE3_APTOS_MODULE_ADDRESS",
                 "aptos_asset_metadata": "CODE3_APTOS_ASSET_METADATA"}
        return {names[key]: str(value) for key, value in self.settings(identity).items()}

    def create_repo(self, repo: str) -> None:
        self.github.create_repo(repo)

    def merge_pr(self, url: str) -> None:
        self.github.merge_pr_at(url)

    def issue_count(self, repo: str) -> int:
        return sum(1 for item in self.github.state.items[repo].values() if item.pull is None)

    def mint(self, address: str, amount: int) -> None:
        self.node.mint(address, amount)

    def advance(self, seconds: int) -> None:
        self.node.advance(seconds)

    def use_resolver(self, address: str) -> None:
        self.node.ledger.initialize_roles(address)

    def escrow(self) -> int:
        return self.node.ledger.balance(ESCROW, "USDT")

    @property
    def cooling_period(self) -> int:
        return self.node.ledger.cooling_period

    def close(self) -> None:
        assert self.node.errors == [], self.node.errors
        self.node.close()
        self.github.close()
