"""The money-integrity campaign's world: one embedded project with a real `code3 serve` (the GitHub-shaped merge
webhook lands there, signed) and real `code3 worker --once` rounds (the resolver's look at every live submission,
refunds, auto-claimed payouts), a sponsor (alice, who also maintains the repository), an honest worker (bob), an
attacker (mallory) and the resolver (default, the serve's identity).

Attacks are made two ways, as an attacker can: through the tools (the handlers the MCP tools call) and by direct
chain calls signed with the attacker's own key, which skip every tool. Money is counted over every account of the
embedded ledger, the escrow included.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.git import commit_all, git
from adapters.keystore import Keystore
from adapters.local_forge import LocalForge
from adapters.local_ledger import LocalLedger
from adapters.ports import PullRequest, Receipt, Signer
from code3.settings import Settings
from code3.wiring import build_services, local_forge
from mcp_tools.lifecycle import publish, specs, work
from mcp_tools.services import Services

REPO = "alice/todo-app"
AMOUNT = 1_000_000
COOLING = 100
PEOPLE = ("alice", "bob", "mallory", "default")
FUNDS = 40 * AMOUNT


@dataclass
class Published:
    bounty_id: str
    task_id: str
    number: int


class MoneyWorld:
    def __init__(self, root: Path, database_url: str | None = None, serve: bool = True) -> None:
        self.root, self.database_url = root, database_url
        root.mkdir(parents=True, exist_ok=True)
        self.home = root.parent / f"{root.name}-home"  # the world's own CODE3_HOME, whatever a test's is
        self.home.mkdir(mode=0o700, exist_ok=True)
        self.keys = Keystore(self.settings("default").keystore_dir)
        for name in PEOPLE:
            self.keys.new(name)
        settings = self.settings("default")
        chain = LocalLedger(settings.state_dir / "ledger.sqlite", cooling_period=COOLING,
                            resolver=self.keys.load("default").address)
        chain.mint(self.address("alice"), "USDT", FUNDS)
        chain.close()
        self.people = {name: build_services(self.settings(name)) for name in PEOPLE}
        self.alice_forge.create_repo(REPO, "# todo-app\n")
        self.serve: subprocess.Popen[str] | None = self._start_serve() if serve else None
        self.features = 0

    # --- identities, ledger, forge --------------------------------------------------------------------------

    def settings(self, identity: str) -> Settings:
        return Settings(project=self.root, identity=identity, database_url=self.database_url, cooling_period=COOLING,
                        resolver="default", home=self.home)

    def env(self, identity: str) -> dict[str, str]:
        env = {**os.environ, "CODE3_PROJECT": str(self.root), "CODE3_IDENTITY": identity, "CODE3_HOME": str(self.home),
               "CODE3_RESOLVER": "default", "CODE3_COOLING_PERIOD": str(COOLING), "CODE3_LOG_LEVEL": "INFO"}
        if self.database_url:
            env["CODE3_DATABASE_URL"] = self.database_url
        return env

    def __getitem__(self, name: str) -> Services:
        return self.people[name]

    def signer(self, name: str) -> Signer:
        return self.keys.load(name)

    def address(self, name: str) -> str:
        return self.keys.load(name).address

    @property
    def ledger(self) -> LocalLedger:
        chain = self.people["default"].chain
        assert isinstance(chain, LocalLedger)
        return chain

    @property
    def alice_forge(self) -> LocalForge:
        forge = self.people["alice"].forge
        assert isinstance(forge, LocalForge)
        return forge

    def forge_as(self, login: str) -> LocalForge:
        return local_forge(self.settings(login), login)

    def money(self) -> int:
        """Every USDT on the embedded ledger: all accounts and the escrow."""
        with self.ledger.db.statement() as db:
            return sum(int(r[0]) for r in db.execute("SELECT amount FROM funds WHERE asset = 'USDT'").fetchall())

    def balance(self, name: str) -> int:
        return self.ledger.balance(self.address(name), "USDT")

    def paid_events(self, bounty_id: str) -> list[dict[str, Any]]:
        return [e.data for e in self.ledger.bounty_events(bounty_id) if e.type == "BountyPaid"]

    def state(self, bounty_id: str) -> Any:
        state = self.ledger.get_bounty(bounty_id)
        assert state is not None
        return state

    # --- the lifecycle's steps ---------------------------------------------------------------------------------

    def publish(self, mode: str = "contest", deadline_seconds: int | None = None, amount: int = AMOUNT) -> Published:
        self.features += 1
        alice = self.people["alice"]
        spec = specs.specify(alice, f"Feature {self.features}: users can export their lists as format {self.features}")
        args: dict[str, Any] = {"repo": REPO, "feature_id": spec["feature_id"], "spec_path": spec["paths"]["spec"],
                                "amount": str(amount), "asset": "USDT", "network": "local", "mode": mode}
        if deadline_seconds is not None:
            args["deadline_seconds"] = deadline_seconds
        published = publish.publish_issue_with_metadata(alice, **args)
        number = published["issue"]["number"]
        return Published(published["bounty"]["bounty_id"], f"{REPO}#{number}", number)

    def pr(self, login: str, branch: str, base_repo: str = REPO, base: str = "main", head_repo: str | None = None,
           change: str = "") -> PullRequest:
        """A real PR: `login` forks the base repository (or uses `head_repo`), commits `change` on `branch`, pushes
        it and opens the PR into `base_repo`:`base`."""
        forge = self.forge_as(login)
        try:
            source = head_repo or forge.fork(base_repo)
            with tempfile.TemporaryDirectory() as tmp:
                work_dir = Path(tmp) / "w"
                forge.clone(source, work_dir)
                git("checkout", "-q", "-B", branch, cwd=work_dir)
                (work_dir / f"{branch.replace('/', '_')}.py").write_text(change or f"# {login}'s work on {branch}\n")
                commit_all(work_dir, f"{login}: {branch}")
                forge.push(work_dir, branch)
            head = branch if source == base_repo else f"{source.split('/')[0]}:{branch}"
            return forge.open_pr(base_repo, head, base, f"{login}: {branch}", "work")
        finally:
            forge.close()

    def merge(self, url: str, maintainer: str = "alice") -> PullRequest:
        """The maintainer merges on the forge: the embedded forge delivers the signed webhook to `code3 serve`."""
        forge = self.forge_as(maintainer)
        try:
            return forge.merge_pr(url)
        finally:
            forge.close()

    def worker_round(self) -> None:
        """One round of a real `code3 worker` process acting as the resolver (its identity's key is the resolver's)."""
        done = subprocess.run([sys.executable, "-m", "code3", "worker", "--once"], env=self.env("default"),
                              cwd=self.root, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        failed = [line for line in done.stderr.splitlines() if "failed" in line and "worker step" in line]
        assert not failed, failed

    def code3(self, identity: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "code3", *args, "--json"], env=self.env(identity), cwd=self.root,
                              capture_output=True, text=True, timeout=120)

    def advance(self, seconds: int) -> None:
        self.ledger.advance(seconds)

    def accept(self, name: str, task_id: str) -> None:
        work.accept_task(self.people[name], task_id)

    def direct(self, name: str) -> Signer:
        """The attacker's own key, for chain calls that skip every tool."""
        return self.signer(name)

    def close(self) -> None:
        if self.serve is not None:
            self.serve.send_signal(signal.SIGTERM)
            self.serve.wait(timeout=20)
            for stream in (self.serve.stdout, self.serve.stderr):
                if stream:
                    stream.close()
        for services in self.people.values():
            services.close()

    def _start_serve(self) -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, "-m", "code3", "serve", "--port", "0"], env=self.env("default"),
                                cwd=self.root, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = proc.stdout.readline() if proc.stdout else ""
        assert line, f"code3 serve did not start: {proc.stderr.read() if proc.stderr else ''}"
        json.loads(line)
        return proc


def ok(receipt: Receipt) -> Receipt:
    assert receipt.success, receipt.vm_status
    return receipt


@contextmanager
def conserved(world: MoneyWorld) -> Iterator[None]:
    """Money is neither made nor lost by what happens inside."""
    before = world.money()
    yield
    assert world.money() == before, "money is conserved"
