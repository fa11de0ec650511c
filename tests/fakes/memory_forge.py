"""An in-memory forge for the fast handler tests: issues, labels, comments and pull requests in dicts.

It keeps no git repositories: fork names the fork, and `push`/`clone` are refused, so handler tests
that need real git (fork_and_prepare) stay in the integration suite on the embedded forge.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from adapters.ports import Comment, IssueRef, PullRequest, RepoInfo
from domain.errors import Code, Code3Error

BASE = "https://forge.test"


@dataclass
class ForgeState:
    repos: dict[str, int] = field(default_factory=dict)  # name -> the forge's id
    users: dict[str, int] = field(default_factory=dict)  # login -> the forge's id
    issues: dict[tuple[str, int], IssueRef] = field(default_factory=dict)
    prs: dict[tuple[str, int], PullRequest] = field(default_factory=dict)
    comments: dict[int, tuple[str, int, Comment]] = field(default_factory=dict)
    numbers: dict[str, int] = field(default_factory=dict)


class MemoryForge:
    def __init__(self, state: ForgeState, actor: str) -> None:
        self.state, self._actor = state, actor

    @property
    def actor(self) -> str:
        return self._actor

    @property
    def actor_id(self) -> int:
        return self.user_id(self._actor)

    def user_id(self, login: str) -> int:
        return self.state.users.setdefault(login, 1000 + len(self.state.users))

    def create_repo(self, repo: str) -> str:
        self.state.repos.setdefault(repo, 500 + len(self.state.repos))
        return self.repo_url(repo)

    def get_repo(self, repo: str) -> RepoInfo:
        if repo not in self.state.repos:
            raise Code3Error(Code.NOT_FOUND, f"repository {repo} does not exist on the forge", "create it first")
        return RepoInfo(full_name=repo, id=self.state.repos[repo], default_branch="main")

    def _next(self, repo: str) -> int:
        if repo not in self.state.repos:
            raise Code3Error(Code.NOT_FOUND, f"repository {repo} does not exist on the forge", "create it first")
        self.state.numbers[repo] = self.state.numbers.get(repo, 0) + 1
        return self.state.numbers[repo]

    def create_issue(self, repo: str, title: str, body: str, labels: list[str], assignees: list[str]) -> IssueRef:
        number = self._next(repo)
        issue = IssueRef(repo, number, f"{BASE}/{repo}/issues/{number}", title, body, sorted(labels),
                         author=self.actor)
        self.state.issues[(repo, number)] = issue
        return issue

    def find_issue(self, repo: str, marker: str) -> IssueRef | None:
        return next((i for (r, _), i in sorted(self.state.issues.items()) if r == repo and marker in i.body), None)

    def list_issues(self, repo: str) -> list[IssueRef]:
        return [i for (r, _), i in sorted(self.state.issues.items()) if r == repo]

    def get_issue(self, repo: str, number: int) -> IssueRef:
        if (repo, number) not in self.state.issues:
            raise Code3Error(Code.NOT_FOUND, f"no issue {repo}#{number}", "check the issue number")
        return self.state.issues[(repo, number)]

    def update_issue_body(self, repo: str, number: int, body: str) -> None:
        self.state.issues[(repo, number)] = replace(self.get_issue(repo, number), body=body)

    def close_issue(self, repo: str, number: int) -> None:
        self.state.issues[(repo, number)] = replace(self.get_issue(repo, number), state="closed")

    def set_labels(self, repo: str, number: int, labels: list[str]) -> list[str]:
        self.state.issues[(repo, number)] = replace(self.get_issue(repo, number), labels=sorted(labels))
        return sorted(labels)

    def create_comment(self, repo: str, number: int, body: str) -> int:
        if (repo, number) not in self.state.prs:  # a PR's conversation takes comments as an issue's does
            self.get_issue(repo, number)
        comment_id = len(self.state.comments) + 1
        url = f"{BASE}/{repo}/issues/{number}#issuecomment-{comment_id}"
        self.state.comments[comment_id] = (repo, number, Comment(comment_id, body, self.actor, self.actor_id,
                                                                 url=url))
        return comment_id

    def get_comment(self, url: str) -> Comment | None:
        _page, _, fragment = url.partition("#issuecomment-")
        found = self.state.comments.get(int(fragment)) if fragment.isdigit() else None
        return found[2] if found is not None and found[2].url == url else None

    def list_comments(self, repo: str, number: int) -> list[Comment]:
        return [c for r, n, c in self.state.comments.values() if (r, n) == (repo, number)]

    def edit_comment(self, repo: str, comment_id: int, body: str) -> None:
        r, n, comment = self.state.comments[comment_id]
        self.state.comments[comment_id] = (r, n, replace(comment, body=body, edited=True))

    def fork(self, repo: str) -> str:
        fork = f"{self.actor}/{repo.split('/')[1]}"
        self.create_repo(fork)
        return fork

    def clone(self, repo: str, dest: Path) -> None:
        raise NotImplementedError("the in-memory forge keeps no git repositories")

    def push(self, workdir: Path, branch: str) -> str:
        raise NotImplementedError("the in-memory forge keeps no git repositories")

    def fetch_branch(self, workdir: Path, repo: str, branch: str) -> str:
        raise NotImplementedError("the in-memory forge keeps no git repositories")

    def open_pr(self, repo: str, head: str, base: str, title: str, body: str) -> PullRequest:
        number = self._next(repo)
        sha = hashlib.sha1(f"{repo}:{head}:{number}".encode()).hexdigest()
        pr = PullRequest(repo, number, f"{BASE}/{repo}/pull/{number}", head, base, self.actor, title, "open", False,
                         sha, repo_id=self.state.repos[repo], default_branch="main", author_id=self.actor_id)
        self.state.prs[(repo, number)] = pr
        return pr

    def find_pr(self, repo: str, number: int) -> PullRequest | None:
        return self.state.prs.get((repo, number))

    def close_pr(self, url: str) -> PullRequest:
        pr = self.get_pr(url)
        if pr is None:
            raise Code3Error(Code.NOT_FOUND, f"no pull request at {url}", "open it first")
        closed = replace(pr, state="closed")
        self.state.prs[(pr.repo, pr.number)] = closed
        return closed

    def get_pr(self, url: str) -> PullRequest | None:
        """Found by owner/repo and number, whatever the host, as the real forges' adapters parse a URL."""
        parts = url.rstrip("/").split("/")
        if len(parts) < 4 or parts[-2] != "pull" or not parts[-1].isdigit():
            return None
        return self.state.prs.get((f"{parts[-4]}/{parts[-3]}", int(parts[-1])))

    def merge_pr(self, url: str) -> PullRequest:
        pr = next((p for p in self.state.prs.values() if p.url == url), None)
        if pr is None:
            raise Code3Error(Code.NOT_FOUND, f"no pull request at {url}", "open it first")
        merged = replace(pr, state="closed", merged=True, merge_sha=hashlib.sha1(pr.head_sha.encode()).hexdigest())
        self.state.prs[(pr.repo, pr.number)] = merged
        return merged

    def repo_url(self, repo: str) -> str:
        return f"{BASE}/{repo}"
