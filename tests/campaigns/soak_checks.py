"""What must hold after the soak campaign, read from the stand-ins (the chain's ledger, GitHub's issues, PRs and
comments) and from every machine's own `code3 audit verify` and `code3 doctor`: paid once, refunded once, money
conserved, one mirror comment per transition, nothing stuck, no process restarted to heal.

`quiesce` waits (without touching any process) until the chain and the mirror stop moving or its time is up;
`check_all` then lists every finding (empty: the campaign passed) and the facts the report prints.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from tests.campaigns.topology import REPO

if TYPE_CHECKING:
    from tests.campaigns.soak import Campaign

MIRRORED = {"BountyCreated", "BountyAccepted", "PRSubmitted", "BountyMerged", "CoolingStarted", "BountyPaid",
            "BountyCancelled"}  # the chain events the forge mirror comments on (mcp_tools/lifecycle/forge_mirror.py)
MARKER = re.compile(r"<!-- code3:bounty=(?P<bounty>[^:]+):event=(?P<event>[^ ]+) -->")
LABELS = {"OPEN": "open", "STARTED": "in-progress", "PR_SUBMITTED": "in-progress", "MERGED": "merged",
          "COOLING_DOWN": "cooling", "PAID": "paid", "CANCELLED": "cancelled"}
SETTLED = {"PAID", "CANCELLED"}


def expected_versions(ledger: dict[str, Any], bounty_id: str) -> Counter[str]:
    """The chain transactions (versions) of a bounty's mirrored transitions, one per event. A marker names the
    event by version and index as the node renders the transaction (framework events first), so versions are
    what the ledger and the markers share."""
    return Counter(str(e["version"]) for e in ledger["events"]
                   if e["type"] in MIRRORED and str(e["data"].get("bounty_id")) == bounty_id)


def comment_markers(comments: list[dict[str, Any]]) -> list[str | None]:
    return [m["event"] if (m := MARKER.search(cm["body"])) else None for cm in comments]


def issue_comments(github: dict[str, Any], number: int) -> list[dict[str, Any]]:
    return list(github["repos"][REPO].get(str(number), {}).get("comments", []))


def _unsettled(c: Campaign, ledger: dict[str, Any], github: dict[str, Any]) -> list[str]:
    """What is still moving: bounties not settled on chain, mirrors short of the chain's transitions."""
    left = []
    for b in ledger["bounties"]:
        if b["status"] not in SETTLED:
            left.append(f"bounty {b['bounty_id']} {b['status']}")
    for lc in c.lifecycles:
        if lc.issue is None or lc.bounty_id is None:
            continue
        have = Counter(m.split(":")[0] for m in comment_markers(issue_comments(github, lc.issue)) if m)
        if expected_versions(ledger, lc.bounty_id) - have:
            left.append(f"mirror of {REPO}#{lc.issue}")
    return left


def quiesce(c: Campaign, seconds: float) -> list[str]:
    """Wait until nothing is left moving (or `seconds`); nothing is restarted or poked meanwhile."""
    deadline = time.monotonic() + seconds
    left: list[str] = ["not looked yet"]
    while time.monotonic() < deadline:
        left = _unsettled(c, c.topo.ledger(), c.topo.github_state())
        if not left:
            break
        time.sleep(2.0)
    return left


