"""`make screenshots`: docs/board.png and docs/bounty.png, from a realistic board in a real Chromium.

Nine bounties on the embedded forge and ledger, made by the same handlers the MCP tools call (in this
process, for speed), in the states a board shows: open, started, PR submitted, cooling, paid, cancelled, and one
disputed during cooling whose pool another funder added to, in both modes and at several amounts; then
`code3 serve`, a sign-in with `code3 serve --print-url`, and a 1280 px wide Chromium takes the board and the paid
bounty's page. Run: `python -m tests.e2e.screenshots [DIR]` (default: docs/).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.e2e import browser
from tests.e2e.web_world import AMOUNT, REPO, make_site

FEATURES = [  # (description, amount, mode, how far it gets, deadline in days)
    ("Users can export their to-do list as CSV", AMOUNT, "contest", "paid", 30),
    ("Reminders by e-mail the day before a to-do is due", 5 * AMOUNT, "exclusive", "cooling", 21),
    ("Keyboard shortcuts for every list action", 2 * AMOUNT, "exclusive", "submitted", 14),
    ("Share a list read-only through a link", 3 * AMOUNT, "contest", "started", 45),
    ("Dark theme that follows the system setting", AMOUNT // 2, "exclusive", "open", 30),
    ("Import to-dos from a CSV file", 1_500_000, "contest", "open", 60),
    ("Recurring to-dos (daily, weekly, monthly)", 4 * AMOUNT, "exclusive", "cancelled", 30),
    ("Offline mode with sync on reconnect", 8 * AMOUNT, "exclusive", "submitted", 90),
    ("Attach files to a to-do", 3 * AMOUNT, "contest", "disputed", 40),
]
DISPUTE = "The attachments are stored unencrypted, which the spec ruled out"
COOLING = 7 * 86_400  # the default cooling period: the paid bounty's claim waits for the ledger's clock to pass it
DAY = 86_400


def build(root: Path, home: Path) -> tuple[Any, str]:
    """The project with its bounties; the id of the paid one (its page has every step of the lifecycle)."""
    from code3.settings import Settings
    from code3.wiring import build_services
    from mcp_tools.lifecycle import publish, settle, specs, work
    from mcp_tools.lifecycle.chain_record import raise_for, record

    site = make_site(root, home, cooling=COOLING)
    people = {name: build_services(Settings(project=root, home=home, identity=name, cooling_period=COOLING,
                                            resolver="alice")) for name in ("alice", "bob", "carol")}
    alice = people["alice"]
    paid_id = ""
    try:
        for description, amount, mode, reach, days in FEATURES:
            spec = specs.specify(alice, description)
            fid = spec["feature_id"]
            specs.plan(alice, fid)
            specs.tasks(alice, fid)
            published = publish.publish_issue_with_metadata(alice, repo=REPO, feature_id=fid,
                                                            spec_path=spec["paths"]["spec"], amount=str(amount),
                                                            network="local", mode=mode, deadline_seconds=days * DAY)
            bounty_id, number = published["bounty"]["bounty_id"], published["issue"]["number"]
            if reach == "cancelled":
                settle.cancel_bounty(alice, bounty_id)
            if reach == "disputed":  # carol adds to the pool: the board shows it beside the published amount
                carol = people["carol"]
                alice.chain.mint(carol.signer.address, "USDT", AMOUNT)  # type: ignore[attr-defined]
                raise_for(carol.chain.fund_bounty(carol.signer, bounty_id, AMOUNT, nonce=1), "fund")
                record(carol, bounty_id)
            if reach in ("open", "cancelled"):
                continue
            workers = ("bob", "carol") if mode == "contest" else ("bob",)
            prs = {}
            for who in workers:
                work.accept_task(people[who], f"{REPO}#{number}")
                if reach == "started":
                    continue
                prepared = work.fork_and_prepare(people[who], REPO, {"feature_id": fid, "issue_number": number})
                (Path(prepared["workdir"]) / f"{who}.py").write_text(f"# {description} ({who})\n")
                prs[who] = work.open_pr(people[who], REPO, prepared["branch"], f"feat: {description}", "")["pr_url"]
                work.submit_pr(people[who], bounty_id, prs[who])
            if reach in ("cooling", "paid", "disputed"):
                alice.forge.merge_pr(prs["bob"])  # type: ignore[attr-defined]
                settle.mark_merged(alice, prs["bob"], delivery_id=f"screenshot-{bounty_id}", bounty_id=bounty_id)
            if reach == "disputed":  # the sponsor disputes during cooling: the payout waits for the resolver
                settle.dispute(alice, bounty_id, DISPUTE)
            if reach == "paid":  # the ledger's clock passes the cooling period; later merges still cool
                paid_id = bounty_id
                alice.chain.advance(COOLING + 3600)  # type: ignore[attr-defined]
                settle.claim_payout(people["bob"], bounty_id)
    finally:
        for s in people.values():
            s.close()
    return site, paid_id


def main(out: Path) -> int:
    reason = browser.missing()
    if reason:
        print(f"screenshots: {reason}", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="code3-screens-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        os.environ["CODE3_HOME"] = str(home)
        site, paid_id = build(Path(tmp) / "todo-app", home)
        try:
            _, url, port = site.serve("serve")
            width, height = browser.WIDTHS["desktop"]
            with browser.chromium(width, height) as driver:
                driver.get(site.login_url(port))
                browser.wait_until("the board", lambda: driver.current_url.rstrip("/") == url)
                for name, path in (("board", "/"), ("bounty", f"/bounties/{paid_id}")):
                    driver.get(f"{url}{path}")
                    if not driver.title.endswith("Code3") or driver.find_elements("css selector", ".notice"):
                        print(f"screenshots: {path} did not render a page: {driver.page_source[:500]}",
                              file=sys.stderr)
                        return 1
                    browser.save_png(driver, out / f"{name}.png", max_height=1600)
                    print(f"screenshots: {out / f'{name}.png'}")
        finally:
            site.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else browser.ROOT / "docs"))
