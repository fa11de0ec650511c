"""The GitHub forge: the `Forge` port on githubkit's REST API (github.com or GitHub Enterprise).

Behaves as the embedded forge does (find an issue by a marker in its body, reuse an open PR for the
same head, reuse a fork) so handlers cannot tell them apart. Every call goes through the GitHub retry
policy; githubkit's own retry and HTTP cache are off. githubkit is imported on first use only.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from adapters.github_errors import ForgeFailure, budget_spent_error, final_error, github_policy, maybe_committed
from adapters.github_git import GitHubGit, GitTransient, web_base_from_api
from adapters.local_forge import check_repo, parse_url
from adapters.ports import Comment, IssueRef, PullRequest, RepoInfo
from adapters.retry import RetryBudgetSpent, RetryPolicy
from adapters.scrub import register_secret, scrub, scrubbed_error
from domain.errors import Code, Code3Error
from domain.values import parse_comment_url

T = TypeVar("T")
log = logging.getLogger("code3.github")
CODE3_LABEL = "code3"
PAGE_SIZE = 100
SEARCH_LAG_S = 600  # how far back find_issue lists issues itself: longer than the search index takes to see one


def _label_names(labels: list[Any]) -> list[str]:
    return sorted({label if isinstance(label, str) else str(label.name) for label in labels})


def _hit(item: dict[str, Any]) -> Any:
    """A search result item with the attributes `_issue_ref` reads (number, html_url, title, body, labels, state,
    user.login, pull_request)."""
    from types import SimpleNamespace

    user = item.get("user") or None
    return SimpleNamespace(number=item["number"], html_url=item["html_url"], title=item.get("title") or "",
                           body=item.get("body") or "", state=item.get("state") or "open",
                           labels=[x if isinstance(x, str) else str(x.get("name")) for x in item.get("labels") or []],
                           user=SimpleNamespace(login=user["login"]) if user else None,
                           pull_request=item.get("pull_request"))


def _pooled_transport() -> Any:
    """One connection pool for the forge's life.

    githubkit builds (and closes) an httpx client per request outside a `with` block; each build loads
    the CA bundle (~50 ms) and no connection is reused. Handing it this transport, whose close() is a
    no-op, keeps TLS connections alive between calls; `GitHubForge.close()` closes the pool itself.
    """
    import httpx

    class KeepOpen(httpx.BaseTransport):
        def __init__(self) -> None:
            self.inner = httpx.HTTPTransport()

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            return self.inner.handle_request(request)

        def close(self) -> None:
            pass

    return KeepOpen()


class GitHubForge:
    """Acts as the token's user (`actor`, looked up lazily so building services makes no request)."""

    def __init__(self, token: str, base_url: str = "https://api.github.com", actor: str | None = None,
                 git_base_url: str | None = None, policy: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 timeout_s: float = 30.0) -> None:
        if not token:
            raise Code3Error(Code.UNAUTHORIZED, "no GitHub token configured", "set GITHUB_TOKEN")
        self.base_url = base_url.rstrip("/")
        self.web_url = (git_base_url or web_base_from_api(self.base_url)).rstrip("/")
        self.policy = policy or github_policy()
        self._token = token
        register_secret(token)  # scrubbed from every message wherever it turns up
        self._actor = actor
        self._actor_id: int | None = None
        self._sleep = sleep
        self._clock = clock
        self._timeout_s = timeout_s
        self._client: Any = None
        self._transport: Any = None
        self._lock = threading.Lock()
        self._git = GitHubGit(token, self.web_url)
        self._fresh_forks: set[str] = set()

    def __repr__(self) -> str:
        return f"GitHubForge(base_url={self.base_url!r}, actor={self._actor!r})"

    def with_budget(self, budget_s: float) -> GitHubForge:
        """This forge with a shorter retry budget, for the worker's mirror: a failure it cannot outwait is
        retried at the next round anyway, so a tick should not block for the tools' minutes-long budget."""
        other = copy.copy(self)
        other.policy = dataclasses.replace(self.policy, budget_s=budget_s)
        return other

    def close(self) -> None:
        with self._lock:
            if self._transport is not None:
                self._transport.inner.close()
            self._transport = self._client = None

    @property
    def gh(self) -> Any:
        with self._lock:
            if self._client is None:
                from githubkit import GitHub

                self._transport = _pooled_transport()
                self._client = GitHub(self._token, base_url=self.base_url + "/", auto_retry=False,
                                      http_cache=False, timeout=self._timeout_s, transport=self._transport)
            return self._client

    @property
    def actor(self) -> str:
        if self._actor is None:
            self._who_am_i()
        assert self._actor is not None
        return self._actor

    @property
    def actor_id(self) -> int:
        if self._actor_id is None:
            self._who_am_i()
        assert self._actor_id is not None
        return self._actor_id

    def _who_am_i(self) -> None:
        user = self._call("look up the token's user", lambda: self.gh.rest.users.get_authenticated().parsed_data)
        self._actor, self._actor_id = str(user.login), int(user.id)

    def get_repo(self, repo: str) -> RepoInfo:
        owner, name = self._split(repo)
        found = self._call(f"read repository {repo}", lambda: self.gh.rest.repos.get(owner, name).parsed_data)
        return RepoInfo(full_name=str(found.full_name), id=int(found.id), default_branch=str(found.default_branch))

    def repo_url(self, repo: str) -> str:
        return f"{self.web_url}/{check_repo(repo)}"

    # --- calls: retried when transient, mapped to Code3 errors when final ----------------------

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """The forge's boundary: whatever leaves it is a Code3Error or a ForgeFailure, scrubbed of secrets."""
        try:
            return self.policy.call(fn, sleep=self._sleep, clock=self._clock)
        except RetryBudgetSpent as spent:
            log.warning("%s: retry budget spent after %d attempt(s)", what, spent.attempts)
            raise scrubbed_error(budget_spent_error(what, spent)) from None
        except Code3Error as exc:
            clean = scrubbed_error(exc)
            if clean is exc:
                raise
            raise clean from None
        except Exception as exc:
            mapped = final_error(exc, what)
            if mapped is None:  # not a GitHub answer: keep its type's name and a scrubbed text, not the object
                raise ForgeFailure(scrub(f"{what}: {type(exc).__name__}: {exc}")) from None
            raise scrubbed_error(mapped) from None  # the githubkit exception holds the request, token included

    def _create(self, what: str, send: Callable[[], T], existing: Callable[[], T | None]) -> T:
        """POST once: after a failure that may have committed (5xx, lost answer), look for the result first."""
        ambiguous = False

        def attempt() -> T:
            nonlocal ambiguous
            if ambiguous:
                found = existing()
                if found is not None:
                    log.info("%s: found what the failed attempt created; not sending it again", what)
                    return found
            try:
                return send()
            except Exception as exc:
                ambiguous = ambiguous or maybe_committed(exc)
                raise

        return self._call(what, attempt)

    def _pages(self, what: str, fetch: Callable[[int], list[Any]], retried: bool = True) -> Iterator[Any]:
        """Every item of a listing, page by page (each page retried on its own unless the caller retries)."""
        page = 1
        while True:
            items = self._call(f"{what} (page {page})", functools.partial(fetch, page)) if retried else fetch(page)
            yield from items
            if len(items) < PAGE_SIZE:
                return
            page += 1

    @staticmethod
    def _split(repo: str) -> tuple[str, str]:
        owner, name = check_repo(repo).split("/", 1)
        return owner, name

    # --- issues, labels, comments -----------------------------------------------------------

    def create_issue(self, repo: str, title: str, body: str, labels: list[str], assignees: list[str]) -> IssueRef:
        owner, name = self._split(repo)

        def send() -> Any:
            return self.gh.rest.issues.create(owner, name, title=title, body=body, labels=sorted(set(labels)),
                                              assignees=list(assignees)).parsed_data

        def existing() -> Any:
            recent = self.gh.rest.issues.list_for_repo(owner, name, creator=self.actor, state="all", sort="created",
                                                       direction="desc", per_page=10).parsed_data
            return next((i for i in recent if not i.pull_request and i.title == title
                         and (i.body or "") == body), None)

        return self._issue_ref(repo, self._create(f"create an issue in {repo}", send, existing))

    def find_issue(self, repo: str, marker: str) -> IssueRef | None:
        """The oldest issue whose body holds `marker`, among code3-labelled issues and the actor's own.

        Two requests whatever the repository holds: the issues updated in the last SEARCH_LAG_S seconds (a
        listing, consistent: a resumed publish sees the issue it created a second ago), then the search API
        (indexed, but eventually consistent: it may miss an issue younger than its indexing lag). Never a walk
        through every issue of the repository.
        """
        from datetime import UTC, datetime, timedelta

        owner, name = self._split(repo)
        since = datetime.now(UTC) - timedelta(seconds=SEARCH_LAG_S)

        def recent(page: int) -> list[Any]:
            return self.gh.rest.issues.list_for_repo(owner, name, state="all", since=since, sort="created",
                                                     direction="asc", per_page=PAGE_SIZE, page=page).parsed_data

        found = [i for i in self._pages(f"list the recent issues of {repo}", recent) if self._holds(i, marker)]
        if not found:
            query = f'"{marker}" repo:{owner}/{name} is:issue in:body'

            def search() -> list[Any]:  # read leniently: the answer's envelope changes more than its items
                answer = self.gh.rest.search.issues_and_pull_requests(q=query, sort="created", order="asc",
                                                                      per_page=PAGE_SIZE).json()
                return [_hit(item) for item in answer.get("items") or []]

            found = [i for i in self._call(f"search the issues of {repo}", search) if self._holds(i, marker)]
        return self._issue_ref(repo, min(found, key=lambda i: int(i.number))) if found else None

    def _holds(self, issue: Any, marker: str) -> bool:
        """An issue (not a PR) holding `marker`, labelled code3 or opened by the actor (nobody else's claim)."""
        return (not issue.pull_request and marker in (issue.body or "")
                and (CODE3_LABEL in _label_names(issue.labels) or (issue.user and issue.user.login == self.actor)))

    def list_issues(self, repo: str) -> list[IssueRef]:
        owner, name = self._split(repo)

        def fetch(page: int) -> list[Any]:
            return self.gh.rest.issues.list_for_repo(owner, name, state="all", sort="created", direction="asc",
                                                     per_page=PAGE_SIZE, page=page, labels=CODE3_LABEL).parsed_data

        return [self._issue_ref(repo, i) for i in self._pages(f"list the issues of {repo}", fetch)
                if not i.pull_request]

    def get_issue(self, repo: str, number: int) -> IssueRef:
        owner, name = self._split(repo)
        what = f"read issue {repo}#{number}"
        issue = self._call(what, lambda: self.gh.rest.issues.get(owner, name, number).parsed_data)
        if issue.pull_request:
            raise Code3Error(Code.NOT_FOUND, f"{what}: #{number} is a pull request, not an issue",
                             "check the issue URL")
        return self._issue_ref(repo, issue)

    def update_issue_body(self, repo: str, number: int, body: str) -> None:
        owner, name = self._split(repo)
        self._call(f"edit issue {repo}#{number}", lambda: self.gh.rest.issues.update(owner, name, number, body=body))

    def close_issue(self, repo: str, number: int) -> None:
        owner, name = self._split(repo)
        self._call(f"close issue {repo}#{number}",
                   lambda: self.gh.rest.issues.update(owner, name, number, state="closed"))

    def set_labels(self, repo: str, number: int, labels: list[str]) -> list[str]:
        owner, name = self._split(repo)
        wanted = sorted(set(labels))
        what = f"set the labels of {repo}#{number}"
        if not wanted:  # the PUT body needs at least one label; clearing them is its own endpoint
            self._call(what, lambda: self.gh.rest.issues.remove_all_labels(owner, name, number))
            return []
        result = self._call(what, lambda: self.gh.rest.issues.set_labels(owner, name, number, labels=wanted))
        return _label_names(result.parsed_data)

    def create_comment(self, repo: str, number: int, body: str) -> int:
        owner, name = self._split(repo)

        def send() -> Any:
            return self.gh.rest.issues.create_comment(owner, name, number, body=body).parsed_data

        def existing() -> Any:
            comments = self.list_comments(repo, number, retried=False)  # inside the caller's retry
            last = comments[-1] if comments else None
            return last if last is not None and last.body == body and last.author == self.actor else None

        return int(self._create(f"comment on {repo}#{number}", send, existing).id)

    def list_comments(self, repo: str, number: int, retried: bool = True) -> list[Comment]:
        owner, name = self._split(repo)

        def fetch(page: int) -> list[Any]:
            return self.gh.rest.issues.list_comments(owner, name, number, per_page=PAGE_SIZE, page=page).parsed_data

        return [_comment(c) for c in self._pages(f"list the comments of {repo}#{number}", fetch, retried)]

    def get_comment(self, url: str) -> Comment | None:
        issue, comment_id = parse_comment_url(url)
        owner, name = self._split(issue.repo)
        try:
            found = self._call(f"read comment {comment_id} of {issue.repo}",
                               lambda: self.gh.rest.issues.get_comment(owner, name, comment_id).parsed_data)
        except Code3Error as exc:
            if exc.code == Code.NOT_FOUND:
                return None
            raise
        # the comment must be on the issue or PR the URL names (its issue_url ends with that number)
        if not str(found.issue_url).endswith(f"/issues/{issue.number}"):
            return None
        return _comment(found)

    def edit_comment(self, repo: str, comment_id: int, body: str) -> None:
        owner, name = self._split(repo)
        self._call(f"edit comment {comment_id} in {repo}",
                   lambda: self.gh.rest.issues.update_comment(owner, name, comment_id, body=body))

    def _issue_ref(self, repo: str, issue: Any) -> IssueRef:
        return IssueRef(repo=repo, number=int(issue.number), url=str(issue.html_url), title=str(issue.title),
                        body=issue.body or "", labels=_label_names(issue.labels), state=str(issue.state),
                        author=issue.user.login if issue.user else "ghost")

    # --- forks, clones, pushes --------------------------------------------------------------

    def fork(self, repo: str) -> str:
        """The actor's fork (GitHub answers with the existing one when there is one); the actor's own repo as is."""
        owner, name = self._split(repo)
        if owner == self.actor:
            self._call(f"read repository {repo}", lambda: self.gh.rest.repos.get(owner, name))
            return repo
        forked = self._call(f"fork {repo}", lambda: self.gh.rest.repos.create_fork(owner, name).parsed_data)
        full_name = str(forked.full_name)
        self._fresh_forks.add(full_name)
        return full_name

    def clone(self, repo: str, dest: Path) -> None:
        fresh = check_repo(repo) in self._fresh_forks

        def attempt() -> None:
            try:
                self._git.clone(repo, dest)
            except Code3Error as exc:
                if fresh and exc.code == Code.NOT_FOUND:  # GitHub creates forks asynchronously
                    raise GitTransient(exc.message) from None
                raise

        self._call(f"clone {repo}", attempt)

    def push(self, workdir: Path, branch: str) -> str:
        return self._call(f"push {branch}", lambda: self._git.push(workdir, branch))

    def fetch_branch(self, workdir: Path, repo: str, branch: str) -> str:
        return self._call(f"fetch {repo}'s {branch}", lambda: self._git.fetch(workdir, check_repo(repo), branch))

    # --- pull requests ----------------------------------------------------------------------

    def open_pr(self, repo: str, head: str, base: str, title: str, body: str) -> PullRequest:
        """A PR from `user:branch` (a fork's branch) or `branch` into `base`; an open one for the head is reused."""
        owner, name = self._split(repo)
        head_owner, branch = head.split(":", 1) if ":" in head else (owner, head)
        label = f"{head_owner}:{branch}"
        reuse = self._open_pr_for(repo, label)
        if reuse is not None:
            return reuse

        def send() -> PullRequest:
            resp = self.gh.rest.pulls.create(owner, name, title=title, head=label, base=base, body=body)
            return self._pr(repo, resp.parsed_data, resp.json())

        try:
            return self._create(f"open a pull request from {label} into {repo}:{base}", send,
                                lambda: self._find_open_pr(repo, label))
        except Code3Error as exc:
            if exc.code != Code.EXISTS:
                raise
            found = self._open_pr_for(repo, label)  # opened concurrently by another process
            if found is None:
                raise
            return found

    def _open_pr_for(self, repo: str, label: str) -> PullRequest | None:
        return self._call(f"look for an open pull request from {label} in {repo}",
                          lambda: self._find_open_pr(repo, label))

    def _find_open_pr(self, repo: str, label: str) -> PullRequest | None:
        owner, name = self._split(repo)
        found = self.gh.rest.pulls.list(owner, name, state="open", head=label, per_page=10).parsed_data
        if not found:
            return None
        resp = self.gh.rest.pulls.get(owner, name, found[0].number)
        return self._pr(repo, resp.parsed_data, resp.json())

    def get_pr(self, url: str) -> PullRequest | None:
        repo, kind, number = parse_url(url)
        if kind != "pull":
            return None
        return self.find_pr(repo, number)

    def find_pr(self, repo: str, number: int) -> PullRequest | None:
        owner, name = self._split(repo)
        try:
            resp = self._call(f"read pull request {repo}#{number}", lambda: self.gh.rest.pulls.get(owner, name, number))
        except Code3Error as exc:
            if exc.code == Code.NOT_FOUND:
                return None
            raise
        return self._pr(repo, resp.parsed_data, resp.json())

    @staticmethod
    def _pr(repo: str, pr: Any, raw: dict[str, Any]) -> PullRequest:
        head_repo = pr.head.repo.full_name if pr.head.repo is not None else None
        head = f"{head_repo}:{pr.head.ref}" if head_repo else str(pr.head.label or pr.head.ref)
        merged = bool(pr.merged)
        # merge_commit_sha is left out of githubkit's 2026-03-10 model; GitHub still sends it
        merge_sha = raw.get("merge_commit_sha") if merged else None
        base_repo = pr.base.repo  # the repository the PR belongs to, by GitHub's own record (a renamed one too)
        return PullRequest(repo=str(base_repo.full_name) if base_repo else repo, number=int(pr.number),
                           url=str(pr.html_url), head=head, base=str(pr.base.ref), author=str(pr.user.login),
                           title=str(pr.title), state=str(pr.state), merged=merged, head_sha=str(pr.head.sha),
                           merge_sha=merge_sha, repo_id=int(base_repo.id) if base_repo else 0,
                           default_branch=str(base_repo.default_branch) if base_repo else "main",
                           author_id=int(pr.user.id))


def _comment(c: Any) -> Comment:
    """GitHub's comment as the port's: the author's numeric id, and whether it was edited after it was posted (its
    `updated_at` differs from `created_at`: people with push access may edit anyone's comment)."""
    return Comment(id=int(c.id), body=c.body or "", author=c.user.login if c.user else "ghost",
                   author_id=int(c.user.id) if c.user else 0, edited=c.updated_at != c.created_at,
                   url=str(c.html_url))
