"""Race campaign: publish, accept, submit, claim and cancel each fired from several processes at once
(on the embedded default: one ledger and forge shared by the processes, as on one machine; the event store
on SQLite and on PostgreSQL, as a team's processes share it).

One effect, and the same answer for every caller: one issue and one bounty per publish, one acceptance,
one submission, one payout and one refund, every racer answering the same issue, bounty and tx_hash; two
workers racing for an exclusive task: one holder, the other told to choose another. Racing ai-loom edits of
one annotation all land (each retried on the others' result), none answering INTERNAL.
`CODE3_RACE_ROUNDS` sets the rounds (`make test`: 2; `make race`: 20); `CODE3_RACERS` the processes (3).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from code3.settings import Settings
from code3.wiring import build_services, ledger, local_forge
from domain.bounties.bounty import Bounty
from domain.bounties.contract import Status
from mcp_tools.lifecycle import settle, specs, work
from tests.campaigns.world import AMOUNT, REPO, CampaignWorld

ROUNDS = int(os.environ.get("CODE3_RACE_ROUNDS", "2"))
RACERS = int(os.environ.get("CODE3_RACERS", "3"))
ROOT = Path(__file__).resolve().parents[2]


def race(project: Path, database_url: str | None, identity: str | list[str], command: str,
         arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """RACERS processes at once (one identity, or the given identities in turn); their answers in order."""
    go = project / f".go-{command}"
    go.unlink(missing_ok=True)
    who = [identity] * RACERS if isinstance(identity, str) else identity
    racers = [subprocess.Popen([sys.executable, "-m", "tests.campaigns.racer", str(project), name, command,
                                json.dumps(arguments), str(go)], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "CODE3_RACE_DATABASE_URL": database_url or ""}) for name in who]
    go.write_text("go")
    answers = []
    for racer in racers:
        out, err = racer.communicate(timeout=120)
        assert racer.returncode == 0 and "Traceback" not in err, err
        answers.append(json.loads(out.strip().splitlines()[-1]))
    return answers


def _same(answers: list[dict[str, Any]], what: str) -> dict[str, Any]:
    assert all("ok" in a for a in answers), f"{what}: a racer failed: {answers}"
    assert all(a == answers[0] for a in answers), f"{what}: racers answered differently: {answers}"
    return answers[0]["ok"]


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_racing_processes_get_one_effect_and_the_same_answer(round_: int, tmp_path: Path,
                                                             database_url: str | None) -> None:
    db = database_url
    world = CampaignWorld.create(tmp_path, db)
    try:
        alice = world.people["alice"]
        spec = specs.specify(alice, "Users can import a to-do list from CSV")
        published = _same(race(tmp_path, db, "alice", "publish", {
            "repo": REPO, "feature_id": spec["feature_id"], "spec_path": spec["paths"]["spec"],
            "amount": str(AMOUNT), "asset": "USDT", "network": alice.chain.network}), "publish")
        forge = local_forge(Settings(project=tmp_path), "alice")
        assert len(forge.list_issues(REPO)) == 2, "one issue per publish however many race"
        forge.close()
        chain = ledger(Settings(project=tmp_path))
        assert len(chain.list_bounties()) == 2
        bounty_id = published["bounty"]["bounty_id"]

        _same(race(tmp_path, db, "bob", "accept", {"task_id": f"{REPO}#{published['issue']['number']}"}), "accept")
        bob = world.people["bob"]
        prepared = work.fork_and_prepare(bob, REPO, {"schema": "code3/v1", "feature_id": spec["feature_id"],
                                                     "issue_number": published["issue"]["number"]})
        (Path(prepared["workdir"]) / "import.py").write_text("print('import')\n")
        pr = work.open_pr(bob, REPO, prepared["branch"], "feat: import", "work")
        submitted = _same(race(tmp_path, db, "bob", "submit", {"bounty_id": bounty_id, "pr_url": pr["pr_url"]}),
                          "submit")
        assert submitted["tx_hash"]

        local_forge(Settings(project=tmp_path), "alice").merge_pr(pr["pr_url"])
        resolver = build_services(Settings(project=tmp_path, identity="default", database_url=db))  # the resolver
        try:
            settle.mark_merged(resolver, pr["pr_url"], delivery_id=f"round-{round_}")
        finally:
            resolver.close()
        chain.advance(chain.cooling_period + 1)
        paid = _same(race(tmp_path, db, "bob", "claim", {"bounty_id": bounty_id}), "claim")
        assert paid["tx_hash"]

        open_id = next(b.bounty_id for b in chain.list_bounties() if b.bounty_id != bounty_id)
        # two workers race for the first, exclusive, task: one holds it, the other is told to choose another
        first = next(i.number for i in local_forge(Settings(project=tmp_path), "alice").list_issues(REPO)
                     if i.number != published["issue"]["number"])
        task = f"{REPO}#{first}"
        accepts = race(tmp_path, db, ["bob", "carol", "bob", "carol"], "accept", {"task_id": task})
        holders = {who for who, a in zip(["bob", "carol", "bob", "carol"], accepts, strict=True) if "ok" in a}
        assert len(holders) == 1, accepts
        assert all(a.get("error") == "E_INVALID_STATE" for a in accepts if "ok" not in a), accepts
        cancelled = _same(race(tmp_path, db, "alice", "cancel", {"bounty_id": open_id}), "cancel")
        assert cancelled["state"] == Status.CANCELLED.name and cancelled["tx_hash"]

        check = build_services(Settings(project=tmp_path, identity="alice", database_url=db))
        try:
            for bid, status in ((bounty_id, Status.PAID), (open_id, Status.CANCELLED)):
                bounty = check.store.get(Bounty, Bounty.create_id(bid))
                assert bounty is not None and bounty.status is status
            events = [type(e).__name__ for e in check.store.repository.event_store.get(Bounty.create_id(bounty_id))]
            assert events.count("Accepted") == 1 and events.count("PRSubmitted") == 1 and events.count("Paid") == 1
        finally:
            check.close()
            chain.close()
    finally:
        world.close()


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_racing_ai_loom_edits_all_land(round_: int, tmp_path: Path, database_url: str | None) -> None:
    from adapters.keystore import Keystore
    from domain.knowledge.annotation_rules import parse_ann_id
    from mcp_tools.ai_loom import tools as loom

    Keystore(Settings(project=tmp_path).keystore_dir).new("alice")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    s = build_services(Settings(project=tmp_path, identity="alice", database_url=database_url))
    try:
        made = loom.annotate(s, filePath="src/app.py", startLine=3, endLine=4, comment="start")
    finally:
        s.close()
    answers = race(tmp_path, database_url, "alice", "loom_edit", {"id": made["id"], "comment": "edited"})
    assert all("ok" in a for a in answers), f"a racing edit failed: {answers}"
    assert len({a["ok"]["comment"] for a in answers}) == RACERS, "each racer's own edit landed"
    check = build_services(Settings(project=tmp_path, identity="alice", database_url=database_url))
    try:
        history = [type(e).__name__ for e in check.store.repository.event_store.get(parse_ann_id(made["id"]))]
        assert history.count("Edited") == RACERS
    finally:
        check.close()
