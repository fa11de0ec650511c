"""Webhook payloads shaped as GitHub's, for the embedded forge's deliveries.

Only the shape matters to a receiver; the values are the embedded forge's own.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from adapters.ports import PullRequest


def _id(name: str) -> int:
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)


def _user(login: str, base_url: str, user_id: int = 0) -> dict[str, Any]:
    return {"login": login, "id": user_id or _id(login), "node_id": f"U_{login}", "type": "User",
            "site_admin": False, "html_url": f"{base_url}/{login}", "url": f"{base_url}/users/{login}"}


def _repo(full_name: str, base_url: str, repo_id: int = 0, default_branch: str = "main") -> dict[str, Any]:
    owner, name = full_name.split("/", 1)
    return {"id": repo_id or _id(full_name), "node_id": f"R_{full_name}", "name": name, "full_name": full_name,
            "private": False, "owner": _user(owner, base_url), "html_url": f"{base_url}/{full_name}",
            "default_branch": default_branch, "fork": False}


def pull_request_event(pr: PullRequest, base_url: str, sender: str, action: str = "closed") -> dict[str, Any]:
    """A `pull_request` event as GitHub sends it when a PR is closed (by a merge, or not); the base repository and
    the author carry the forge's own ids, as GitHub's do."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    head_repo, head_ref = pr.head.split(":", 1)
    return {
        "action": action,
        "number": pr.number,
        "pull_request": {
            "url": f"{base_url}/repos/{pr.repo}/pulls/{pr.number}", "id": pr.number, "node_id": f"PR_{pr.number}",
            "html_url": pr.url, "number": pr.number, "state": pr.state, "locked": False, "title": pr.title,
            "user": _user(pr.author, base_url, pr.author_id), "body": "", "created_at": now, "updated_at": now,
            "closed_at": now,
            "merged_at": now if pr.merged else None, "merge_commit_sha": pr.merge_sha, "draft": False,
            "head": {"label": f"{head_repo.split('/')[0]}:{head_ref}", "ref": head_ref, "sha": pr.head_sha,
                     "user": _user(head_repo.split("/")[0], base_url), "repo": _repo(head_repo, base_url)},
            "base": {"label": f"{pr.repo.split('/')[0]}:{pr.base}", "ref": pr.base, "sha": pr.merge_sha,
                     "user": _user(pr.repo.split("/")[0], base_url),
                     "repo": _repo(pr.repo, base_url, pr.repo_id, pr.default_branch)},
            "merged": pr.merged, "mergeable": None, "merged_by": _user(sender, base_url), "comments": 0,
            "commits": 1, "additions": 0, "deletions": 0, "changed_files": 0,
        },
        "repository": _repo(pr.repo, base_url, pr.repo_id, pr.default_branch),
        "sender": _user(sender, base_url),
    }
