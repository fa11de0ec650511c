"""Code3 as production runs it, on one host: PostgreSQL (a schema of its own), the GitHub and Aptos stand-ins as
processes of their own, three `code3 serve` and two `code3 worker` processes, each with its own project
directory and CODE3_HOME keystore as on separate machines, every one reaching PostgreSQL through one loopback
proxy (tests/tools/tcp_proxy.py) that the campaign can cut.

Who is who: `acme` runs the serves and the workers: it is the chain's resolver (the merge webhook and the
workers' look for merges report as it) and a sponsor too (the HTTP agents act as the serve's identity).
Sponsors `s1`, `s2` and the bounty hunters `w1`… act through their own `code3 mcp` (stdio) on their own
machines. The workers' keystores hold every agent's key (the operator gave them so that the workers pay
winners and refund sponsors at the deadline: `code3 worker` claims only for keys it holds).

Each process's PostgreSQL connections are named `soak-<tag>-<machine>` (PGAPPNAME), so the campaign terminates
only its own backends. `Topology.kill` / `start` SIGKILL and restart one machine's process with the same
directories and port.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx

from tests.tools.tcp_proxy import TcpProxy

RESOLVER = "acme"
REPO = "acme/app"
POSTGRES_URL = os.environ.get("CODE3_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
SERVE_TOKEN = "soak-serve-token-" + "0123456789abcdef"
CACHE_DIR = os.environ.get("CODE3_CACHE_DIR") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "code3")


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the campaign's process dies (a test timeout that kills it), so no
    serve, worker or stand-in outlives it. prctl(PR_SET_PDEATHSIG), Linux only; elsewhere nothing. The signal
    comes when the *thread* that spawned the child ends: spawn only from threads that live as long as the
    campaign (the main thread, the event loop's executor)."""
    import ctypes

    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _read_line(proc: subprocess.Popen[str], what: str, timeout: float = 60.0, text: str | None = None
               ) -> dict[str, Any]:
    """The first JSON line a process prints on stdout (its ready line), or with `text` the first line holding it."""
    import selectors

    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sel.select(timeout=0.5):
            line = proc.stdout.readline()
            if not line:
                break
            if text is not None and text in line:
                return {"line": line.strip()}
            with contextlib.suppress(ValueError):
                found = json.loads(line)
                if isinstance(found, dict):
                    return found
        elif proc.poll() is not None:
            break
    raise RuntimeError(f"{what} did not start (exit {proc.poll()})")


@dataclass
class Machine:
    """One host: its project directory, its CODE3_HOME, its process (serve or worker) and that process's log."""

    name: str
    kind: str  # "serve" or "worker"
    root: Path
    port: int | None = None
    proc: subprocess.Popen[str] | None = None
    starts: int = 0
    kills: int = 0

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self, start: int | None = None) -> Path:
        return self.root / f"{self.kind}-{self.starts if start is None else start}.log"


