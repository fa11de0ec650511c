"""`spec_mcp.remote_plan` / `spec_mcp.remote_tasks` (seed 001 B.3/B.4): plan or tasks written from the spec
in a published issue, returned as `artifacts` and posted on the issue as one comment.

The spec is the issue body without its `code3-meta` block. The writer is the services' SpecWriter: the
LLM-backed one only when the user opted in (CODE3_SPEC_WRITER=anthropic), the offline writer otherwise. The
comment carries a hidden marker naming the feature and the kind, so a repeat edits that comment instead of
adding another; `remote_tasks` reads the plan artifacts back from the plan comment. When the forge
rate-limits the posting, the artifacts are still returned (`posted: false`, with a warning), as the seed
suggests ("仅返回 artifacts").

Anyone who can comment on an issue can write that marker, so a marked comment counts only when the forge
says its author is the issue's sponsor (who opened it) or the identity Code3 acts as on the forge; and
Code3 edits only its own comments (another's marked comment is left alone: it posts its own). An issue
published for another feature is refused (E_PRECONDITION), never planned from its spec.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Annotated, NotRequired, TypedDict

from pydantic import ConfigDict, Field, with_config

from adapters.local_forge import parse_url
from adapters.ports import Comment, IssueRef
from domain.bounties.metadata import IssueMetadata, strip_block
from domain.errors import Code, Code3Error
from mcp_tools.declare import tool
from mcp_tools.lifecycle.specs import check_feature_id
from mcp_tools.services import Services

IssueUrl = Annotated[str, Field(description="the published issue's URL (…/owner/repo/issues/N)")]
FeatureId = Annotated[str, Field(description="feature id, NNN-slug (e.g. 003-web-ai-agent)")]
_ARTIFACT = "<!-- code3:artifact="
_FENCE = re.compile(r"`{4,}")
_FENCE_LINE = re.compile(r"\n(`{4,})(?=\n)")  # a line of backticks alone: each run is read once


@with_config(ConfigDict(extra="forbid"))
class RemoteAnswer(TypedDict):
    success: bool
    artifacts: dict[str, str]  # file name -> Markdown
    posted: bool  # the artifacts are on the issue as a comment (created, or edited on a repeat)
    warning: NotRequired[str]  # why they were not posted (e.g. the forge's rate limit)


def marker(kind: str, feature_id: str) -> str:
    return f"<!-- code3:remote-{kind}:feature={feature_id} -->"


def render_comment(kind: str, feature_id: str, artifacts: dict[str, str]) -> str:
    parts = [f"### Code3 remote {kind}: `{feature_id}`\n",
             f"Suggested {kind} artifacts, written from this issue's spec. Save them under `specs/{feature_id}/`.\n"]
    for name, text in artifacts.items():
        runs = [len(m) for m in re.findall(r"`+", text)]
        fence = "`" * max(4, max(runs, default=0) + 1)
        parts.append(f"<details><summary>{name}</summary>\n\n<!-- code3:artifact={name} -->\n{fence}markdown\n"
                     f"{text.rstrip()}\n{fence}\n\n</details>\n")
    parts.append(marker(kind, feature_id))
    return "\n".join(parts)


def read_artifacts(body: str) -> dict[str, str]:
    """The artifacts of a comment render_comment wrote: `<!-- code3:artifact=NAME -->`, a fence of four or
    more backticks with `markdown`, the text, the same fence alone on a line. Linear in the body (anyone
    can write a comment): each opening finds its closing fence in an index of the fence lines by length,
    never by scanning the rest of the body again."""
    found: dict[str, str] = {}
    closing: dict[int, list[int]] | None = None  # fence length -> where its lines begin ("\n" included)
    pos = 0
    while (opening := body.find(_ARTIFACT, pos)) >= 0:
        pos = opening + 1
        name_start = opening + len(_ARTIFACT)
        space = body.find(" ", name_start)
        fence = _FENCE.match(body, space + 5) if space > name_start and body.startswith(" -->\n", space) else None
        if fence is None or not body.startswith("markdown\n", fence.end()):
            continue
        if closing is None:
            closing = {}
            for line in _FENCE_LINE.finditer(body):
                closing.setdefault(len(line[1]), []).append(line.start())
        text_start, size = fence.end() + len("markdown\n"), fence.end() - fence.start()
        ends = closing.get(size, [])
        at = bisect_left(ends, text_start)
        if at < len(ends):
            found[body[name_start:space]] = body[text_start : ends[at]] + "\n"
            pos = ends[at] + size + 2
    return found


def _issue(s: Services, issue_url: str, feature_id: str) -> tuple[str, int, IssueRef]:
    """The issue, refused (E_PRECONDITION) when its metadata names another feature."""
    repo, kind, number = parse_url(issue_url)
    if kind != "issues":
        raise Code3Error(Code.VALIDATION, f"{issue_url} is a pull request, not an issue", "pass the issue's URL")
    check_feature_id(feature_id)
    issue = s.forge.get_issue(repo, number)
    try:
        meta = IssueMetadata.from_body(issue.body or "")
    except ValueError:  # a damaged block names no feature
        meta = None
    if meta is not None and meta.feature_id != feature_id:
        raise Code3Error(Code.PRECONDITION, f"{repo}#{number} is published for feature {meta.feature_id}, "
                         f"not {feature_id}", f"pass feature_id {meta.feature_id}, or the issue of {feature_id}")
    return repo, number, issue


def _same_login(a: str, b: str) -> bool:
    return bool(a) and a.lower() == b.lower()  # forge logins are case-insensitive


def _marked(s: Services, repo: str, issue: IssueRef, tag: str, own_only: bool) -> Comment | None:
    """The latest comment carrying `tag` written by Code3's own forge identity or (unless `own_only`) by the
    issue's sponsor; a stranger's marked comment is never taken for the plan."""
    trusted = [s.forge.actor] if own_only else [s.forge.actor, issue.author]
    found = [c for c in s.forge.list_comments(repo, issue.number)
             if tag in c.body and any(_same_login(c.author, who) for who in trusted)]
    return found[-1] if found else None


def _post(s: Services, repo: str, issue: IssueRef, kind: str, feature_id: str, artifacts: dict[str, str],
          answer: RemoteAnswer) -> RemoteAnswer:
    body = render_comment(kind, feature_id, artifacts)
    tag = marker(kind, feature_id)
    try:
        existing = _marked(s, repo, issue, tag, own_only=True)
        if existing is None:
            s.forge.create_comment(repo, issue.number, body)
        elif existing.body != body:
            s.forge.edit_comment(repo, existing.id, body)
    except Code3Error as exc:
        if exc.code != Code.GH_RATE_LIMIT:
            raise
        return {**answer, "posted": False, "warning": f"{exc.code.value}: {exc.message} — the artifacts are "
                "returned for the caller to save; call again later to post them"}
    return {**answer, "posted": True}


@tool("spec_mcp.remote_plan", profiles=("client-remote",), open_world=True)
def remote_plan(s: Services, issue_url: IssueUrl, feature_id: FeatureId) -> RemoteAnswer:
    """Write plan artifacts (plan.md, research.md, data-model.md, contracts/, quickstart.md) from an issue's spec.

    They are returned and posted on the issue as one comment (edited, not duplicated, on a repeat).
    E_PRECONDITION when the issue carries no spec; E_GH_RATE_LIMIT when the forge rate-limits reading it.
    """
    repo, number, issue = _issue(s, issue_url, feature_id)
    spec_md = strip_block(issue.body or "").strip()
    if not spec_md:
        raise Code3Error(Code.PRECONDITION, f"{repo}#{number} carries no spec (its body is empty apart from metadata)",
                         "write the spec locally (spec_mcp.specify) and publish it, or restore it from an attachment")
    artifacts = s.writer.plan(feature_id, spec_md + "\n", None)
    return _post(s, repo, issue, "plan", feature_id, artifacts, {"success": True, "artifacts": artifacts,
                                                                 "posted": False})


@tool("spec_mcp.remote_tasks", profiles=("client-remote",), open_world=True)
def remote_tasks(s: Services, issue_url: IssueUrl, feature_id: FeatureId) -> RemoteAnswer:
    """Write tasks.md from the plan artifacts posted on an issue by spec_mcp.remote_plan.

    Returned and posted as one comment (edited on a repeat). E_PRECONDITION when the issue has no plan comment
    by its sponsor or by Code3's own forge identity.
    """
    repo, number, issue = _issue(s, issue_url, feature_id)
    plan = _marked(s, repo, issue, marker("plan", feature_id), own_only=False)
    artifacts = read_artifacts(plan.body) if plan is not None else {}
    missing = [name for name in ("plan.md", "research.md", "data-model.md", "quickstart.md") if name not in artifacts]
    if missing:
        raise Code3Error(Code.PRECONDITION, f"{repo}#{number} has no complete plan for {feature_id} "
                         f"(missing {', '.join(missing)})", "run spec_mcp.remote_plan first (先补全 /plan 产物)")
    tasks_md = s.writer.tasks(feature_id, artifacts)
    result = {"tasks.md": tasks_md}
    return _post(s, repo, issue, "tasks", feature_id, result, {"success": True, "artifacts": result, "posted": False})
