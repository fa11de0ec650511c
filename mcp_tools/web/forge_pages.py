"""The embedded forge's issues and pull requests, served by the page itself, so its `local://forge/…` links open.

`page_href` turns an address from the log into a link a browser can follow: an embedded forge's issue or PR becomes
`/forge/<owner>/<repo>/issues/<n>` or `/forge/<owner>/<repo>/pull/<n>` on this serve; a web address (GitHub's) stays
as it is; anything else (a worker signs any text as a PR URL) is shown, not linked. The two routes read through
the forge port (title, body, author, state, comments) and, for a PR, its description and diff from the embedded
forge's own files (the port has neither: `LocalForge` keeps the body in its table and the commits in bare git
repositories). Everything on these pages was written by someone else: bodies and comments are rendered as
sanitised Markdown (`markdown.render`), each comment says whose words it is (the issue's author or not), and the
diff is shown as text with credentials redacted as the tools redact them (`adapters.redact`, then the scrubber's
exact secrets). Behind the web gate like every page; the owner, repository and number are checked before any read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from mcp_tools.web.render import page

WEB_SCHEMES = ("https://", "http://")
NUMBER = re.compile(r"[1-9][0-9]{0,8}")
SHA = re.compile(r"[0-9a-f]{7,64}")
MAX_DIFF = 512 * 1024  # a diff past this is cut, and the page says so
KINDS = {"issues": "issue", "pull": "pull request"}


class NotOnThisForge(Exception):
    pass


def page_href(url: Any) -> str | None:
    """A link a browser can open for `url` from the log: this serve's page for an embedded forge's issue or PR, the
    address itself for a web one, None for anything else (shown as text)."""
    from domain.errors import Code3Error
    from domain.values import parse_forge_url

    text = str(url or "")
    if not text or any(c.isspace() or ord(c) < 32 for c in text):
        return None
    if text.startswith("local://"):
        try:
            found = parse_forge_url(text)
        except Code3Error:
            return None
        return f"/forge/{found.repo}/{found.kind}/{found.number}"
    return text if text.lower().startswith(WEB_SCHEMES) else None


def is_local(forge: Any) -> bool:
    from adapters.local_forge import LocalForge

    return isinstance(forge, LocalForge)


def _checked(owner: str, repo: str, number: str) -> tuple[str, int]:
    from domain.errors import Code3Error
    from domain.values import parse_repo

    try:
        name = str(parse_repo(f"{owner}/{repo}"))
    except Code3Error:
        raise NotOnThisForge(f"{owner[:40]}/{repo[:100]} is not a repository name (owner/name)") from None
    if not NUMBER.fullmatch(number):
        raise NotOnThisForge(f"{number[:20]!r} is not an issue or pull request number")
    return name, int(number)


def comments_of(s: Any, repo: str, number: int, author: str) -> list[dict[str, Any]]:
    """The comments, oldest first, each with its author and whether that is the issue's author (whose words the
    page's reader would otherwise take them for)."""
    from mcp_tools.web.markdown import render

    return [{"id": c.id, "author": c.author, "by_author": c.author == author, "edited": c.edited,
             "html": render(c.body)} for c in s.forge.list_comments(repo, number)]


def read_issue(s: Any, repo: str, number: int) -> dict[str, Any]:
    from domain.bounties.metadata import strip_block
    from domain.errors import Code, Code3Error
    from mcp_tools.web.markdown import render

    if not is_local(s.forge):
        raise NotOnThisForge("this serve's forge is not the embedded one: its issues are on the forge's own site")
    try:
        issue = s.forge.get_issue(repo, number)
    except Code3Error as exc:
        if exc.code is Code.NOT_FOUND:
            raise NotOnThisForge(f"the embedded forge has no issue {repo}#{number}") from None
        raise
    return {"kind": "issues", "repo": repo, "number": number, "title": issue.title, "author": issue.author,
            "state": issue.state, "labels": issue.labels, "body": render(strip_block(issue.body)),
            "comments": comments_of(s, repo, number, issue.author), "pr": None}


