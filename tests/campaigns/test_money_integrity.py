"""The money-integrity campaign (issue 26): every attack that moved money before the v2 contract, tried as an
attacker would — through the tools and by direct chain calls signed with the attacker's own key — against a real
`code3 serve` (the merge webhook) and real `code3 worker` rounds (the resolver). Each ends with the attacker unpaid,
the honest author paid once, and money conserved.

Before (v1 contract and resolver): the PR of another repository, the front-runner and the PR raced into two
bounties were each paid; the sponsor took the escrow back after a merge; a refund raced a merge; a crowd of
throw-away keys froze a contest.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.git import git
from adapters.ledger_tables import ESCROW
from domain.bounties.contract import REFUND_GRACE, Abort, Rejection, Status
from domain.errors import Code, Code3Error
from mcp_tools.lifecycle import settle, work
from tests.campaigns.money_world import AMOUNT, COOLING, REPO, MoneyWorld, conserved, ok
from tests.stdio_calls import call_tools

pytestmark = pytest.mark.e2e
DAY = 86_400


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MoneyWorld]:
    found = MoneyWorld(tmp_path_factory.mktemp("money") / "project")
    # mallory links her forge account too: her submissions of PRs she did not write are then provably not hers
    issue = found.publish()
    linked = found.code3("mallory", "account", "link", "--on", f"local://forge/{REPO}/issues/{issue.number}")
    assert linked.returncode == 0 and '"linked"' in linked.stdout, linked.stdout + linked.stderr
    yield found
    found.close()


def refused(call: Any) -> Code:
    with pytest.raises(Code3Error) as caught:
        call()
    return caught.value.code


def rejections(world: MoneyWorld, bounty_id: str) -> dict[str, int]:
    return {e.data["worker"]: int(e.data["reason"]) for e in world.ledger.bounty_events(bounty_id)
            if e.type == "SubmissionRejected"}


def paid_once_to_bob(world: MoneyWorld, bounty_id: str, bob_before: int, amount: int = AMOUNT) -> None:
    [paid] = world.paid_events(bounty_id)
    assert paid["recipients"] == [world.address("bob")] and paid["amounts"] == [amount]
    assert world.balance("bob") == bob_before + amount, "the honest author is paid, once"


def honest_merge_and_payout(world: MoneyWorld, bounty_id: str, branch: str) -> None:
    """bob's own PR, submitted with the tool, merged by the maintainer (the webhook reports it), paid after cooling
    by the worker (auto-claim)."""
    pr = world.pr("bob", branch)
    answer = work.submit_pr(world["bob"], bounty_id, pr.url)
    assert answer["link"]["status"] in ("linked", "statement published")
    world.merge(pr.url)
    assert world.state(bounty_id).status is Status.COOLING_DOWN, "the signed webhook reported the merge"
    world.advance(COOLING + 1)
    world.worker_round()


# --- a PR that never touched the bounty's repository ------------------------------------------------------------

def test_a_pr_merged_in_the_attackers_own_repository_is_never_paid(world: MoneyWorld) -> None:
    bounty = world.publish()
    bob_before = world.balance("bob")
    with conserved(world):
        world.accept("mallory", bounty.task_id)
        world.accept("bob", bounty.task_id)
        mallory = world.forge_as("mallory")
        mallory.create_repo("mallory/api-copy")
        mallory.close()
        theirs = world.pr("mallory", "feat/copy", base_repo="mallory/api-copy", head_repo="mallory/api-copy")
        world.merge(theirs.url, maintainer="mallory")  # she merges her own PR in her own repository
        version = world.ledger.latest_version()
        assert refused(lambda: work.submit_pr(world["mallory"], bounty.bounty_id, theirs.url)) is Code.VALIDATION
        assert world.ledger.latest_version() == version, "the tool refused before any transaction"
        ok(world.ledger.submit_pr(world.direct("mallory"), bounty.bounty_id, theirs.url, theirs.head_sha))
        world.worker_round()
        assert rejections(world, bounty.bounty_id) == {world.address("mallory"): Rejection.NOT_IN_REPO}
        honest_merge_and_payout(world, bounty.bounty_id, "feat/b1")
    paid_once_to_bob(world, bounty.bounty_id, bob_before)
    assert world.balance("mallory") == 0


def test_a_pr_in_a_fork_or_into_a_branch_other_than_the_default_is_never_paid(world: MoneyWorld) -> None:
    bounty = world.publish()
    bob_before = world.balance("bob")
    with conserved(world):
        world.accept("mallory", bounty.task_id)
        world.accept("bob", bounty.task_id)
        mallory = world.forge_as("mallory")
        fork = mallory.fork(REPO)
        mallory.close()
        in_fork = world.pr("mallory", "feat/fork-only", base_repo=fork, head_repo=fork)
        world.merge(in_fork.url, maintainer="mallory")
        ok(world.ledger.submit_pr(world.direct("mallory"), bounty.bounty_id, in_fork.url, in_fork.head_sha))
        world.worker_round()
        assert rejections(world, bounty.bounty_id) == {world.address("mallory"): Rejection.NOT_IN_REPO}
        # a branch of the bounty's repository that is not its default one, merged there by the maintainer
        bare = world.root / ".code3" / "forge" / "repos" / f"{REPO}.git"
        git("branch", "-f", "dev", "main", cwd=bare)
        into_dev = world.pr("mallory", "feat/into-dev", base="dev")
        world.merge(into_dev.url)
        version = world.ledger.latest_version()
        assert refused(lambda: work.submit_pr(world["mallory"], bounty.bounty_id, into_dev.url)) is Code.VALIDATION
        assert world.ledger.latest_version() == version
        ok(world.ledger.submit_pr(world.direct("mallory"), bounty.bounty_id, into_dev.url, into_dev.head_sha))
        world.worker_round()
        assert rejections(world, bounty.bounty_id)[world.address("mallory")] == Rejection.WRONG_BASE
        honest_merge_and_payout(world, bounty.bounty_id, "feat/b2")
    paid_once_to_bob(world, bounty.bounty_id, bob_before)
    assert world.balance("mallory") == 0


# --- another worker's payout taken by submitting their PR first ----------------------------------------------

def test_a_front_runner_who_records_the_authors_pr_first_is_not_paid_and_locks_nobody_out(world: MoneyWorld) -> None:
    bounty = world.publish()
    bob_before = world.balance("bob")
    with conserved(world):
        world.accept("bob", bounty.task_id)
        world.accept("mallory", bounty.task_id)
        bobs = world.pr("bob", "feat/b3")
        assert refused(lambda: work.submit_pr(world["mallory"], bounty.bounty_id, bobs.url)) is Code.UNAUTHORIZED
        ok(world.ledger.submit_pr(world.direct("mallory"), bounty.bounty_id, bobs.url, bobs.head_sha))  # first
        work.submit_pr(world["bob"], bounty.bounty_id, bobs.url)  # the author is not locked out
        world.merge(bobs.url)
        state = world.state(bounty.bounty_id)
        assert (state.status, state.winner) == (Status.COOLING_DOWN, world.address("bob"))
        world.worker_round()  # the resolver also removes the front-runner's submission
        assert rejections(world, bounty.bounty_id) == {world.address("mallory"): Rejection.NOT_AUTHOR}
        world.advance(COOLING + 1)
        world.worker_round()
    paid_once_to_bob(world, bounty.bounty_id, bob_before)
    assert world.balance("mallory") == 0


# --- one PR paid by two bounties ----------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_one_pr_raced_into_two_bounties_by_two_processes_is_paid_once(tmp_path: Path, backend: str) -> None:
    from tests.conftest import postgres_schema

    with postgres_schema() if backend == "postgres" else _no_database() as url:
        world = MoneyWorld(tmp_path / "project", database_url=url, serve=False)
        try:
            _race(world)
        finally:
            world.close()


def _race(world: MoneyWorld) -> None:
    first, second = world.publish(), world.publish()
    bob_before, alice_before = world.balance("bob"), world.balance("alice")
    with conserved(world):
        world.accept("bob", first.task_id)
        world.accept("bob", second.task_id)
        pr = world.pr("bob", "feat/one-for-two")

        def submit(bounty_id: str) -> dict[str, Any]:
            return call_tools(world.root, world.env("bob"), [("server_mcp.submit_pr",
                                                              {"bounty_id": bounty_id, "pr_url": pr.url})])[0]

        with concurrent.futures.ThreadPoolExecutor(2) as pool:  # two `code3 mcp` processes at the same moment
            answers = list(pool.map(submit, [first.bounty_id, second.bounty_id]))
        landed = [b for b in (first, second) if world.state(b.bounty_id).submitter_of(pr.url)]
        for bounty in (first, second):  # what the tools refused, the attacker's key records directly
            if bounty not in landed:
                ok(world.ledger.submit_pr(world.direct("bob"), bounty.bounty_id, pr.url, pr.head_sha))
        assert all(world.state(b.bounty_id).submitter_of(pr.url) for b in (first, second)), answers
        world.merge(pr.url)  # no serve: the worker's look finds the merge
        world.worker_round()
        states = [world.state(b.bounty_id) for b in (first, second)]
        assert sorted(s.status for s in states) == [Status.STARTED, Status.COOLING_DOWN], "one PR settles one"
        settled = next(b for b, s in zip((first, second), states, strict=True) if s.status is Status.COOLING_DOWN)
        other = second if settled is first else first
        assert rejections(world, other.bounty_id) == {world.address("bob"): Rejection.SETTLED_ELSEWHERE}
        # again by direct calls: the worker records the PR once more, and even a resolver key reporting it for the
        # second bounty is refused by the contract itself (it keeps the PR's repository id and number)
        ok(world.ledger.submit_pr(world.direct("bob"), other.bounty_id, pr.url, pr.head_sha))
        merged = world.forge_as("bob").get_pr(pr.url)
        assert merged is not None and merged.merged
        again = world.ledger.mark_merged(world.direct("default"), other.bounty_id, pr.url, merged.author_id,
                                         merged.repo_id, merged.number)
        assert again.abort_code == Abort.PR_ALREADY_SETTLED
        world.worker_round()
        world.advance(COOLING + 1)
        world.worker_round()
        settle.cancel_bounty(world["alice"], other.bounty_id)  # nothing live: its sponsor takes it back at once
    paid_once_to_bob(world, settled.bounty_id, bob_before)
    assert world.paid_events(other.bounty_id) == []
    assert world.balance("alice") == alice_before + AMOUNT


class _no_database:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


# --- disputes: the sponsor cannot take the escrow back alone after a merge ----------------------------------------

def test_a_dispute_after_a_merge_is_ruled_by_the_resolver_and_an_unruled_one_pays_the_winner(
        world: MoneyWorld) -> None:
    bounties = [world.publish() for _ in range(3)]
    bob_before, alice_before = world.balance("bob"), world.balance("alice")
    with conserved(world):
        for n, bounty in enumerate(bounties):
            world.accept("bob", bounty.task_id)
            pr = world.pr("bob", f"feat/d{n}")
            work.submit_pr(world["bob"], bounty.bounty_id, pr.url)
            world.merge(pr.url)
        pay, refund, unruled = (b.bounty_id for b in bounties)
        assert world.ledger.cancel_bounty(world.direct("alice"), pay).abort_code == Abort.INVALID_STATE
        assert refused(lambda: settle.cancel_bounty(world["alice"], pay)) is Code.INVALID_STATE
        disputed = world.code3("alice", "bounty", "dispute", pay, "--reason", "the export drops the due dates")
        assert disputed.returncode == 0, disputed.stderr
        settle.dispute(world["alice"], refund, "nothing was exported")
        ok(world.ledger.dispute(world.direct("alice"), unruled, "I changed my mind"))
        assert world.ledger.rule(world.direct("alice"), refund, 0).abort_code == Abort.NOT_RESOLVER
        ruled = world.code3("default", "bounty", "rule", pay, "--pay")
        assert ruled.returncode == 0, ruled.stderr
        settle.rule(world["default"], refund, 0)
        world.advance(COOLING + 1)
        world.worker_round()
        assert world.paid_events(unruled) == [], "a dispute holds the payout until it is ruled or its time ends"
        world.advance(7 * DAY)
        world.worker_round()
    assert [p["amounts"] for p in world.paid_events(pay)] == [[AMOUNT]]
    assert world.paid_events(refund) == []
    assert [p["amounts"] for p in world.paid_events(unruled)] == [[AMOUNT]]
    assert world.balance("bob") == bob_before + 2 * AMOUNT
    assert world.balance("alice") == alice_before + AMOUNT, "the refund ruling gave the sponsor one back"


# --- no refund that races a merge ---------------------------------------------------------------------------

def test_a_cancel_after_the_deadline_racing_a_merge_refunds_nothing(world: MoneyWorld) -> None:
    bounty = world.publish(deadline_seconds=600)
    bob_before, alice_before = world.balance("bob"), world.balance("alice")
    with conserved(world):
        world.accept("bob", bounty.task_id)
        pr = world.pr("bob", "feat/b6")
        work.submit_pr(world["bob"], bounty.bounty_id, pr.url)
        world.advance(601)
        assert world.ledger.cancel_bounty(world.direct("alice"), bounty.bounty_id).abort_code \
            == Abort.SUBMISSION_LIVE
        cancelled = world.code3("alice", "bounty", "cancel", bounty.bounty_id)
        assert cancelled.returncode == 1 and "E_PRECONDITION" in cancelled.stdout
        world.worker_round()  # the worker's refund step leaves it alone too
        world.merge(pr.url)
        world.advance(COOLING + 1)
        world.worker_round()
        assert world.ledger.cancel_bounty(world.direct("alice"), bounty.bounty_id).abort_code == Abort.INVALID_STATE
    paid_once_to_bob(world, bounty.bounty_id, bob_before)
    assert world.balance("alice") == alice_before


def test_a_pr_closed_and_its_commits_cherry_picked_is_paid_by_the_resolvers_ruling(world: MoneyWorld) -> None:
    bounty = world.publish(deadline_seconds=600)
    bob_before, alice_before = world.balance("bob"), world.balance("alice")
    with conserved(world):
        world.accept("bob", bounty.task_id)
        pr = world.pr("bob", "feat/b7", change="def export_csv():\n    return 'due dates included'\n")
        work.submit_pr(world["bob"], bounty.bounty_id, pr.url)
        alice = world.forge_as("alice")
        alice.close_pr(pr.url)  # the webhook tells the resolver; the submission is rejected as CLOSED
        alice.close()
        assert rejections(world, bounty.bounty_id) == {world.address("bob"): Rejection.CLOSED}
        _cherry_pick(world, pr.head)  # ... and the commits land in main all the same
        world.advance(601)
        assert world.ledger.cancel_bounty(world.direct("alice"), bounty.bounty_id).abort_code \
            == Abort.CLOSED_RECENTLY, "the worker gets the grace to dispute"
        disputed = world.code3("bob", "bounty", "dispute", bounty.bounty_id, "--reason",
                               "my commits were cherry-picked into main after the PR was closed")
        assert disputed.returncode == 0, disputed.stderr
        ruled = world.code3("default", "bounty", "rule", bounty.bounty_id, "--pay")
        assert ruled.returncode == 0, ruled.stderr
        world.advance(REFUND_GRACE)
        assert world.ledger.cancel_bounty(world.direct("alice"), bounty.bounty_id).abort_code == Abort.INVALID_STATE
    paid_once_to_bob(world, bounty.bounty_id, bob_before)
    assert world.balance("alice") == alice_before


def _cherry_pick(world: MoneyWorld, head: str) -> None:
    """The maintainer takes a closed PR's commits into main by hand (a cherry-pick: new commits, no merge)."""
    import tempfile

    source, branch = head.split(":", 1)
    repos = world.root / ".code3" / "forge" / "repos"
    with tempfile.TemporaryDirectory() as tmp:
        work_dir = Path(tmp) / "w"
        git("clone", "-q", str(repos / f"{REPO}.git"), str(work_dir))
        git("fetch", "-q", str(repos / f"{source}.git"), branch, cwd=work_dir)
        git("cherry-pick", "FETCH_HEAD", cwd=work_dir)
        git("push", "-q", "origin", "HEAD:main", cwd=work_dir)