@dataclass
class Topology:
    root: Path
    workers: list[str]  # bounty hunters' identities (stdio agents)
    sponsors: list[str]  # stdio sponsors' identities (acme sponsors over HTTP too)
    serves: int = 3
    worker_processes: int = 2
    cooling_period: int = 4
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    machines: list[Machine] = field(default_factory=list)
    addresses: dict[str, str] = field(default_factory=dict)
    minted: int = 0
    extra_env: dict[str, str] = field(default_factory=dict)

    # --- set-up -----------------------------------------------------------------------------------

    def start_all(self) -> Topology:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.root.chmod(0o700)
        self.schema = f"soak_{os.getpid()}_{self.tag}"
        import psycopg

        with psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f"CREATE SCHEMA {self.schema}")
        self.direct_url = f"{POSTGRES_URL}?schema={self.schema}"
        self.proxy = TcpProxy(urlparse(POSTGRES_URL).port or 5432, max_connections=120)
        self.database_url = self.proxy.url(self.direct_url)
        self.webhook_secret = uuid.uuid4().hex + uuid.uuid4().hex
        self._make_keys()
        self._start_stand_ins()
        for i in range(self.serves):
            self.machines.append(Machine(f"serve-{i + 1}", "serve", self.root / f"serve-{i + 1}", port=_free_port()))
        for i in range(self.worker_processes):
            self.machines.append(Machine(f"worker-{i + 1}", "worker", self.root / f"worker-{i + 1}"))
        for machine in self.machines:
            self._provision(machine, [RESOLVER, *(self.everyone if machine.kind == "worker" else [])])
        self._control_github("PUT", "hooks", {"urls": [f"{m.url}/webhooks/github" for m in self.serve_machines]})
        from concurrent.futures import ThreadPoolExecutor

        for machine in self.machines:  # as hosts boot: together (spawned by this thread: see _die_with_parent)
            self.start(machine, wait=False)
        with ThreadPoolExecutor(len(self.machines)) as pool:
            list(pool.map(self.wait_started, self.machines))
        return self

    @property
    def everyone(self) -> list[str]:
        return [*self.sponsors, *self.workers]

    @property
    def serve_machines(self) -> list[Machine]:
        return [m for m in self.machines if m.kind == "serve"]

    @property
    def worker_machines(self) -> list[Machine]:
        return [m for m in self.machines if m.kind == "worker"]

    def _make_keys(self) -> None:
        """Every identity's key made once in a vault, then copied to the machines that act for it."""
        from adapters.keystore import Keystore

        self.vault = self.root / "vault"
        keys = Keystore(self.vault)
        for name in (RESOLVER, *self.everyone):
            self.addresses[name] = keys.new(name).address

    def _provision(self, machine: Machine, names: list[str]) -> None:
        (machine.home / "keys").mkdir(parents=True, exist_ok=True, mode=0o700)
        machine.project.mkdir(parents=True, exist_ok=True, mode=0o700)
        machine.root.chmod(0o700)
        for name in names:
            target = machine.home / "keys" / f"{name}.key"
            shutil.copy2(self.vault / f"{name}.key", target)
            target.chmod(0o600)

    def agent_machine(self, name: str) -> Machine:
        """A stdio agent's own host: its key only."""
        machine = Machine(f"agent-{name}", "mcp", self.root / f"agent-{name}")
        if not (machine.home / "keys" / f"{name}.key").exists():
            self._provision(machine, [name])
        return machine

    def _start_stand_ins(self) -> None:
        tokens = [f"--token=token-{n}={n}" for n in (RESOLVER, *self.everyone)]
        env = {**os.environ, "GITHUB_WEBHOOK_SECRET": self.webhook_secret}
        with (self.root / "github.log").open("w") as log:  # the child keeps its own copy of the descriptor
            self.github_proc = subprocess.Popen(
                [sys.executable, "-m", "tests.fakes.github_server", "--state", str(self.root / "github"),
                 "--repo", REPO, *tokens], stdout=subprocess.PIPE, stderr=log, text=True, env=env,
                preexec_fn=_die_with_parent)
        self.github = _read_line(self.github_proc, "the GitHub stand-in")
        with (self.root / "aptos.log").open("w") as log:
            self.aptos_proc = subprocess.Popen(
                [sys.executable, "-m", "tests.fakes.aptos_server", "--state", str(self.root / "aptos"),
                 "--resolver", self.addresses[RESOLVER], "--cooling-period", str(self.cooling_period)],
                stdout=subprocess.PIPE, stderr=log, text=True, preexec_fn=_die_with_parent)
        self.aptos = _read_line(self.aptos_proc, "the Aptos stand-in")

    # --- environments -----------------------------------------------------------------------------

    def env(self, machine: Machine, identity: str) -> dict[str, str]:
        """What a process on `machine` acting as `identity` is given: its own state, the shared services."""
        return {"PATH": os.environ.get("PATH", ""), "HOME": str(machine.home),
                "CODE3_HOME": str(machine.home), "CODE3_PROJECT": str(machine.project), "CODE3_IDENTITY": identity,
                "CODE3_CACHE_DIR": CACHE_DIR,  # the tools manifest, built once per installed version
                "CODE3_DATABASE_URL": self.database_url, "PGAPPNAME": f"soak-{self.tag}-{machine.name}",
                "CODE3_FORGE": "github", "CODE3_CHAIN": "aptos", "GITHUB_TOKEN": f"token-{identity}",
                "CODE3_GITHUB_API_URL": self.github["api_url"], "CODE3_APTOS_NODE_URL": self.aptos["url"],
                "CODE3_APTOS_MODULE_ADDRESS": self.aptos["module_address"],
                "CODE3_APTOS_ASSET_METADATA": self.aptos["asset_metadata"],
                "CODE3_SERVE_TOKEN": SERVE_TOKEN, "GITHUB_WEBHOOK_SECRET": self.webhook_secret,
                "CODE3_LOG_LEVEL": "INFO", "CODE3_LOG_FORMAT": "json", **self.extra_env}

    # --- processes --------------------------------------------------------------------------------

    def start(self, machine: Machine, wait: bool = True) -> None:
        machine.starts += 1
        args = ["serve", "--port", str(machine.port)] if machine.kind == "serve" else ["worker", "--interval", "0.5"]
        log = machine.log().open("w")
        machine.proc = subprocess.Popen([sys.executable, "-m", "code3", *args], env=self.env(machine, RESOLVER),
                                        cwd=machine.project, stdout=subprocess.PIPE, stderr=log, text=True,
                                        preexec_fn=_die_with_parent)
        log.close()
        if wait:
            self.wait_started(machine)

    def wait_started(self, machine: Machine) -> None:
        assert machine.proc is not None
        if machine.kind == "serve":
            _read_line(machine.proc, f"{machine.name}", timeout=120)
        else:  # started: its first tick done ("code3 worker: running"); a fault that lands earlier is another test
            _read_line(machine.proc, f"{machine.name}", timeout=120, text="running")

    def kill(self, machine: Machine) -> None:
        """SIGKILL: no handler runs, as a host losing power."""
        assert machine.proc is not None
        machine.proc.kill()
        machine.proc.wait(timeout=30)
        if machine.proc.stdout:
            machine.proc.stdout.close()
        machine.kills += 1

    def stop(self, machine: Machine) -> int | None:
        if machine.proc is None or machine.proc.poll() is not None:
            return machine.proc.poll() if machine.proc else None
        machine.proc.send_signal(signal.SIGTERM)
        try:
            code = machine.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            machine.proc.kill()
            code = machine.proc.wait()
        if machine.proc.stdout:
            machine.proc.stdout.close()
        return code

    def alive(self) -> dict[str, bool]:
        return {m.name: m.proc is not None and m.proc.poll() is None for m in self.machines}

    def close(self, drop_schema: bool = True) -> list[str]:
        """Stop everything: SIGTERM to every serve and worker at once, SIGKILL to those still running 15 s later
        (returned by name: `code3 serve` and `code3 worker` are meant to stop cleanly on SIGTERM)."""
        running = [m for m in self.machines if m.proc is not None and m.proc.poll() is None]
        for machine in running:
            with contextlib.suppress(OSError):
                machine.proc.send_signal(signal.SIGTERM)  # type: ignore[union-attr]
        deadline = time.monotonic() + 15
        sigkilled = []
        for machine in running:
            assert machine.proc is not None
            try:
                machine.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                machine.proc.kill()
                machine.proc.wait()
                sigkilled.append(machine.name)
            if machine.proc.stdout:
                machine.proc.stdout.close()
        for proc in (getattr(self, "github_proc", None), getattr(self, "aptos_proc", None)):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if proc is not None and proc.stdout:
                proc.stdout.close()
        if hasattr(self, "proxy"):
            self.proxy.close()
        if drop_schema and hasattr(self, "schema"):
            import psycopg

            with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")
        return sigkilled

    # --- the database's side ----------------------------------------------------------------------

    def terminate_backends(self) -> int:
        """pg_terminate_backend on this topology's own backends (application_name soak-<tag>-*), nobody else's."""
        import psycopg

        with psycopg.connect(POSTGRES_URL, autocommit=True, application_name=f"soak-observer-{self.tag}") as conn:
            rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name "
                                "LIKE %s AND pid <> pg_backend_pid()", (f"soak-{self.tag}-%",)).fetchall()
        return sum(1 for (done,) in rows if done)

    def backends(self) -> dict[str, int]:
        import psycopg

        with psycopg.connect(POSTGRES_URL, autocommit=True, application_name=f"soak-observer-{self.tag}") as conn:
            rows = conn.execute("SELECT application_name, count(*) FROM pg_stat_activity WHERE application_name "
                                "LIKE %s GROUP BY application_name", (f"soak-{self.tag}-%",)).fetchall()
        return {str(name).removeprefix(f"soak-{self.tag}-"): int(n) for name, n in rows}

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        """A read of the campaign's own schema, straight to PostgreSQL (not through the proxy)."""
        import psycopg

        with psycopg.connect(POSTGRES_URL, autocommit=True, application_name=f"soak-observer-{self.tag}") as conn:
            conn.execute(f"SET search_path TO {self.schema}")
            return [tuple(row) for row in conn.execute(sql).fetchall()]

    # --- the stand-ins' operator routes -----------------------------------------------------------

    def _control_github(self, method: str, route: str, body: Any = None) -> Any:
        answer = httpx.request(method, f"{self.github['web_url']}/_control/{route}", json=body, timeout=120)
        answer.raise_for_status()
        return answer.json()

    def merge(self, pr_url: str, by: str = RESOLVER) -> dict[str, Any]:
        """The maintainer's merge button: the stand-in merges and delivers the signed webhook to a serve."""
        return dict(self._control_github("POST", "merge", {"url": pr_url, "by": by}))

    def github_state(self) -> dict[str, Any]:
        return dict(self._control_github("GET", "state"))

    def mint(self, name: str, amount: int) -> None:
        base = self.aptos["url"].removesuffix("/v1")
        httpx.post(f"{base}/_control/mint", json={"address": self.addresses[name], "amount": amount},
                   timeout=30).raise_for_status()
        self.minted += amount

    def ledger(self) -> dict[str, Any]:
        base = self.aptos["url"].removesuffix("/v1")
        names = ",".join(self.addresses.values())
        answer = httpx.get(f"{base}/_control/ledger", params={"addresses": names}, timeout=60)
        answer.raise_for_status()
        return dict(answer.json())

    # --- probes -----------------------------------------------------------------------------------

    def readyz(self, machine: Machine, timeout: float = 15.0) -> tuple[int, str]:
        try:
            answer = httpx.get(f"{machine.url}/readyz", timeout=timeout)
        except httpx.HTTPError as exc:
            return 0, type(exc).__name__
        return answer.status_code, answer.text

    def code3(self, machine: Machine, *args: str, timeout: float = 300.0) -> subprocess.CompletedProcess[str]:
        """A one-off `code3` command on `machine` as acme (doctor, audit verify)."""
        env = {**self.env(machine, RESOLVER), "PGAPPNAME": f"soak-{self.tag}-{machine.name}-cli",
               "CODE3_LOG_FORMAT": "text", "CODE3_LOG_LEVEL": "WARNING"}
        return subprocess.run([sys.executable, "-m", "code3", *args], env=env, cwd=machine.project, text=True,
                              capture_output=True, timeout=timeout)