def check_all(c: Campaign) -> tuple[list[str], dict[str, Any]]:
    topo = c.topo
    findings: list[str] = []
    ledger, github = topo.ledger(), topo.github_state()
    now = ledger["now"]
    bounties = {b["bounty_id"]: b for b in ledger["bounties"]}
    moved = Counter((e["type"], str(e["data"].get("bounty_id"))) for e in ledger["events"])

    # every merged bounty paid once, every expired one refunded once, nothing stuck
    for bounty_id, b in bounties.items():
        paid, cancelled = moved[("BountyPaid", bounty_id)], moved[("BountyCancelled", bounty_id)]
        if b["status"] == "PAID" and paid != 1:
            findings.append(f"bounty {bounty_id} paid {paid} times")
        if b["status"] == "CANCELLED" and cancelled != 1:
            findings.append(f"bounty {bounty_id} refunded {cancelled} times")
        if b["status"] not in SETTLED and (paid or cancelled):
            findings.append(f"bounty {bounty_id} is {b['status']} after a payout or refund event")
        if b["status"] in ("COOLING_DOWN", "MERGED") and (b["cooling_until"] or 0) < now:
            findings.append(f"bounty {bounty_id} stuck in {b['status']} {now - (b['cooling_until'] or 0)} s past "
                            f"its cooling end")
        if b["status"] in ("OPEN", "STARTED", "PR_SUBMITTED") and b["deadline"] <= now:
            findings.append(f"bounty {bounty_id} stuck in {b['status']} {now - b['deadline']} s past its deadline")
    for lc in c.lifecycles:
        if lc.outcome == "skipped":
            continue
        if lc.outcome.startswith("failed"):
            findings.append(f"lifecycle {lc.index} ({lc.mode}) {lc.outcome}")
        if lc.bounty_id is None:
            continue
        b = bounties.get(lc.bounty_id)
        want = "CANCELLED" if lc.expire else "PAID"
        if b is None or b["status"] != want:
            findings.append(f"lifecycle {lc.index} ({lc.mode}{', expiring' if lc.expire else ''}): bounty "
                            f"{lc.bounty_id} is {b['status'] if b else 'missing'}, not {want}")
        elif not lc.expire and b["merged_pr"] != lc.merged_pr:
            findings.append(f"lifecycle {lc.index}: bounty {lc.bounty_id} won by {b['merged_pr']}, merged was "
                            f"{lc.merged_pr}")

    # no merged PR unrecorded
    recorded = {b["merged_pr"] for b in bounties.values() if b["merged_pr"]}
    for item in github["repos"][REPO].values():
        pull = item["pull"]
        if pull and pull["merged"] and pull["url"] not in recorded:
            findings.append(f"merged PR {pull['url']} recorded by no bounty")

    # money conserved
    held = sum(ledger["balances"].values()) + ledger["escrow"]
    if held != topo.minted:
        findings.append(f"money: balances {sum(ledger['balances'].values())} + escrow {ledger['escrow']} = {held}, "
                        f"minted {topo.minted}")
    if ledger["escrow"] != sum(b["amount"] for b in bounties.values() if b["status"] not in SETTLED):
        findings.append(f"escrow {ledger['escrow']} is not the sum of the unsettled bounties")
    if ledger["errors"]:
        findings.append(f"the Aptos stand-in failed: {ledger['errors'][:3]}")

    # one mirror comment per transition, labels as the chain says
    duplicates = reconciled = 0
    for lc in c.lifecycles:
        if lc.issue is None or lc.bounty_id is None:
            continue
        comments = issue_comments(github, lc.issue)
        markers = comment_markers(comments)
        counted = Counter(markers)
        extra = {k: n for k, n in counted.items() if n > 1}
        duplicates += sum(n - 1 for n in extra.values())
        # a transition the log holds without chain coordinates (Bounty.Reconciled: chain sync corrected the
        # mirror) is named by its aggregate version ("v2:0"). Nothing in this campaign makes the log disagree
        # with the chain, so a correction is a finding: a chain only ahead of the log taken for a disagreement
        corrected = sum(1 for m in markers if m and m.startswith("v"))
        reconciled += corrected
        if corrected:
            findings.append(f"{REPO}#{lc.issue} (bounty {lc.bounty_id}): {corrected} 'corrected' comment(s): the log "
                            "was reconciled with a chain that was only ahead of it")
        chain = Counter(m.split(":")[0] for m in markers if m and not m.startswith("v"))
        expected = expected_versions(ledger, lc.bounty_id)
        if extra or None in counted or chain != expected:
            bodies = [cm["body"][:70] for cm in comments]
            findings.append(f"{REPO}#{lc.issue} (bounty {lc.bounty_id}): comments by transaction {dict(chain)} "
                            f"(duplicated: {extra}), the chain's transitions {dict(expected)}: {bodies}")
        b = bounties.get(lc.bounty_id)
        labels = github["repos"][REPO][str(lc.issue)]["labels"]
        if b is not None and LABELS[b["status"]] not in labels:
            findings.append(f"{REPO}#{lc.issue} labelled {labels}, the bounty is {b['status']}")

    # no process restarted to heal, none exited by itself
    for name, alive in topo.alive().items():
        if not alive:
            findings.append(f"{name} is not running at the end (it exited on its own)")

    for kill in c.chaos.kills:
        if "error" in kill:
            findings.append(f"{kill['machine']} did not start again after its kill: {kill['error']}")

    # during the cut, /readyz and doctor said so
    for cut in c.chaos.cuts:
        for name, (status, _text) in cut["readyz"].items():
            if status != 503:
                findings.append(f"during the cut {name}'s /readyz answered {status}, not 503")
        doctor = cut["doctor"] or {}
        if doctor.get("exit") in (0, None) or "unreachable" not in str(doctor.get("database", "")):
            findings.append(f"during the cut doctor said {doctor}")

    # audit verify and doctor on every machine (together, as each host would run them)
    from concurrent.futures import ThreadPoolExecutor

    runs = [(machine, args) for machine in topo.machines for args in (("audit", "verify"), ("doctor",))]
    with ThreadPoolExecutor(len(runs)) as pool:
        done_all = list(pool.map(lambda run: topo.code3(run[0], *run[1]), runs))
    verified = {}
    for (machine, args), done in zip(runs, done_all, strict=True):
        verified[f"{machine.name} {' '.join(args)}"] = done.returncode
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip().splitlines()[-12:]
            findings.append(f"{machine.name}: `code3 {' '.join(args)}` exit {done.returncode}: " + " | ".join(tail))

    deliveries = Counter(str(d["status"]) for d in github.get("deliveries", []))
    unsettled_deliveries = [f"{row[0]} {row[1]} after {row[2]} attempts: {str(row[3])[:300]}" for row in topo.query(
        "SELECT delivery_id, status, attempts, last_error FROM webhook_deliveries WHERE status <> 'done'")]
    facts = {"bounties": Counter(b["status"] for b in bounties.values()), "escrow": ledger["escrow"],
             "minted": topo.minted, "deliveries": dict(deliveries), "duplicate_comments": duplicates,
             "reconciled_comments": reconciled,
             "deliveries_not_done": unsettled_deliveries, "checks": verified, "backends_now": topo.backends()}
    return findings, facts
