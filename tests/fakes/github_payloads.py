"""GitHub REST payloads, shaped field for field as GitHub sends them.

githubkit validates every response against GitHub's published schema (`resp.parsed_data`), so a thin
payload would not exercise the real client: each builder fills every field the schema requires.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

JSON = dict[str, Any]

_USER_URLS = {"followers_url": "/followers", "following_url": "/following{/other_user}",
              "gists_url": "/gists{/gist_id}", "starred_url": "/starred{/owner}{/repo}",
              "subscriptions_url": "/subscriptions", "organizations_url": "/orgs", "repos_url": "/repos",
              "events_url": "/events{/privacy}", "received_events_url": "/received_events"}
_REPO_URLS = {"archive_url": "/{archive_format}{/ref}", "assignees_url": "/assignees{/user}",
              "blobs_url": "/git/blobs{/sha}", "branches_url": "/branches{/branch}",
              "collaborators_url": "/collaborators{/collaborator}", "comments_url": "/comments{/number}",
              "commits_url": "/commits{/sha}", "compare_url": "/compare/{base}...{head}",
              "contents_url": "/contents/{+path}", "contributors_url": "/contributors",
              "deployments_url": "/deployments", "downloads_url": "/downloads", "events_url": "/events",
              "forks_url": "/forks", "git_commits_url": "/git/commits{/sha}", "git_refs_url": "/git/refs{/sha}",
              "git_tags_url": "/git/tags{/sha}", "issue_comment_url": "/issues/comments{/number}",
              "issue_events_url": "/issues/events{/number}", "issues_url": "/issues{/number}",
              "keys_url": "/keys{/key_id}", "labels_url": "/labels{/name}", "languages_url": "/languages",
              "merges_url": "/merges", "milestones_url": "/milestones{/number}",
              "notifications_url": "/notifications{?since,all,participating}", "pulls_url": "/pulls{/number}",
              "releases_url": "/releases{/id}", "stargazers_url": "/stargazers", "statuses_url": "/statuses/{sha}",
              "subscribers_url": "/subscribers", "subscription_url": "/subscription", "tags_url": "/tags",
              "teams_url": "/teams", "trees_url": "/git/trees{/sha}", "hooks_url": "/hooks"}


def iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Payloads:
    """Builds payloads for one server: `api` is its REST base URL, `web` its web/git base URL."""

    def __init__(self, api: str, web: str) -> None:
        self.api = api
        self.web = web
        self._user_ids: dict[str, int] = {}

    def user_id(self, login: str) -> int:
        return self._user_ids.setdefault(login, 100 + len(self._user_ids))

    def user(self, login: str) -> JSON:
        uid = self.user_id(login)
        url = f"{self.api}/users/{login}"
        return {"login": login, "id": uid, "node_id": f"U_{uid}", "avatar_url": f"{self.web}/avatars/{login}",
                "gravatar_id": "", "url": url, "html_url": f"{self.web}/{login}", "type": "User",
                "site_admin": False, "user_view_type": "public", **{k: url + v for k, v in _USER_URLS.items()}}

    def private_user(self, login: str, created: float) -> JSON:
        return {**self.user(login), "name": login.title(), "company": None, "blog": "", "location": None,
                "email": None, "hireable": None, "bio": None, "twitter_username": None, "public_repos": 1,
                "public_gists": 0, "followers": 0, "following": 0, "created_at": iso(created),
                "updated_at": iso(created), "private_gists": 0, "total_private_repos": 0,
                "owned_private_repos": 0, "disk_usage": 0, "collaborators": 0, "two_factor_authentication": True}

    def repository(self, rid: int, full_name: str, fork: bool, default_branch: str, created: float,
                   parent: JSON | None = None) -> JSON:
        owner, name = full_name.split("/", 1)
        url = f"{self.api}/repos/{full_name}"
        host = self.web.split("://", 1)[1]
        data = {"id": rid, "node_id": f"R_{rid}", "name": name, "full_name": full_name, "owner": self.user(owner),
                "private": False, "html_url": f"{self.web}/{full_name}", "description": None, "fork": fork,
                "url": url, **{k: url + v for k, v in _REPO_URLS.items()},
                "git_url": f"git://{host}/{full_name}.git", "ssh_url": f"git@{host}:{full_name}.git",
                "clone_url": f"{self.web}/{full_name}.git", "svn_url": f"{self.web}/{full_name}",
                "mirror_url": None, "homepage": None, "language": None, "forks_count": 0, "stargazers_count": 0,
                "watchers_count": 0, "size": 1, "default_branch": default_branch, "open_issues_count": 0,
                "is_template": False, "topics": [], "has_issues": True, "has_projects": True, "has_wiki": True,
                "has_pages": False, "has_downloads": True, "has_discussions": False, "archived": False,
                "disabled": False, "visibility": "public", "pushed_at": iso(created), "created_at": iso(created),
                "updated_at": iso(created), "allow_forking": True, "web_commit_signoff_required": False,
                "license": None, "forks": 0, "open_issues": 0, "watchers": 0, "subscribers_count": 1,
                "network_count": 0, "permissions": {"admin": True, "maintain": True, "push": True, "triage": True,
                                                    "pull": True}}
        if parent is not None:
            data["parent"] = data["source"] = parent
        return data

    def label(self, lid: int, repo: str, name: str) -> JSON:
        return {"id": lid, "node_id": f"LA_{lid}", "url": f"{self.api}/repos/{repo}/labels/{name}", "name": name,
                "description": None, "color": "ededed", "default": False, "archived_at": None,
                "archived_by": None}

    def issue(self, iid: int, repo: str, number: int, title: str, body: str, labels: list[JSON], state: str,
              author: str, comments: int, created: float, updated: float, closed: float | None,
              pull: JSON | None = None) -> JSON:
        url = f"{self.api}/repos/{repo}/issues/{number}"
        kind = "pull" if pull is not None else "issues"
        data = {"id": iid, "node_id": f"I_{iid}", "url": url, "repository_url": f"{self.api}/repos/{repo}",
                "labels_url": url + "/labels{/name}", "comments_url": url + "/comments",
                "events_url": url + "/events", "html_url": f"{self.web}/{repo}/{kind}/{number}",
                "timeline_url": url + "/timeline", "number": number, "state": state,
                "state_reason": "completed" if closed else None, "title": title, "body": body,
                "user": self.user(author), "labels": labels, "assignee": None, "assignees": [], "milestone": None,
                "locked": False, "active_lock_reason": None, "comments": comments, "created_at": iso(created),
                "updated_at": iso(updated), "closed_at": iso(closed), "author_association": "OWNER"}
        if pull is not None:
            data["pull_request"] = pull
        return data

    def comment(self, cid: int, repo: str, number: int, body: str, author: str, created: float,
                updated: float) -> JSON:
        return {"id": cid, "node_id": f"IC_{cid}", "url": f"{self.api}/repos/{repo}/issues/comments/{cid}",
                "html_url": f"{self.web}/{repo}/issues/{number}#issuecomment-{cid}", "body": body,
                "user": self.user(author), "created_at": iso(created), "updated_at": iso(updated),
                "issue_url": f"{self.api}/repos/{repo}/issues/{number}", "author_association": "OWNER"}

    def pull_ref(self, repo_json: JSON, ref: str, sha: str) -> JSON:
        owner = repo_json["owner"]["login"]
        return {"label": f"{owner}:{ref}", "ref": ref, "sha": sha, "user": self.user(owner), "repo": repo_json}

    def pull(self, pid: int, repo: str, issue: JSON, head: JSON, base: JSON, merged_at: float | None,
             merge_sha: str | None, merged_by: str | None) -> JSON:
        url = f"{self.api}/repos/{repo}/pulls/{issue['number']}"
        html = f"{self.web}/{repo}/pull/{issue['number']}"
        links = {"self": url, "html": html, "issue": issue["url"], "comments": issue["comments_url"],
                 "review_comments": url + "/comments", "review_comment": f"{self.api}/repos/{repo}/pulls/comments"
                 "{/number}", "commits": url + "/commits",
                 "statuses": f"{self.api}/repos/{repo}/statuses/{head['sha']}"}
        labels = [{k: v for k, v in label.items() if k != "archived_at"} for label in issue["labels"]]
        return {"url": url, "id": pid, "node_id": f"PR_{pid}", "html_url": html, "diff_url": html + ".diff",
                "patch_url": html + ".patch", "issue_url": issue["url"], "commits_url": links["commits"],
                "review_comments_url": links["review_comments"], "review_comment_url": links["review_comment"],
                "comments_url": issue["comments_url"], "statuses_url": links["statuses"],
                "number": issue["number"], "state": issue["state"], "locked": False, "title": issue["title"],
                "user": issue["user"], "body": issue["body"], "labels": labels, "milestone": None,
                "active_lock_reason": None, "created_at": issue["created_at"], "updated_at": issue["updated_at"],
                "closed_at": issue["closed_at"], "merged_at": iso(merged_at), "merge_commit_sha": merge_sha,
                "assignee": None, "assignees": [], "requested_reviewers": [], "requested_teams": [],
                "head": head, "base": base, "_links": {k: {"href": v} for k, v in links.items()},
                "author_association": "OWNER", "auto_merge": None, "draft": False, "merged": merged_at is not None,
                "mergeable": None if merged_at else True, "rebaseable": True,
                "mergeable_state": "unknown" if merged_at else "clean",
                "merged_by": self.user(merged_by) if merged_by else None, "comments": issue["comments"],
                "review_comments": 0, "maintainer_can_modify": False, "commits": 1, "additions": 1, "deletions": 0,
                "changed_files": 1}

    @staticmethod
    def error(status: int, message: str, errors: list[JSON] | None = None) -> JSON:
        data: JSON = {"message": message, "documentation_url": "https://docs.github.com/rest", "status": str(status)}
        if errors:
            data["errors"] = errors
        return data
