"""The githubkit forge against the loopback GitHub: real client, real JSON, real git over HTTP, no internet.

Waits are recorded by a fake sleep that moves a fake clock, so rate-limit tests run instantly and the
retry budget is measured in the service's seconds, not the test's.
"""

from __future__ import annotations

import base64
import logging
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from adapters.git import commit_all, git, read_ref
from adapters.github import GitHubForge
from adapters.github_git import GitHubGit, web_base_from_api
from domain.errors import Code, Code3Error
from tests.fakes.github_server import CommentRec, FakeGitHub

ALICE = "ghp_alice0123456789abcdefALICEtoken"
BOB = "ghp_bob0123456789abcdefBOBtokenxyz"
REPO = "alice/app"
ROOT = Path(__file__).resolve().parents[2]
MakeForge = Callable[..., GitHubForge]


class FakeClock:
    """`sleep` records each wait and moves `now` forward by it."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.waits: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.t += seconds


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "github", tokens={ALICE: "alice", BOB: "bob"}) as server:
        server.create_repo(REPO)
        yield server


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_forge(fake: FakeGitHub, clock: FakeClock) -> Iterator[MakeForge]:
    """Forges against the stand-in, closed (their connection pools) before the stand-in stops."""
    made: list[GitHubForge] = []

    def make(token: str = ALICE, actor: str | None = "alice") -> GitHubForge:
        made.append(GitHubForge(token, base_url=fake.api_url, actor=actor, sleep=clock.sleep, clock=clock.now))
        return made[-1]

    yield make
    for forge in made:
        forge.close()


@pytest.fixture
def alice(make_forge: MakeForge) -> GitHubForge:
    return make_forge()


def api_count(fake: FakeGitHub, since: int = 0) -> int:
    return len(fake.api_requests()[since:])


# --- issues, labels, comments ---------------------------------------------------------------


def test_issue_is_created_found_by_its_marker_and_edited(fake: FakeGitHub, alice: GitHubForge) -> None:
    body = "Spec text\n\n```json code3-meta\n{\"issue_hash\": \"abc123\"}\n```\n"
    created = alice.create_issue(REPO, "[code3] 001-x: Export", body, ["open", "code3"], [])
    assert created.number == 1 and created.labels == ["code3", "open"] and created.state == "open"
    assert created.url == f"{fake.web_url}/{REPO}/issues/1"
    assert alice.find_issue(REPO, "abc123") == created
    assert alice.find_issue(REPO, "not-there") is None
    alice.update_issue_body(REPO, 1, body.replace("Spec text", "Spec text, edited"))
    assert alice.get_issue(REPO, 1).body.startswith("Spec text, edited")
    assert alice.set_labels(REPO, 1, ["cooling", "code3", "cooling"]) == ["code3", "cooling"]
    assert alice.get_issue(REPO, 1).labels == ["code3", "cooling"]
    assert alice.set_labels(REPO, 1, []) == []


def test_find_issue_also_sees_the_actors_unlabelled_issues_and_skips_pull_requests(
        fake: FakeGitHub, alice: GitHubForge) -> None:
    unlabelled = alice.create_issue(REPO, "t", "hash-777 in an issue whose labels a maintainer removed", [], [])
    assert alice.find_issue(REPO, "hash-777") == unlabelled
    with pytest.raises(Code3Error) as caught:
        alice.find_issue("alice/missing", "hash-777")
    assert caught.value.code == Code.NOT_FOUND


def test_comments_are_listed_across_pages_and_edited(fake: FakeGitHub, alice: GitHubForge) -> None:
    issue = alice.create_issue(REPO, "t", "b", [], [])
    first = alice.create_comment(REPO, issue.number, "one")
    alice.create_comment(REPO, issue.number, "two")
    alice.edit_comment(REPO, first, "one, edited")
    assert [(c.body, c.author) for c in alice.list_comments(REPO, issue.number)] == [
        ("one, edited", "alice"), ("two", "alice")]
    now = time.time()
    for i in range(120):
        fake.state.comments[10_000 + i] = CommentRec(10_000 + i, REPO, issue.number, f"bulk {i}", "bob", now, now)
    before = api_count(fake)
    listed = alice.list_comments(REPO, issue.number)
    assert len(listed) == 122 and listed[-1].body == "bulk 119"
    assert api_count(fake, before) == 2, "two pages of 100"
    with pytest.raises(Code3Error) as caught:
        alice.edit_comment(REPO, 999_999, "x")
    assert caught.value.code == Code.NOT_FOUND


# --- forks, git over HTTP, pull requests ----------------------------------------------------


def test_fork_clone_push_open_pr_and_read_it_after_the_merge(
        fake: FakeGitHub, clock: FakeClock, tmp_path: Path, make_forge: MakeForge) -> None:
    bob = make_forge(BOB, actor=None)
    assert bob.actor == "bob"
    assert bob.fork(REPO) == "bob/app"
    assert bob.fork(REPO) == "bob/app", "an existing fork is reused"
    assert bob.repo_url("bob/app") == f"{fake.web_url}/bob/app"
    work = tmp_path / "work"
    bob.clone("bob/app", work)
    git("checkout", "-q", "-b", "feat/001-x", cwd=work)
    (work / "x.txt").write_text("x")
    commit_all(work, "x")
    sha = bob.push(work, "feat/001-x")
    assert read_ref(fake.bare("bob/app"), "refs/heads/feat/001-x") == sha

    pr = bob.open_pr(REPO, "bob:feat/001-x", "main", "feat: x", "closes #1")
    assert (pr.number, pr.author, pr.head_sha, pr.state, pr.merged) == (1, "bob", sha, "open", False)
    assert pr.url == f"{fake.web_url}/{REPO}/pull/1" and pr.head == "bob/app:feat/001-x" and pr.base == "main"
    assert bob.open_pr(REPO, "bob:feat/001-x", "main", "feat: x", "again") == pr, "an open PR is reused"
    (work / "y.txt").write_text("y")
    commit_all(work, "y")
    newer = bob.push(work, "feat/001-x")
    assert bob.get_pr(pr.url).head_sha == newer, "the PR follows its branch"

    merge_sha = fake.merge_pr_at(pr.url)
    merged = bob.get_pr(pr.url)
    assert merged.merged and merged.state == "closed" and merged.merge_sha == merge_sha
    assert read_ref(fake.bare(REPO), "refs/heads/main") == merge_sha
    assert bob.get_pr(f"{fake.web_url}/{REPO}/pull/99") is None
    assert bob.get_pr(f"{fake.web_url}/{REPO}/issues/1") is None
    with pytest.raises(Code3Error) as caught:
        bob.get_issue(REPO, pr.number)
    assert caught.value.code == Code.NOT_FOUND, "a PR is not an issue"


def test_pushing_to_someone_elses_repository_is_refused(tmp_path: Path, make_forge: MakeForge) -> None:
    bob = make_forge(BOB, actor="bob")
    bob.clone(REPO, tmp_path / "w")
    (tmp_path / "w" / "z.txt").write_text("z")
    commit_all(tmp_path / "w", "z")
    with pytest.raises(Code3Error) as caught:
        bob.push(tmp_path / "w", "main")
    assert caught.value.code == Code.UNAUTHORIZED


def test_git_failures_that_pass_are_retried(fake: FakeGitHub, clock: FakeClock, tmp_path: Path,
                                            make_forge: MakeForge) -> None:
    bob = make_forge(BOB, actor="bob")
    fork = bob.fork(REPO)
    fake.fail_next(1, 404, kind="git")  # GitHub creates forks asynchronously
    fake.fail_next(1, 502, kind="git")
    bob.clone(fork, tmp_path / "w")
    assert len(clock.waits) == 2
    with pytest.raises(Code3Error) as caught:
        bob.clone("alice/absent", tmp_path / "absent")
    assert caught.value.code == Code.NOT_FOUND and len(clock.waits) == 2, "a repository that is not a new fork"


# --- retries: rate limits, 5xx; 4xx final at once -------------------------------------------


def test_secondary_rate_limit_waits_what_retry_after_says(fake: FakeGitHub, alice: GitHubForge,
                                                          clock: FakeClock) -> None:
    fake.rate_limit_next(2, retry_after=7, status=429)
    before = api_count(fake)
    alice.create_comment(REPO, alice.create_issue(REPO, "t", "b", [], []).number, "hello")
    assert clock.waits == [7, 7]
    assert api_count(fake, before) == 4, "1 issue + 2 limited + 1 comment"


def test_primary_rate_limit_waits_until_x_ratelimit_reset(fake: FakeGitHub, alice: GitHubForge,
                                                          clock: FakeClock) -> None:
    fake.rate_limit_next(1, reset_in=30)
    issue = alice.create_issue(REPO, "t", "b", [], [])
    assert issue.number == 1 and len(fake.state.items[REPO]) == 1
    assert len(clock.waits) == 1 and 28.5 <= clock.waits[0] <= 30.0
    assert [s for _m, _p, s in fake.api_requests()] == [403, 201]


def test_a_reset_past_the_budget_answers_at_once_with_the_reset_time(fake: FakeGitHub, alice: GitHubForge,
                                                                     clock: FakeClock) -> None:
    fake.rate_limit_next(1, reset_in=3600)
    reset = int(time.time()) + 3600
    with pytest.raises(Code3Error) as caught:
        alice.get_issue(REPO, 1)
    err = caught.value
    assert err.code == Code.GH_RATE_LIMIT and "rate limit" in err.message
    assert datetime.fromtimestamp(reset, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") in err.hint
    seconds = int(re.search(r"in (\d+) s", err.hint)[1])
    assert 3590 <= seconds <= 3600
    assert clock.waits == [] and api_count(fake) == 1


def test_waits_that_add_up_past_the_budget_stop_there(fake: FakeGitHub, alice: GitHubForge,
                                                      clock: FakeClock) -> None:
    fake.rate_limit_next(5, retry_after=50)
    with pytest.raises(Code3Error) as caught:
        alice.get_issue(REPO, 1)
    assert caught.value.code == Code.GH_RATE_LIMIT and "secondary" in caught.value.message
    assert clock.waits == [50, 50], "a third wait would pass the 120 s budget"
    assert api_count(fake) == 3


def test_server_errors_are_retried_then_succeed(fake: FakeGitHub, alice: GitHubForge, clock: FakeClock) -> None:
    alice.create_issue(REPO, "t", "b", [], [])
    fake.fail_next(2, 502)
    assert alice.get_issue(REPO, 1).title == "t"
    assert clock.waits == [1.0, 2.0] and api_count(fake) == 4


def test_server_errors_past_the_attempts_answer_e_gh_rate_limit(fake: FakeGitHub, alice: GitHubForge,
                                                               clock: FakeClock) -> None:
    fake.fail_next(10, 500)
    with pytest.raises(Code3Error) as caught:
        alice.get_issue(REPO, 1)
    assert caught.value.code == Code.GH_RATE_LIMIT and "HTTP 500" in caught.value.message
    assert "try again after" in caught.value.hint
    assert api_count(fake) == 5 and len(clock.waits) == 4


def test_a_post_whose_answer_was_lost_is_looked_up_not_sent_twice(fake: FakeGitHub, alice: GitHubForge) -> None:
    fake.fail_next(1, 502, after_commit=True)
    issue = alice.create_issue(REPO, "once", "only once", ["code3"], [])
    assert issue.number == 1 and len(fake.state.items[REPO]) == 1
    fake.fail_next(1, 502, after_commit=True)
    alice.create_comment(REPO, issue.number, "once")
    assert [c.body for c in alice.list_comments(REPO, issue.number)] == ["once"]


@pytest.mark.parametrize(("status", "code"), [(404, Code.NOT_FOUND), (401, Code.UNAUTHORIZED),
                                              (403, Code.UNAUTHORIZED), (422, Code.VALIDATION),
                                              (400, Code.VALIDATION)])
def test_a_4xx_is_final_at_once_with_exactly_one_request(fake: FakeGitHub, alice: GitHubForge, clock: FakeClock,
                                                         status: int, code: Code) -> None:
    fake.fail_next(3, status)
    with pytest.raises(Code3Error) as caught:
        alice.get_issue(REPO, 1)
    assert caught.value.code == code and caught.value.hint
    assert api_count(fake) == 1 and clock.waits == []


def test_real_4xx_answers_map_to_their_codes(fake: FakeGitHub, alice: GitHubForge, clock: FakeClock,
                                             make_forge: MakeForge) -> None:
    with pytest.raises(Code3Error) as missing:
        alice.get_issue(REPO, 42)
    with pytest.raises(Code3Error) as invalid:
        alice.create_issue(REPO, " ", "no title", [], [])
    with pytest.raises(Code3Error) as no_branch:
        alice.open_pr(REPO, "alice:no-such-branch", "main", "t", "b")
    wrong = make_forge("ghp_wrong", actor=None)
    with pytest.raises(Code3Error) as refused:
        wrong.actor  # noqa: B018
    assert [e.value.code for e in (missing, invalid, no_branch, refused)] == [
        Code.NOT_FOUND, Code.VALIDATION, Code.VALIDATION, Code.UNAUTHORIZED]
    assert "GITHUB_TOKEN" in refused.value.hint
    assert api_count(fake) == 5 and clock.waits == []


# --- secrets ----------------------------------------------------------------------------------


def test_the_token_never_appears_in_logs_errors_argv_or_git_config(
        fake: FakeGitHub, clock: FakeClock, tmp_path: Path, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch, make_forge: MakeForge) -> None:
    argvs: list[list[str]] = []
    real_run = subprocess.run

    def recording_run(args: list[str], **kw: Any) -> Any:
        argvs.append(list(args))
        return real_run(args, **kw)

    monkeypatch.setattr("adapters.github_git.subprocess.run", recording_run)
    for name in ("", "githubkit", "httpx", "httpcore", "code3"):
        caplog.set_level(logging.DEBUG, logger=name)
    secrets = [BOB, base64.b64encode(f"x-access-token:{BOB}".encode()).decode(), "ghp_wrong"]

    bob = make_forge(BOB, actor=None)
    errors: list[Code3Error] = []
    fork = bob.fork(REPO)
    work = tmp_path / "w"
    bob.clone(fork, work)
    git("checkout", "-q", "-b", "feat/s", cwd=work)
    (work / "s.txt").write_text("s")
    commit_all(work, "s")
    bob.push(work, "feat/s")
    bob.open_pr(REPO, "bob:feat/s", "main", "t", "b")
    fake.rate_limit_next(1, reset_in=3600)
    fake.fail_next(1, 404)
    for call in (lambda: bob.get_issue(REPO, 1), lambda: bob.get_issue(REPO, 1),
                 lambda: make_forge("ghp_wrong", actor="x").clone(fork, tmp_path / "denied")):
        with pytest.raises(Code3Error) as caught:
            call()
        errors.append(caught.value)
    assert [e.code for e in errors] == [Code.GH_RATE_LIMIT, Code.NOT_FOUND, Code.UNAUTHORIZED]

    texts = [r.getMessage() for r in caplog.records] + [str(e.as_dict()) for e in errors]
    texts += [(work / ".git" / "config").read_text(), repr(bob), " ".join(" ".join(a) for a in argvs)]
    assert any("HTTP Request" in t for t in texts), "httpx did log the requests"
    for secret in secrets:
        assert not any(secret in t for t in texts)
    assert GitHubGit(BOB, fake.web_url).scrub(f"fatal: {secrets[0]} / {secrets[1]}") == "fatal: *** / ***"


# --- configuration ------------------------------------------------------------------------------


def test_git_host_is_derived_from_the_api_url() -> None:
    assert web_base_from_api("https://api.github.com") == "https://github.com"
    assert web_base_from_api("https://ghe.example.com/api/v3/") == "https://ghe.example.com"
    forge = GitHubForge("t", base_url="https://ghe.example.com/api/v3", actor="a")
    assert forge.repo_url("o/r") == "https://ghe.example.com/o/r"
    with pytest.raises(Code3Error) as caught:
        GitHubForge("")
    assert caught.value.code == Code.UNAUTHORIZED


def test_importing_the_adapter_does_not_import_githubkit() -> None:
    code = "import sys, adapters.github; print('githubkit' in sys.modules, 'httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