# --- a contest nobody can freeze ------------------------------------------------------------------------------

def test_a_contest_flooded_by_throw_away_accounts_locks_nobody_out_and_freezes_nothing(world: MoneyWorld) -> None:
    from adapters.keystore import Keystore

    paid, refunded = world.publish(deadline_seconds=3_600), world.publish(deadline_seconds=3_600)
    throwaway = Keystore(world.root.parent / "throwaway-keys")
    junk = [throwaway.new(f"junk{n}") for n in range(70)]  # no funds, no stake: keys cost nothing
    bob_before, alice_before = world.balance("bob"), world.balance("alice")
    with conserved(world):
        for key in junk:
            for bounty in (paid, refunded):
                ok(world.ledger.accept_bounty(key, bounty.bounty_id))
        for n, key in enumerate(junk[:10]):
            for bounty in (paid, refunded):
                ok(world.ledger.submit_pr(key, bounty.bounty_id, f"local://forge/{REPO}/pull/{900 + n}", "a" * 40))
        world.accept("bob", paid.task_id)  # 70 entrants before him: not locked out
        world.worker_round()
        for bounty in (paid, refunded):
            assert len(rejections(world, bounty.bounty_id)) == 10, "junk is rejected and blocks nothing"
        settle.cancel_bounty(world["alice"], refunded.bounty_id)  # before the deadline: nothing live holds it
        honest_merge_and_payout(world, paid.bounty_id, "feat/b8")
    paid_once_to_bob(world, paid.bounty_id, bob_before)
    assert world.balance("alice") == alice_before + AMOUNT
    assert all(world.ledger.balance(k.address, "USDT") == 0 for k in junk)


