"""The REST endpoints the GitHub stand-in serves, with GitHub's status codes, filters and pagination.

Each handler runs under the stand-in's lock and returns (status, payload, extra headers).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from adapters.git import git, read_ref
from tests.fakes.github_payloads import JSON, iso

if TYPE_CHECKING:
    from tests.fakes.github_server import FakeGitHub, Item

Answer = tuple[int, Any, dict[str, str]]
R = r"(?P<repo>[\w.-]+/[\w.-]+)"
ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    (m, re.compile(f"^{p}$"), h) for m, p, h in [
        ("GET", "/user", "get_user"),
        ("GET", f"/repos/{R}", "get_repo"),
        ("POST", f"/repos/{R}/forks", "create_fork"),
        ("GET", f"/repos/{R}/issues", "list_issues"),
        ("GET", "/search/issues", "search_issues"),
        ("POST", f"/repos/{R}/issues", "create_issue"),
        ("GET", f"/repos/{R}/issues/comments/(?P<cid>\\d+)", "get_comment"),
        ("PATCH", f"/repos/{R}/issues/comments/(?P<cid>\\d+)", "update_comment"),
        ("GET", f"/repos/{R}/issues/(?P<n>\\d+)", "get_issue"),
        ("PATCH", f"/repos/{R}/issues/(?P<n>\\d+)", "update_issue"),
        ("GET", f"/repos/{R}/issues/(?P<n>\\d+)/labels", "get_labels"),
        ("PUT", f"/repos/{R}/issues/(?P<n>\\d+)/labels", "set_labels"),
        ("POST", f"/repos/{R}/issues/(?P<n>\\d+)/labels", "add_labels"),
        ("DELETE", f"/repos/{R}/issues/(?P<n>\\d+)/labels", "remove_all_labels"),
        ("GET", f"/repos/{R}/issues/(?P<n>\\d+)/comments", "list_comments"),
        ("POST", f"/repos/{R}/issues/(?P<n>\\d+)/comments", "create_comment"),
        ("GET", f"/repos/{R}/pulls", "list_pulls"),
        ("POST", f"/repos/{R}/pulls", "create_pull"),
        ("GET", f"/repos/{R}/pulls/(?P<n>\\d+)", "get_pull"),
    ]]


def route(fake: FakeGitHub, method: str, path: str, query: dict[str, str], body: Any, login: str) -> Answer:
    from tests.fakes.github_server import HttpError

    for verb, pattern, name in ROUTES:
        match = pattern.match(path.rstrip("/") or "/")
        if match and verb == method:
            handler: Callable[..., Answer] = getattr(Endpoints(fake, login, query, body), name)
            return handler(**match.groupdict())
    raise HttpError(404, "Not Found")


class Endpoints:
    def __init__(self, fake: FakeGitHub, login: str, query: dict[str, str], body: Any) -> None:
        self.fake, self.login, self.query, self.body = fake, login, query, body if body is not None else {}
        self.state = fake.state
        self.p = fake.payloads

    # --- helpers ----------------------------------------------------------------------------

    def _err(self, status: int, message: str, errors: list[JSON] | None = None) -> Exception:
        from tests.fakes.github_server import HttpError

        return HttpError(status, message, errors)

    def _repo(self, repo: str) -> Any:
        if repo not in self.state.repos:
            raise self._err(404, "Not Found")
        return self.state.repos[repo]

    def _item(self, repo: str, n: str | int, pull: bool | None = None) -> Item:
        item = self.state.items[self._repo(repo).full_name].get(int(n))
        if item is None or (pull is True and item.pull is None):
            raise self._err(404, "Not Found")
        return item

    def _repo_json(self, repo: str) -> JSON:
        r = self.state.repos[repo]
        parent = self._repo_json(r.parent) if r.parent else None
        return self.p.repository(r.id, repo, r.parent is not None, r.default_branch, r.created, parent)

    def _label_jsons(self, repo: str, names: list[str]) -> list[JSON]:
        return [self.p.label(self.state.labels.setdefault((repo, n), next(self.fake._ids)), repo, n)
                for n in sorted(set(names))]

    def _issue_json(self, repo: str, item: Item) -> JSON:
        comments = sum(1 for c in self.state.comments.values() if c.repo == repo and c.number == item.number)
        pull = None
        if item.pull is not None:
            html = f"{self.fake.web_url}/{repo}/pull/{item.number}"
            pull = {"url": f"{self.fake.api_url}/repos/{repo}/pulls/{item.number}", "html_url": html,
                    "diff_url": html + ".diff", "patch_url": html + ".patch",
                    "merged_at": iso(item.pull["merged_at"])}
        return self.p.issue(item.id, repo, item.number, item.title, item.body, self._label_jsons(repo, item.labels),
                            item.state, item.author, comments, item.created, item.updated, item.closed, pull)

    def _pull_json(self, repo: str, item: Item) -> JSON:
        pull = item.pull
        assert pull is not None
        head_sha = pull["head_sha"] or read_ref(self.fake.bare(pull["head_repo"]), f"refs/heads/{pull['head_ref']}")
        base_sha = read_ref(self.fake.bare(repo), f"refs/heads/{pull['base_ref']}") or ""
        head = self.p.pull_ref(self._repo_json(pull["head_repo"]), pull["head_ref"], head_sha or "")
        base = self.p.pull_ref(self._repo_json(repo), pull["base_ref"], base_sha)
        return self.p.pull(pull["id"], repo, self._issue_json(repo, item), head, base, pull["merged_at"],
                           pull["merge_sha"], pull["merged_by"])

    def _page(self, items: list[Any], render: Callable[[Any], JSON]) -> Answer:
        per_page = min(int(self.query.get("per_page", 30)), 100)
        page = max(int(self.query.get("page", 1)), 1)
        chunk = items[(page - 1) * per_page: page * per_page]
        headers = {}
        if page * per_page < len(items):
            headers["Link"] = f'<{self.fake.api_url}?page={page + 1}&per_page={per_page}>; rel="next"'
        return 200, [render(i) for i in chunk], headers

    def _new_item(self, repo: str, title: str, body: str, labels: list[str], pull: dict[str, Any] | None) -> Item:
        from tests.fakes.github_server import Item

        items = self.state.items[repo]
        now = time.time()
        item = Item(next(self.fake._ids), max(items, default=0) + 1, title, body, sorted(set(labels)), self.login,
                    now, now, pull=pull)
        items[item.number] = item
        return item

    # --- users and repositories -------------------------------------------------------------

    def get_user(self) -> Answer:
        return 200, self.p.private_user(self.login, time.time() - 86400), {}

    def get_repo(self, repo: str) -> Answer:
        self._repo(repo)
        return 200, self._repo_json(repo), {}

    def create_fork(self, repo: str) -> Answer:
        source = self._repo(repo)
        name = str(self.body.get("name") or repo.split("/", 1)[1]) if isinstance(self.body, dict) else ""
        target = f"{self.login}/{name}"
        if target == repo or target in self.state.repos:
            return 202, self._repo_json(target), {}
        self.fake.bare(target).parent.mkdir(parents=True, exist_ok=True)
        git("clone", "-q", "--bare", str(self.fake.bare(repo)), str(self.fake.bare(target)))
        self.fake._register(target, source.full_name)
        return 202, self._repo_json(target), {}

    # --- issues, labels, comments -----------------------------------------------------------

    def list_issues(self, repo: str) -> Answer:
        self._repo(repo)
        q = self.query
        state = q.get("state", "open")
        wanted = {label for label in q.get("labels", "").split(",") if label}
        since = _timestamp(q["since"]) if q.get("since") else None
        items = [i for i in self.state.items[repo].values()
                 if (state == "all" or i.state == state) and wanted <= set(i.labels)
                 and (not q.get("creator") or i.author == q["creator"]) and (since is None or i.updated >= since)]
        key = (lambda i: i.updated) if q.get("sort") == "updated" else (lambda i: (i.created, i.number))
        items.sort(key=key, reverse=q.get("direction", "desc") == "desc")
        return self._page(items, lambda i: self._issue_json(repo, i))

    def search_issues(self) -> Answer:
        """GET /search/issues: free-text terms (quoted or not) and the qualifiers repo:, is:, in:body, label:,
        author:; items in the issue shape plus `score`, under total_count and incomplete_results. An item younger
        than the stand-in's `search_lag` seconds is not indexed yet, as on GitHub."""
        from tests.fakes.github_server import HttpError

        terms, qualifiers = _search_terms(self.query.get("q", ""))
        repos = qualifiers.get("repo", [])
        if not repos or any(r not in self.state.items for r in repos):
            raise HttpError(422, "Validation Failed", [{"message": "The listed users and repositories cannot be "
                                                        "searched either because the resources do not exist or "
                                                        "you do not have permission to view them.",
                                                        "resource": "Search", "field": "q", "code": "invalid"}])
        indexed_by = time.time() - float(getattr(self.fake, "search_lag", 0.0))
        kinds = qualifiers.get("is", [])
        found = [(repo, i) for repo in repos for i in self.state.items[repo].values()
                 if i.created <= indexed_by and all(t.lower() in i.body.lower() for t in terms)
                 and not ("issue" in kinds and i.pull) and not ("pr" in kinds and not i.pull)
                 and set(qualifiers.get("label", [])) <= set(i.labels)
                 and all(i.author == a for a in qualifiers.get("author", []))]
        key = (lambda f: f[1].updated) if self.query.get("sort") == "updated" else (lambda f: (f[1].created,
                                                                                                 f[1].number))
        found.sort(key=key, reverse=self.query.get("order", "desc") == "desc")
        per_page = min(int(self.query.get("per_page", 30)), 100)
        page = max(int(self.query.get("page", 1)), 1)
        items = [{**self._issue_json(repo, i), "score": 1.0} for repo, i in found[(page - 1) * per_page:
                                                                                   page * per_page]]
        return 200, {"total_count": len(found), "incomplete_results": False, "items": items,
                     "search_type": "lexical"}, {}

    def create_issue(self, repo: str) -> Answer:
        self._repo(repo)
        if not str(self.body.get("title") or "").strip():
            raise self._err(422, "Validation Failed", [{"resource": "Issue", "field": "title",
                                                        "code": "missing_field"}])
        labels = [str(x if isinstance(x, str) else x.get("name")) for x in self.body.get("labels") or []]
        item = self._new_item(repo, str(self.body["title"]), str(self.body.get("body") or ""), labels, None)
        return 201, self._issue_json(repo, item), {"Location": f"{self.fake.api_url}/repos/{repo}/issues/{item.number}"}

    def get_issue(self, repo: str, n: str) -> Answer:
        return 200, self._issue_json(repo, self._item(repo, n)), {}

    def update_issue(self, repo: str, n: str) -> Answer:
        item = self._item(repo, n)
        for key in ("title", "body"):
            if key in self.body:
                setattr(item, key, str(self.body[key] or ""))
        if "labels" in self.body:
            item.labels = sorted({str(x) for x in self.body["labels"]})
        if self.body.get("state") in ("open", "closed"):
            item.state = self.body["state"]
            item.closed = time.time() if item.state == "closed" else None
        item.updated = time.time()
        return 200, self._issue_json(repo, item), {}

    def get_labels(self, repo: str, n: str) -> Answer:
        return 200, self._label_jsons(repo, self._item(repo, n).labels), {}

    def set_labels(self, repo: str, n: str, add: bool = False) -> Answer:
        item = self._item(repo, n)
        given = self.body.get("labels", []) if isinstance(self.body, dict) else self.body
        names = {str(x if isinstance(x, str) else x.get("name")) for x in given}
        item.labels = sorted(names | set(item.labels) if add else names)
        item.updated = time.time()
        return 200, self._label_jsons(repo, item.labels), {}

    def add_labels(self, repo: str, n: str) -> Answer:
        return self.set_labels(repo, n, add=True)

    def remove_all_labels(self, repo: str, n: str) -> Answer:
        item = self._item(repo, n)
        item.labels, item.updated = [], time.time()
        return 204, None, {}

    def list_comments(self, repo: str, n: str) -> Answer:
        item = self._item(repo, n)
        found = sorted((c for c in self.state.comments.values() if c.repo == repo and c.number == item.number),
                       key=lambda c: c.id)
        return self._page(found, self._comment_json)

    def create_comment(self, repo: str, n: str) -> Answer:
        from tests.fakes.github_server import CommentRec

        item = self._item(repo, n)
        if not str(self.body.get("body") or "").strip():
            raise self._err(422, "Validation Failed", [{"resource": "IssueComment", "field": "body",
                                                        "code": "missing_field"}])
        now = time.time()
        comment = CommentRec(next(self.fake._ids), repo, item.number, str(self.body["body"]), self.login, now, now)
        self.state.comments[comment.id] = comment
        return 201, self._comment_json(comment), {}

    def get_comment(self, repo: str, cid: str) -> Answer:
        comment = self.state.comments.get(int(cid))
        if comment is None or comment.repo != repo:
            raise self._err(404, "Not Found")
        return 200, self._comment_json(comment), {}

    def update_comment(self, repo: str, cid: str) -> Answer:
        comment = self.state.comments.get(int(cid))
        if comment is None or comment.repo != repo:
            raise self._err(404, "Not Found")
        comment.body, comment.updated = str(self.body.get("body") or ""), time.time()
        return 200, self._comment_json(comment), {}

    def _comment_json(self, c: Any) -> JSON:
        return self.p.comment(c.id, c.repo, c.number, c.body, c.author, c.created, c.updated)

    # --- pull requests ----------------------------------------------------------------------

    def _label(self, repo: str, item: Item) -> str:
        assert item.pull is not None
        return f"{item.pull['head_repo'].split('/')[0]}:{item.pull['head_ref']}"

    def list_pulls(self, repo: str) -> Answer:
        self._repo(repo)
        q = self.query
        state = q.get("state", "open")
        items = [i for i in self.state.items[repo].values() if i.pull is not None
                 and (state == "all" or i.state == state) and (not q.get("head") or self._label(repo, i) == q["head"])
                 and (not q.get("base") or i.pull["base_ref"] == q["base"])]
        items.sort(key=lambda i: i.number, reverse=q.get("direction", "desc") == "desc")
        return self._page(items, lambda i: self._pull_json(repo, i))

    def create_pull(self, repo: str) -> Answer:
        self._repo(repo)
        head, base = str(self.body.get("head") or ""), str(self.body.get("base") or "")
        owner, _, ref = head.rpartition(":")
        owner = owner or repo.split("/")[0]
        network = {repo, *(r for r, rec in self.state.repos.items() if rec.parent == repo)}
        head_repo = next((r for r in sorted(network) if r.split("/")[0] == owner), None)
        invalid = [{"resource": "PullRequest", "field": "head", "code": "invalid"}]
        if head_repo is None or read_ref(self.fake.bare(head_repo), f"refs/heads/{ref}") is None:
            raise self._err(422, "Validation Failed", invalid)
        if read_ref(self.fake.bare(repo), f"refs/heads/{base}") is None:
            raise self._err(422, "Validation Failed", [{"resource": "PullRequest", "field": "base", "code": "invalid"}])
        label = f"{owner}:{ref}"
        for item in self.state.items[repo].values():
            if item.pull is not None and item.state == "open" and self._label(repo, item) == label \
                    and item.pull["base_ref"] == base:
                raise self._err(422, "Validation Failed", [{"resource": "PullRequest", "code": "custom",
                                                            "message": f"A pull request already exists for {label}."}])
        pull = {"id": next(self.fake._ids), "head_repo": head_repo, "head_ref": ref, "base_ref": base,
                "merged_at": None, "merge_sha": None, "head_sha": None, "merged_by": None}
        item = self._new_item(repo, str(self.body.get("title") or ""), str(self.body.get("body") or ""), [], pull)
        return 201, self._pull_json(repo, item), {}

    def get_pull(self, repo: str, n: str) -> Answer:
        return 200, self._pull_json(repo, self._item(repo, n, pull=True)), {}



def _search_terms(q: str) -> tuple[list[str], dict[str, list[str]]]:
    """A search query's free-text terms and its qualifiers (key:value), as GitHub reads them."""
    terms: list[str] = []
    qualifiers: dict[str, list[str]] = {}
    for quoted, word in re.findall(r'"([^"]*)"|(\S+)', q):
        if word and ":" in word and not word.startswith(":"):
            key, value = word.split(":", 1)
            qualifiers.setdefault(key, []).append(value)
        elif quoted or word:
            terms.append(quoted or word)
    return terms, qualifiers


def _timestamp(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