def read_pull(s: Any, repo: str, number: int) -> dict[str, Any]:
    from mcp_tools.web.markdown import render

    if not is_local(s.forge):
        raise NotOnThisForge("this serve's forge is not the embedded one: its pull requests are on the forge's own "
                             "site")
    pr = s.forge.find_pr(repo, number)
    if pr is None:
        raise NotOnThisForge(f"the embedded forge has no pull request {repo}#{number}")
    diff, cut = pr_diff(s.forge, pr)
    return {"kind": "pull", "repo": repo, "number": number, "title": pr.title, "author": pr.author,
            "state": "merged" if pr.merged else pr.state, "labels": [], "body": render(_pr_body(s.forge, pr)),
            "comments": comments_of(s, repo, number, pr.author),
            "pr": {"head": pr.head, "base": pr.base, "head_sha": pr.head_sha[:12], "diff": diff, "cut": cut}}


def _pr_body(forge: Any, pr: Any) -> str:
    """The PR's description, from the embedded forge's table (the port's `PullRequest` does not carry it)."""
    with forge.db.statement() as db:
        row = db.execute("SELECT body FROM issues WHERE repo = ? AND number = ? AND is_pr = 1",
                         (pr.repo, pr.number)).fetchone()
    return str(row[0]) if row else ""


def pr_diff(forge: Any, pr: Any) -> tuple[str, bool]:
    """The PR's changes as `git diff` shows them, credentials redacted, cut at MAX_DIFF: for a merged PR what its
    merge brought to the base; for another, its head against where it left its repository's default branch (three
    dots: the fork's own history). Read-only git on the forge's bare repositories; no external diff or text
    conversion driver runs."""
    from adapters.git import GitError, git
    from adapters.redact import redact
    from adapters.scrub import scrub

    head_repo = pr.head.split(":", 1)[0] if ":" in pr.head else pr.repo
    if pr.merged and pr.merge_sha and SHA.fullmatch(pr.merge_sha):
        git_dir, spec = _git_dir(forge, pr.repo), [f"{pr.merge_sha}^1", pr.merge_sha]
    elif SHA.fullmatch(pr.head_sha or ""):
        git_dir, spec = _git_dir(forge, head_repo), [f"refs/heads/{pr.default_branch}...{pr.head_sha}"]
    else:
        return "", False
    try:
        raw = git(f"--git-dir={git_dir}", "diff", "--no-color", "--no-ext-diff", "--no-textconv", *spec, "--")
    except GitError:
        return "(the diff cannot be read from the embedded forge's repositories)", False
    cut = len(raw) > MAX_DIFF
    return scrub(redact(raw[:MAX_DIFF]).text), cut


def _git_dir(forge: Any, repo: str) -> Path:
    from domain.values import parse_repo

    return Path(forge.root) / "repos" / f"{parse_repo(repo)}.git"  # LocalForge's layout: root/repos/owner/name.git


def routes(web: Any) -> list[BaseRoute]:
    from mcp_tools.web.refusals import port_of, refusal

    async def forge_page(request: Request) -> Response:
        p = request.path_params
        kind = request.url.path.split("/")[4]
        try:
            repo, number = _checked(p["owner"], p["repo"], p["number"])
            reader = read_issue if kind == "issues" else read_pull
            found = await web.read(lambda s: reader(s, repo, number))
        except NotOnThisForge as exc:
            return refusal(404, f"No such {KINDS[kind]}", str(exc), port_of(request.scope))
        return page("forge_item.html", nav="", live=None, item=found, what=KINDS[kind])

    return [Route("/forge/{owner}/{repo}/issues/{number}", forge_page, methods=["GET"]),
            Route("/forge/{owner}/{repo}/pull/{number}", forge_page, methods=["GET"])]
