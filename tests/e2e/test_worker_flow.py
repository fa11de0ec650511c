"""End to end with real processes: `code3 serve` receives the embedded forge's signed merge webhook,
`code3 worker` mirrors, waits out cooling and pays — also when it is SIGKILLed again and again.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.keystore import Keystore
from adapters.ledger_tables import ESCROW
from code3.settings import Settings
from code3.wiring import build_services
from domain.bounties.amounts import display
from domain.bounties.contract import Status
from domain.bounties.metadata import IssueMetadata
from mcp_tools.lifecycle import publish, specs, work
from mcp_tools.services import Services

pytestmark = pytest.mark.e2e

REPO = "alice/todo-app"
AMOUNT = 1_000_000
COOLING = 2
TRANSITIONS = 8  # created, 2 accepted, 2 submitted, merged, cooling started, paid


def code3(*args: str, project: Path, identity: str = "alice") -> subprocess.Popen[str]:
    env = {**os.environ, "CODE3_PROJECT": str(project), "CODE3_IDENTITY": identity, "CODE3_RESOLVER": "alice",
           "CODE3_COOLING_PERIOD": str(COOLING), "CODE3_LOG_LEVEL": "INFO"}
    return subprocess.Popen([sys.executable, "-m", "code3", *args], env=env, cwd=project, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_for(what: str, check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        keys = Keystore(Settings(project=root).keystore_dir)
        for name in ("alice", "bob", "carol"):
            keys.new(name)
        # alice runs `code3 serve`, which reports merges: the ledger records her as its resolver
        self.people = {name: build_services(Settings(project=root, identity=name, cooling_period=COOLING,
                                                     resolver="alice"))
                       for name in ("alice", "bob", "carol")}
        self.alice.chain.mint(self.alice.signer.address, "USDT", 5 * AMOUNT)  # type: ignore[attr-defined]
        self.alice.forge.create_repo(REPO)  # type: ignore[attr-defined]

    @property
    def alice(self) -> Services:
        return self.people["alice"]

    def lifecycle_until_submitted(self) -> tuple[dict[str, Any], dict[str, str]]:
        spec = specs.specify(self.alice, "Users can export their to-do list as CSV")
        specs.plan(self.alice, spec["feature_id"])
        specs.tasks(self.alice, spec["feature_id"])
        published = publish.publish_issue_with_metadata(
            self.alice, repo=REPO, feature_id=spec["feature_id"], spec_path=spec["paths"]["spec"],
            amount=str(AMOUNT), network="local", mode="contest")
        task_id = f"{REPO}#{published['issue']['number']}"
        prs = {}
        for who in ("bob", "carol"):
            s = self.people[who]
            work.accept_task(s, task_id)
            prepared = work.fork_and_prepare(s, REPO, {"feature_id": spec["feature_id"],
                                                       "issue_number": published["issue"]["number"]})
            (Path(prepared["workdir"]) / f"{who}.py").write_text("print('done')\n")
            prs[who] = work.open_pr(s, REPO, prepared["branch"], f"feat: {who}", "")["pr_url"]
            work.submit_pr(s, published["bounty"]["bounty_id"], prs[who])
        return published, prs

    def labels(self, number: int) -> list[str]:
        return self.alice.forge.get_issue(REPO, number).labels

    def comments(self, number: int) -> list[str]:
        return [c.body for c in self.alice.forge.list_comments(REPO, number)]  # type: ignore[attr-defined]

    def close(self) -> None:
        for s in self.people.values():
            s.close()


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    p = Project(tmp_path)
    yield p
    p.close()


@pytest.fixture
def serve(project: Project) -> Iterator[str]:
    proc = code3("serve", "--port", "0", project=project.root)
    line = proc.stdout.readline() if proc.stdout else ""
    assert line, f"code3 serve did not start: {proc.stderr.read() if proc.stderr else ''}"
    yield json.loads(line)["listening"]
    stop(proc)


def stop(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(timeout=20)
    finally:
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


def settled_state(project: Project, number: int) -> bool:
    return "paid" in project.labels(number) and len(project.comments(number)) >= TRANSITIONS


def assert_exactly_once(project: Project, published: dict[str, Any]) -> None:
    number, bounty_id = published["issue"]["number"], published["bounty"]["bounty_id"]
    comments = project.comments(number)
    markers = [re.search(r"<!-- code3:[^>]+-->", c).group(0) for c in comments]
    assert len(comments) == TRANSITIONS and len(set(markers)) == TRANSITIONS, comments
    paid = [e for e in project.alice.chain.bounty_events(bounty_id) if e.type == "BountyPaid"]
    assert len(paid) == 1
    chain = project.alice.chain
    assert chain.balance(project.people["bob"].signer.address, "USDT") == AMOUNT
    assert chain.balance(ESCROW, "USDT") == 0
    assert project.labels(number) == ["code3", "paid"]


def test_a_signed_merge_webhook_leads_to_cooling_then_payout_without_another_call(
        project: Project, serve: str) -> None:
    published, prs = project.lifecycle_until_submitted()
    number = published["issue"]["number"]
    worker = code3("worker", "--interval", "0.2", project=project.root)
    try:
        merged = project.alice.forge.merge_pr(prs["bob"])  # type: ignore[attr-defined]
        assert merged.merged
        [delivery] = project.alice.forge.deliveries()  # type: ignore[attr-defined]
        assert delivery["status"] == 200, delivery
        assert "cooling" in project.labels(number)
        wait_for("the payout and the mirror", lambda: settled_state(project, number), timeout=30)
        assert_exactly_once(project, published)

        log_size = project.alice.store.recorder.max_notification_id()
        assert project.alice.forge.redeliver(delivery["id"]) == 200  # type: ignore[attr-defined]
        assert project.alice.store.recorder.max_notification_id() == log_size, "a redelivery records nothing"
    finally:
        assert stop(worker) == 0, "the worker stops cleanly on SIGTERM"

    verify = subprocess.run([sys.executable, "-m", "code3", "audit", "verify", "--project", str(project.root),
                             "--identity", "alice"], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    export = project.root / "log.jsonl"
    subprocess.run([sys.executable, "-m", "code3", "audit", "export", str(export), "--project", str(project.root),
                    "--identity", "alice"], check=True, capture_output=True)
    ok = subprocess.run([sys.executable, "-m", "code3", "audit", "check", str(export)], capture_output=True)
    assert ok.returncode == 0
    data = bytearray(export.read_bytes())
    data[len(data) // 2] ^= 0x01
    export.write_bytes(bytes(data))
    broken = subprocess.run([sys.executable, "-m", "code3", "audit", "check", str(export)], capture_output=True)
    assert broken.returncode == 1


def _import_time() -> float:
    """Seconds a fresh `code3 worker` spends importing before it can work (measured here, now)."""
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", "import code3.cli, code3.wiring, scheduler.worker"], check=True)
    return time.monotonic() - began


def test_a_worker_killed_again_and_again_pays_once_and_comments_once(project: Project, serve: str) -> None:
    published, prs = project.lifecycle_until_submitted()
    number = published["issue"]["number"]
    project.alice.forge.merge_pr(prs["bob"])  # type: ignore[attr-defined]
    rng = random.Random(20261122)
    startup = _import_time()  # kills land after start-up, whatever the machine's load makes start-up cost
    kills = 0
    while kills < 10 or not settled_state(project, number):
        worker = code3("worker", "--interval", "0.1", project=project.root)
        time.sleep(startup + rng.uniform(0.3, 1.5))
        worker.kill()
        worker.wait()
        for stream in (worker.stdout, worker.stderr):
            if stream:
                stream.close()
        kills += 1
        assert kills < 60, "never settled"
    final = code3("worker", "--once", project=project.root)
    _, err = final.communicate(timeout=60)
    assert final.returncode == 0, err
    assert_exactly_once(project, published)


def run(*args: str, project: Project, identity: str = "alice") -> tuple[int, str, str]:
    proc = code3(*args, project=project.root, identity=identity)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def test_one_worker_round_after_the_cooling_pays_says_so_and_leaves_the_issue_and_views_current(
        project: Project, serve: str) -> None:
    published, prs = project.lifecycle_until_submitted()
    number, bounty_id = published["issue"]["number"], published["bounty"]["bounty_id"]
    chain = project.alice.chain
    project.alice.forge.merge_pr(prs["bob"])  # type: ignore[attr-defined]
    wait_for("the merge reported", lambda: chain.get_bounty(bounty_id).status is Status.COOLING_DOWN)
    code, out, err = run("ledger", "advance", "--seconds", str(COOLING + 1), project=project)
    assert code == 0, err
    bob = project.people["bob"].signer.address
    before = chain.balance(bob, "USDT")

    code, out, err = run("worker", "--once", project=project)

    assert code == 0, err
    assert chain.balance(bob, "USDT") == before + AMOUNT, "the winner was paid in that one round"
    lines = out.splitlines()
    assert f"code3 worker: paid bounty {bounty_id} ({REPO}#{number}) to bob ({bob}) 1 USDT (1000000 smallest " \
           "units)" in lines, out
    assert any(re.fullmatch(r"code3 worker: mirrored \d+ transition\(s\) to the forge .*", line) for line in lines), out
    assert "Traceback" not in out + err and "code3 worker:" not in err, "the summary on stdout, the log on stderr"

    issue = project.alice.forge.get_issue(REPO, number)
    assert issue.state == "closed" and issue.labels == ["code3", "paid"]
    meta = IssueMetadata.from_body(issue.body)
    assert meta is not None and meta.labels == ["code3", "paid"]
    paid = chain.get_bounty(bounty_id)
    assert (meta.bounty.status, meta.bounty.winner, meta.bounty.pr_url) == ("paid", bob, prs["bob"])
    assert meta.bounty.deadline == paid.deadline and meta.bounty.cooling_until == paid.cooling_until
    assert meta.bounty.bounty_id == bounty_id and meta.bounty.merged_at is not None

    code, out, err = run("doctor", project=project)
    assert "[ok] projection lag" in out and "[ok] payouts" in out, out + err

    code, out, err = run("account", "balance", "--identity", "bob", project=project)
    assert code == 0, err
    assert json.loads(out) == {"name": "bob", "address": bob, "asset": "USDT", "balance": before + AMOUNT,
                               "balance_display": display(before + AMOUNT, "USDT"), "chain": "local"}

    code, out, err = run("worker", "--once", project=project)
    assert (code, out) == (0, "code3 worker: nothing to do\n"), out + err


def test_serve_starts_in_an_empty_directory(tmp_path: Path) -> None:
    proc = code3("serve", "--port", "0", project=tmp_path)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        url = json.loads(line)["listening"]
        with urllib.request.urlopen(f"{url}/healthz", timeout=10) as answer:
            assert json.loads(answer.read()) == {"ok": True}
        body = b'{"zen": "Non-blocking is better than blocking."}'
        unsigned = urllib.request.Request(f"{url}/webhooks/github", data=body, method="POST",
                                          headers={"X-GitHub-Event": "ping", "X-GitHub-Delivery": "1"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(unsigned, timeout=10)
        assert refused.value.code == 401
        refused.value.close()
    finally:
        assert stop(proc) == 0


def test_serve_refuses_a_public_address_without_the_flag(tmp_path: Path) -> None:
    proc = code3("serve", "--host", "0.0.0.0", "--port", "0", project=tmp_path)
    assert proc.wait(timeout=30) == 1  # the one CLI error style: 1 for a refusal (2 only where 1 is a finding)
    err = proc.stderr.read() if proc.stderr else ""
    assert err.startswith("code3: E_") and "--allow-remote" in err
    for stream in (proc.stdout, proc.stderr):
        if stream:
            stream.close()
