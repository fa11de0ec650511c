"""`code3 demo`: one whole bounty lifecycle on a throw-away embedded project, printed as a timeline.

Three identities act through the same handlers the MCP tools call: alice sponsors, bob and carol
work. Every step states what it expects; the demo exits non-zero at the first surprise.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from adapters.keystore import Keystore
from adapters.ledger_tables import ESCROW
from adapters.local_forge import LocalForge
from adapters.local_ledger import LocalLedger
from code3.settings import Settings
from code3.wiring import build_services, record_resolver
from domain.errors import Code3Error
from mcp_tools.lifecycle import publish, settle, specs, work
from mcp_tools.services import Services

REPO = "alice/todo-app"
AMOUNT = 1_000_000  # 1 USDT in its smallest unit (6 decimals)


class DemoFailed(Exception):
    pass


class Timeline:
    def __init__(self, ledger: LocalLedger, forge: LocalForge, people: dict[str, Services]) -> None:
        self.ledger, self.forge, self.people = ledger, forge, people
        self.issue_number: int | None = None
        self.step = 0

    def balances(self) -> str:
        parts = [f"{name}={self.ledger.balance(s.signer.address, 'USDT'):,}" for name, s in self.people.items()]
        return " ".join([*parts, f"escrow={self.ledger.balance(ESCROW, 'USDT'):,}"])

    def state(self) -> str:
        bounties = self.ledger.list_bounties()
        if not bounties:
            return "no bounty"
        labels = self.forge.get_issue(REPO, self.issue_number).labels if self.issue_number else []
        return f"bounty {bounties[0].status.name} labels={','.join(labels)}"

    def do(self, who: str, what: str, action: Callable[[Services], Mapping[str, Any]],
           expect: str | None = None) -> Mapping[str, Any]:
        """Run one step as `who`; `expect` names the error code the step must answer, if any."""
        self.step += 1
        try:
            result = action(self.people[who])
            outcome = "ok"
            if expect:
                raise DemoFailed(f"step {self.step} ({what}) should have failed with {expect}, got {result}")
        except Code3Error as exc:
            if exc.code.value != expect:
                raise DemoFailed(f"step {self.step} ({what}) failed: {exc.code.value}: {exc.message}") from None
            result, outcome = exc.as_dict(), f"refused as expected: {exc.code.value} ({exc.message})"
        print(f"{self.step:>2}. {who:<6} {what}\n      → {outcome}\n      {self.state()} | {self.balances()}")
        return result


def run_demo(keep: bool = False) -> int:
    """The demo's project and its own CODE3_HOME (keys, secrets) side by side in one throw-away directory:
    the user's own keys are neither read nor touched."""
    top = Path(tempfile.mkdtemp(prefix="code3-demo-"))
    try:
        _lifecycle(top / "project", top / "home")
    except DemoFailed as exc:
        print(f"\nDEMO FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if keep:
            print(f"\nThe demo project is kept at {top / 'project'} (its keys and secrets, the demo's "
                  f"CODE3_HOME, at {top / 'home'})")
        else:
            shutil.rmtree(top, ignore_errors=True)
    return 0


def _lifecycle(project: Path, home: Path) -> None:
    project.mkdir(mode=0o700)
    keystore = Keystore(Settings(project=project, home=home).keystore_dir)
    for name in ("alice", "bob", "carol"):
        keystore.new(name)
    # alice also runs the server that reports merges: the ledger records her as its resolver
    people = {name: build_services(Settings(project=project, home=home, identity=name, resolver="alice"))
              for name in ("alice", "bob", "carol")}
    record_resolver(Settings(project=project, home=home, identity="alice"))
    ledger = people["alice"].chain
    forge = people["alice"].forge
    assert isinstance(ledger, LocalLedger) and isinstance(forge, LocalForge)
    ledger.mint(people["alice"].signer.address, "USDT", 5 * AMOUNT)
    forge.create_repo(REPO, "# todo-app\nA small to-do list service.\n")
    t = Timeline(ledger, forge, people)
    print(f"Code3 demo — a throw-away project in {project}\n"
          f"alice sponsors a feature of {REPO}; bob and carol compete for the bounty.\n")

    spec = t.do("alice", "spec_mcp.specify: 'Users can export their to-do list as CSV'",
                lambda s: specs.specify(s, "Users can export their to-do list as CSV. Exports include due dates"))
    fid = spec["feature_id"]
    t.do("alice", f"spec_mcp.plan {fid}", lambda s: specs.plan(s, fid))
    t.do("alice", "spec_mcp.plan again (must not overwrite)", lambda s: specs.plan(s, fid), expect="E_EXISTS")
    t.do("alice", f"spec_mcp.tasks {fid}", lambda s: specs.tasks(s, fid))
    args = {"repo": REPO, "feature_id": fid, "spec_path": spec["paths"]["spec"], "amount": str(AMOUNT),
            "asset": "USDT", "network": "local", "mode": "contest"}  # bob and carol compete: a contest
    published = t.do("alice", f"spec_mcp.publish_issue_with_metadata ({AMOUNT:,} USDT units)",
                     lambda s: publish.publish_issue_with_metadata(s, **args))
    t.issue_number = published["issue"]["number"]
    again = t.do("alice", "publish again with the same arguments (idempotent)",
                 lambda s: publish.publish_issue_with_metadata(s, **args))
    if again != published:
        raise DemoFailed("a repeated publish returned a different answer")
    bounty_id = published["bounty"]["bounty_id"]
    task_id = f"{REPO}#{t.issue_number}"

    t.do("bob", f"server_mcp.accept_task {task_id}", lambda s: work.accept_task(s, task_id))
    picked = t.do("carol", "server_mcp.accept_best_task (max_amount)", lambda s: work.accept_best_task(s))
    if picked["selected_task_id"] != task_id:
        raise DemoFailed(f"carol should have picked {task_id}, got {picked}")

    prs: dict[str, str] = {}
    for who, change in (("bob", "def export_csv(todos):\n    return '\\n'.join(t.title for t in todos)\n"),
                        ("carol", "import csv\n\ndef export_csv(todos, out):\n    csv.writer(out).writerows(todos)\n")):
        prepared = t.do(who, f"server_mcp.fork_and_prepare {REPO}",
                        lambda s: work.fork_and_prepare(s, REPO, {"schema": "code3/v1", "feature_id": fid,
                                                                  "issue_number": t.issue_number}))
        (Path(prepared["workdir"]) / "export.py").write_text(change)
        pr = t.do(who, "server_mcp.open_pr (commits and pushes the work)",
                  partial(work.open_pr, repo=REPO, branch=prepared["branch"], title=f"feat: CSV export ({who})",
                          body=f"Implements {task_id}"))
        prs[who] = pr["pr_url"]
        t.do(who, f"server_mcp.submit_pr {pr['pr_url']}",
             partial(work.submit_pr, bounty_id=bounty_id, pr_url=pr["pr_url"]))

    merged = forge.merge_pr(prs["bob"])
    print(f"    (the maintainer merges bob's PR on the forge: {merged.merge_sha})")
    t.do("alice", "mark_merged (as the merge webhook reports it: the resolver reads the PR on the forge, links its "
                  "author from the statement bob's submit_pr posted, and names bob the winner)",
         lambda s: settle.mark_merged(s, prs["bob"], delivery_id="demo-delivery-1", bounty_id=bounty_id))
    t.do("alice", "the same webhook delivery again (no second effect)",
         lambda s: settle.mark_merged(s, prs["bob"], delivery_id="demo-delivery-1", bounty_id=bounty_id))
    t.do("bob", "server_mcp.claim_payout during cooling", lambda s: settle.claim_payout(s, bounty_id),
         expect="E_COOLING")
    ledger.advance(ledger.cooling_period + 1)
    print(f"    (the ledger's clock moves past the {ledger.cooling_period} s cooling period)")
    t.do("carol", "server_mcp.claim_payout (not the winner)", lambda s: settle.claim_payout(s, bounty_id),
         expect="E_UNAUTHORIZED")
    paid = t.do("bob", "server_mcp.claim_payout", lambda s: settle.claim_payout(s, bounty_id))
    repeat = t.do("bob", "claim again (returns the same transaction)", lambda s: settle.claim_payout(s, bounty_id))
    if repeat["tx_hash"] != paid["tx_hash"]:
        raise DemoFailed("a repeated claim returned another transaction")

    checks = {
        "bob was paid the bounty": ledger.balance(people["bob"].signer.address, "USDT") == AMOUNT,
        "the escrow is empty": ledger.balance(ESCROW, "USDT") == 0,
        "carol was paid nothing": ledger.balance(people["carol"].signer.address, "USDT") == 0,
        "the issue is labelled paid": "paid" in forge.get_issue(REPO, t.issue_number).labels,
    }
    print()
    for what, ok in checks.items():
        print(f"  [{'x' if ok else ' '}] {what}")
    if not all(checks.values()):
        raise DemoFailed("the end state is wrong")
    print("\nThe winner is paid and the escrow is empty.")
    for services in people.values():
        services.close()
