"""A newcomer's whole journey on the embedded default, from a real package to the payout, knowing only what the
README, `code3 init` and the tools' answers say.

1. A small pure-Python package of the real-code corpus (scripts/fetch_corpus.sh; without it the test skips with
   that command) is copied to a temporary directory and made a git repository: `main`, one commit by the sponsor
   (whose git identity is that repository's own configuration: the shell's ~/.gitconfig has none), `origin` =
   https://github.com/acme/<name>.git.
2. `code3 init` as the sponsor, then the worker's init exactly as the sponsor's init printed it (`code3 init --role
   worker --identity bob`). CODE3_HOME is exported in the shell and is not the default under HOME.
3. Each role's server is started by the official TypeScript SDK client with exactly its `.mcp.json` entry
   (command, args, env) and the SDK's default environment: CODE3_HOME reaches a server only if init wrote it.
4. Sponsor: specify -> plan -> tasks; the spec directory committed and sent with `code3 forge push` (what publish
   warns of otherwise, so workers' forks start from it); publish for more than the sponsor holds (refused with a
   coded error, no issue on the forge, no money moved), then for the amount init's report suggests (the README's
   5 USDT, "5000000"): an issue opens with the bounty, and no warning about the spec.
5. Worker: accept_task with the task id the publish answered -> the calls its structured `next` names, literally
   (show_bounty to read first, then fork_and_prepare) -> a function added to a module of the package in the working
   copy fork_and_prepare names, run with plain `python` (its __pycache__ stays out of the PR), committed by hand with
   the identity fork_and_prepare set up -> open_pr -> submit_pr.
6. The maintainer merges with `code3 forge merge PR_URL`; `code3 worker --once` reports the merge and prints the
   `code3 ledger advance --seconds S` that passes the cooling period; that command, literally; `code3 worker --once`
   prints the payout. The merged work is on the forge's default branch, without .pyc files, and `code3 forge pull`
   brings it back to the sponsor's branch (the README's "merged work comes back").
7. Balances (`code3 account balance --identity …`): the sponsor down by 5 USDT, the worker up by the payout; the
   issue closed with `paid` and its code3-meta block current; `code3 audit verify` and `code3 doctor` exit 0.

Every step's failure says what the newcomer saw (the command or call, its exit or error, its output).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from domain.bounties.metadata import IssueMetadata
from tests import tools_needed
from tests.e2e import newcomer_world as nw

pytestmark = pytest.mark.e2e

AMOUNT = 5_000_000  # 5 USDT, the README's amount (init's report suggests the same)
FUNCTION = '''

def newcomer_greeting(name: str) -> str:
    """A greeting for `name`: the newcomer's bounty work."""
    return f"Hello, {name}!"