# --- the resolver of a bounty is fixed when it is created -------------------------------------------------------

def test_a_set_resolver_during_a_dispute_swaps_no_arbiter(world: MoneyWorld) -> None:
    bounty = world.publish()
    bob_before, alice_before = world.balance("bob"), world.balance("alice")
    with conserved(world):
        world.accept("bob", bounty.task_id)
        pr = world.pr("bob", "feat/b9")
        work.submit_pr(world["bob"], bounty.bounty_id, pr.url)
        world.merge(pr.url)
        settle.dispute(world["alice"], bounty.bounty_id, "I want it back")
        # the admin (on the embedded default, the first resolver) names the sponsor as the registry's resolver
        ok(world.ledger.set_resolver(world.direct("default"), world.address("alice")))
        assert world.ledger.rule(world.direct("alice"), bounty.bounty_id, 0).abort_code == Abort.NOT_RESOLVER
        assert refused(lambda: settle.rule(world["alice"], bounty.bounty_id, 0)) is Code.UNAUTHORIZED
        world.advance(COOLING + 7 * DAY + 1)
        world.worker_round()  # the dispute's time is over: the winner is paid
        ok(world.ledger.set_resolver(world.direct("default"), world.address("default")))
    paid_once_to_bob(world, bounty.bounty_id, bob_before)
    assert world.balance("alice") == alice_before
    assert world.ledger.balance(ESCROW, "USDT") >= 0
