"""`spec_mcp.remote_plan` / `spec_mcp.remote_tasks` (seed 001 B.3/B.4): plan or tasks written from the spec
in a published issue, returned as `artifacts` and posted on the issue as one comment.

The spec is the issue body without its `code3-meta` block. The writer is the services' SpecWriter: the
LLM-backed one with ANTHROPIC_API_KEY, the offline writer without. The comment carries a hidden marker
naming the feature and the kind, so a repeat edits that comment instead of adding another; `remote_tasks`
reads the plan artifacts back from the plan comment. When the forge rate-limits the posting, the artifacts
are still returned (`posted: false`, with a warning), as the seed suggests ("仅返回 artifacts").
"""

from __future__ import annotations

import re
from typing import Annotated, NotRequired, TypedDict

from pydantic import ConfigDict, Field, with_config

from adapters.local_forge import parse_url
from domain.errors import Code, Code3Error
from domain.metadata import strip_block
from mcp_tools.declare import tool
from mcp_tools.lifecycle.specs import check_feature_id
from mcp_tools.services import Services

IssueUrl = Annotated[str, Field(description="the published issue's URL (…/owner/repo/issues/N)")]
FeatureId = Annotated[str, Field(description="feature id, NNN-slug (e.g. 003-web-ai-agent)")]
_ARTIFACT = re.compile(r"<!-- code3:artifact=(?P<name>[^ ]+) -->\n(?P<fence>`{4,})markdown\n"
                       r"(?P<text>.*?)\n(?P=fence)\n", re.DOTALL)


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
    return {m["name"]: m["text"] + "\n" for m in _ARTIFACT.finditer(body)}


def _issue(s: Services, issue_url: str, feature_id: str) -> tuple[str, int, str]:
    repo, kind, number = parse_url(issue_url)
    if kind != "issues":
        raise Code3Error(Code.VALIDATION, f"{issue_url} is a pull request, not an issue", "pass the issue's URL")
    check_feature_id(feature_id)
    issue = s.forge.get_issue(repo, number)
    return repo, number, issue.body or ""


def _post(s: Services, repo: str, number: int, kind: str, feature_id: str, artifacts: dict[str, str],
          answer: RemoteAnswer) -> RemoteAnswer:
    body = render_comment(kind, feature_id, artifacts)
    tag = marker(kind, feature_id)
    try:
        existing = next((c for c in s.forge.list_comments(repo, number) if tag in c.body), None)
        if existing is None:
            s.forge.create_comment(repo, number, body)
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
    repo, number, body = _issue(s, issue_url, feature_id)
    spec_md = strip_block(body).strip()
    if not spec_md:
        raise Code3Error(Code.PRECONDITION, f"{repo}#{number} carries no spec (its body is empty apart from metadata)",
                         "write the spec locally (spec_mcp.specify) and publish it, or restore it from an attachment")
    artifacts = s.writer.plan(feature_id, spec_md + "\n", None)
    return _post(s, repo, number, "plan", feature_id, artifacts, {"success": True, "artifacts": artifacts,
                                                                  "posted": False})


@tool("spec_mcp.remote_tasks", profiles=("client-remote",), open_world=True)
def remote_tasks(s: Services, issue_url: IssueUrl, feature_id: FeatureId) -> RemoteAnswer:
    """Write tasks.md from the plan artifacts posted on an issue by spec_mcp.remote_plan.

    Returned and posted as one comment (edited on a repeat). E_PRECONDITION when the issue has no plan comment.
    """
    repo, number, _body = _issue(s, issue_url, feature_id)
    tag = marker("plan", feature_id)
    plan = next((c for c in s.forge.list_comments(repo, number) if tag in c.body), None)
    artifacts = read_artifacts(plan.body) if plan is not None else {}
    missing = [name for name in ("plan.md", "research.md", "data-model.md", "quickstart.md") if name not in artifacts]
    if missing:
        raise Code3Error(Code.PRECONDITION, f"{repo}#{number} has no complete plan for {feature_id} "
                         f"(missing {', '.join(missing)})", "run spec_mcp.remote_plan first (先补全 /plan 产物)")
    tasks_md = s.writer.tasks(feature_id, artifacts)
    result = {"tasks.md": tasks_md}
    return _post(s, repo, number, "tasks", feature_id, result, {"success": True, "artifacts": result, "posted": False})