'''


def _forge_issues(project: Path, repo: str) -> list[Any]:
    """The embedded forge's issues of `repo`, read from its files as a maintainer's `code3` does."""
    from code3.settings import Settings
    from code3.wiring import local_forge

    forge = local_forge(Settings(project=project), "reader")
    try:
        return forge.list_issues(repo)
    finally:
        forge.close()


def _balance(project: Path, shell: dict[str, str], identity: str) -> int:
    ran = nw.code3(["account", "balance", "--identity", identity], project, shell)
    assert ran.code == 0, str(ran)
    answer = ran.json()
    assert answer["asset"] == "USDT" and answer["name"] == identity, answer
    return int(answer["balance"])


def _printed(pattern: str, text: str, what: str) -> str:
    found = re.search(pattern, text, re.MULTILINE)
    assert found, f"{what}: not printed (pattern {pattern!r}) in\n{text}"
    return found.group(1)


def _paid_line(out: str, repo: str, number: int, worker: str) -> bool:
    """Whether `code3 worker --once` printed the 5 USDT payout of `repo#number` to `worker`."""
    return re.search(rf"paid bounty \S+ \({re.escape(repo)}#{number}\) to {re.escape(worker)} \(0x[0-9a-f]+\) "
                     r"5 USDT", out) is not None


def _calls_of(step: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The calls a structured `next` names, in the order to make them: its read-only `read_first` call if any, then
    `tool` with its `arguments`."""
    assert step.get("tool"), f"`next` names no call: {step}"
    first = step.get("read_first")
    return [*([(first["tool"], first["arguments"])] if first else []), (step["tool"], step["arguments"])]


def test_a_newcomer_takes_a_corpus_package_from_init_to_a_paid_bounty(tmp_path: Path, code3_home: Path) -> None:
    started = time.monotonic()
    sdk = tools_needed.typescript_sdk()
    package = nw.corpus_package()
    name = package.name.rsplit("-", 1)[0]
    user_home = tmp_path / "home"  # HOME: its ~/.config/code3 is the default CODE3_HOME, which must stay unused
    user_home.mkdir()
    shell = nw.shell_env(code3_home, user_home)
    clients: list[nw.TsClient] = []

    # --- 1. the package, a git repository with an origin on GitHub
    project = nw.git_project(package, tmp_path / name, f"https://github.com/acme/{name}.git", shell)
    sources = [p.relative_to(package) for p in nw.python_sources(package)]

    try:
        # --- 2. code3 init as the sponsor, then the worker's init as the sponsor's printed it
        sponsor_init = nw.code3(["init"], project, shell)
        assert sponsor_init.code == 0, str(sponsor_init)
        repo = _printed(r"^repository\s+(\S+/\S+)\s", sponsor_init.out, "the forge repository")
        assert repo == f"acme/{name}", str(sponsor_init)
        sponsor_entry_name = _printed(r"server '([^']+)', role sponsor", sponsor_init.out, "the sponsor's entry")
        worker_line = _printed(r"`(code3 init --role worker[^`]*)`", sponsor_init.out, "how to add a worker")
        suggested = _printed(r'with amount "(\d+)"', sponsor_init.out, "the amount to publish")
        assert int(suggested) == AMOUNT, f"init suggests {suggested}, the README {AMOUNT}:\n{sponsor_init}"
        worker_args = worker_line.split()[1:]
        worker_identity = worker_args[worker_args.index("--identity") + 1]
        worker_init = nw.code3(worker_args, project, shell)
        assert worker_init.code == 0, str(worker_init)
        worker_address = _printed(rf"^identity\s+{worker_identity}\s+(0x[0-9a-f]+)", worker_init.out, "the worker")
        worker_entry_name = _printed(r"server '([^']+)', role worker", worker_init.out, "the worker's entry")
        assert not (user_home / ".config" / "code3").exists(), "init used the default CODE3_HOME, not the shell's"
        keys = sorted(p.name for p in (code3_home / "keys").iterdir())
        assert keys == sorted(["default.key", f"{worker_identity}.key"]), keys

        servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
        sponsor_entry, worker_entry = servers[sponsor_entry_name], servers[worker_entry_name]
        for entry in (sponsor_entry, worker_entry):
            assert entry["env"].get("CODE3_HOME") == str(code3_home), f"init wrote no CODE3_HOME: {entry}"
        sponsor_before = _balance(project, shell, "default")
        worker_before = _balance(project, shell, worker_identity)
        assert sponsor_before >= AMOUNT, f"init funded the sponsor with {sponsor_before} < {AMOUNT}"

        # --- 3./4. the sponsor's client, from its .mcp.json entry alone
        sponsor = nw.TsClient(sdk, sponsor_entry, shell, cwd=tmp_path, log=tmp_path / "sponsor-server.log")
        clients.append(sponsor)
        assert {"spec_mcp.specify", "spec_mcp.plan", "spec_mcp.tasks",
                "spec_mcp.publish_issue_with_metadata"} <= set(sponsor.tools), sponsor.tools
        spec = sponsor.ok("spec_mcp.specify", {"feature_description": "Add a greeting helper to the utilities"})
        feature_id = spec["feature_id"]
        sponsor.ok("spec_mcp.plan", {"feature_id": feature_id})
        sponsor.ok("spec_mcp.tasks", {"feature_id": feature_id})
        # the spec directory in the project's history and on the forge, so workers' forks start from it (publish
        # warns otherwise: tests/integration/test_init_forge_and_identity.py)
        spec_dir = spec["paths"]["dir"]
        nw.git(project, "add", spec_dir, env=shell)
        nw.git(project, "commit", "-q", "-m", f"Specify {feature_id}", env=shell)
        pushed = nw.code3(["forge", "push"], project, shell)
        assert pushed.code == 0 and pushed.json()["state"] == "pushed", str(pushed)
        publish = {"repo": repo, "feature_id": feature_id, "spec_path": spec["paths"]["spec"], "asset": "USDT",
                   "network": "testnet", "labels": ["code3", "open"]}

        too_much = str(sponsor_before + 1)
        error = sponsor.refused("spec_mcp.publish_issue_with_metadata", {**publish, "amount": too_much})
        assert error["code"] == "E_CHAIN_TX_FAILED", error
        assert "code3 account fund" in error["hint"], error
        assert _forge_issues(project, repo) == [], "a publish the sponsor cannot fund opened an issue"
        assert _balance(project, shell, "default") == sponsor_before, "the refused publish moved money"
        ledger = nw.code3(["ledger", "show"], project, shell)
        assert ledger.code == 0 and ledger.json()["bounties"] == [], f"the refused publish left a bounty:\n{ledger}"

        published = sponsor.ok("spec_mcp.publish_issue_with_metadata", {**publish, "amount": suggested})
        assert published["bounty"]["amount"] == str(AMOUNT) and published["bounty"]["amount_display"] == "5 USDT"
        assert not [w for w in published.get("warnings", []) if "code3 forge push" in w], published
        number = published["issue"]["number"]
        issues = _forge_issues(project, repo)
        assert [(i.number, i.state) for i in issues] == [(number, "open")], issues
        assert published["issue"]["url"].endswith(f"/{repo}/issues/{number}"), published

        # --- 5. the worker's client: every argument from an earlier answer
        worker = nw.TsClient(sdk, worker_entry, shell, cwd=tmp_path, log=tmp_path / "worker-server.log")
        clients.append(worker)
        accepted = worker.ok("server_mcp.accept_task", {"task_id": f"{repo}#{number}"})
        assert accepted["bounty_id"] == published["bounty"]["bounty_id"], accepted
        calls = _calls_of(accepted["next"])
        assert calls[-1] == ("server_mcp.fork_and_prepare", {"bounty_id": accepted["bounty_id"]}), accepted["next"]
        for tool, arguments in calls[:-1]:  # what it says to read first (show_bounty: the spec and tasks)
            shown = worker.ok(tool, arguments)
            if tool == "server_mcp.show_bounty":
                assert shown["feature_id"] == feature_id and shown["spec"]["role"] == "sponsor", shown
        forked = worker.ok(*calls[-1])
        workdir = Path(forked["workdir"])
        assert (workdir / ".git").exists(), forked
        assert forked["generated"] == [], f"the branch lacks the specs the sponsor pushed: {forked}"
        target = next((workdir / s for s in sources if s.name == "utils.py"), workdir / sources[-1])
        assert target.is_file(), f"{target} is not in the working copy fork_and_prepare named: {forked}"
        target.write_text(target.read_text() + FUNCTION)
        top = workdir / "src" if (workdir / "src").is_dir() else workdir  # where the package's import root is
        module = ".".join(target.relative_to(top).with_suffix("").parts)
        check = f"import {module} as m; print(m.newcomer_greeting('bob'))"  # leaves __pycache__ in the copy
        greeted = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True,
                                 env={**shell, "PYTHONPATH": str(top)}, timeout=60)
        assert greeted.stdout.strip() == "Hello, bob!", greeted
        assert list(workdir.rglob("*.pyc")), "running the code left no .pyc: the PR check below proves nothing"
        nw.git(workdir, "commit", "-q", "-am", "Add newcomer_greeting", env=shell)  # no identity of the shell's
        work = nw.git(workdir, "rev-parse", "HEAD", env=shell).strip()
        author = nw.git(workdir, "log", "-1", "--format=%an <%ae>", env=shell).strip()
        assert author.startswith(f"{worker_identity} <"), f"the hand commit's author is {author}"
        opened = worker.ok("server_mcp.open_pr", {"repo": accepted["repo"], "branch": forked["branch"],
                                                  "title": f"feat: {accepted['title']}",
                                                  "body": f"Implements {accepted['issue_url']}"})
        pr_url = opened["pr_url"]
        assert opened["head_sha"] == work, f"the PR's head is not the worker's commit {work}: {opened}"
        worker.ok("server_mcp.submit_pr", {"bounty_id": accepted["bounty_id"], "pr_url": pr_url,
                                           "commit_sha": opened["head_sha"]})
        for client in clients:
            client.close()

        # --- 6. the merge, a worker round reporting it, the cooling period, a worker round paying
        merged = nw.code3(["forge", "merge", pr_url], project, shell)
        assert merged.code == 0, str(merged)
        upstream = project / ".code3" / "forge" / "repos" / f"{repo}.git"  # the forge's files: a bare repository
        merged_file = nw.git(project, f"--git-dir={upstream}", "show", f"main:{target.relative_to(workdir)}",
                             env=shell)
        assert "def newcomer_greeting" in merged_file, f"{upstream}'s main lacks the merged work after\n{merged}"
        in_pr = nw.git(project, f"--git-dir={upstream}", "diff", "--name-only", "main^1", "main", env=shell).split()
        assert in_pr == [str(target.relative_to(workdir))], f"the merged PR holds more than the edit: {in_pr}"
        reported = nw.code3(["worker", "--once"], project, shell)
        assert reported.code == 0, str(reported)
        advance = _printed(rf"reported the merge of PR {re.escape(pr_url)} for bounty \S+ "
                           rf"\({re.escape(repo)}#{number}\): cooling until [^;]+ UTC; on the embedded ledger "
                           r"`(code3 ledger advance --seconds \d+)` moves the clock past it", reported.out,
                           "the merge the round reported")
        advanced = nw.code3(advance.split()[1:], project, shell)
        assert advanced.code == 0, str(advanced)
        round_ = nw.code3(["worker", "--once"], project, shell)
        assert round_.code == 0, str(round_)
        assert _paid_line(round_.out, repo, number, worker_identity), \
            f"after `{advance}`, `code3 worker --once` did not print the payout:\n{reported}\n{advanced}\n{round_}"

        # --- the merged work comes back to the sponsor's branch (README: `code3 forge pull`)
        pulled = nw.code3(["forge", "pull"], project, shell)
        assert pulled.code == 0 and pulled.json()["state"] == "pulled", str(pulled)
        assert "def newcomer_greeting" in (project / target.relative_to(workdir)).read_text(), str(pulled)

        # --- 7. the money, the issue, the audit, the doctor
        assert _balance(project, shell, "default") == sponsor_before - AMOUNT
        assert _balance(project, shell, worker_identity) == worker_before + AMOUNT
        issue = next(i for i in _forge_issues(project, repo) if i.number == number)
        assert issue.state == "closed" and "paid" in issue.labels, (issue.state, issue.labels)
        meta = IssueMetadata.from_body(issue.body)
        assert meta is not None, issue.body
        assert (meta.bounty.status, meta.bounty.pr_url, meta.bounty.winner) == ("paid", pr_url, worker_address), meta
        verified = nw.code3(["audit", "verify"], project, shell)
        assert verified.code == 0, str(verified)
        doctor = nw.code3(["doctor"], project, shell)
        assert doctor.code == 0, str(doctor)
    finally:
        for client in clients:
            client.close()
    print(f"the journey took {time.monotonic() - started:.0f} s")  # reported, not tested: speed belongs in benchmarks/
