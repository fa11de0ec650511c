"""The GitHub stand-in as a process of its own (`python -m tests.fakes.github_server`), and the operator's routes
it answers under /_control/: what a maintainer does in GitHub's web page and what a test reads back.

A topology test (tests/campaigns/topology.py) runs serves and workers as separate processes, so the stand-in
cannot be driven in-process there. Its routes:

- `POST /_control/repos {"repo"}`: create a repository (one commit on main).
- `PUT /_control/hooks {"urls": [...]}`: where the repository webhook delivers (the secret comes from
  GITHUB_WEBHOOK_SECRET in the stand-in's environment, never from a request or an argument).
- `POST /_control/merge {"url", "by"}`: the maintainer's merge button: a real `git merge --no-ff`, the PR marked
  merged, then the signed `pull_request` closed+merged delivery, as GitHub sends it, to one hook URL that answers
  (the others stand for the load balancer's other targets: tried in a random order until one takes it). Merging
  a merged PR again answers `already` and delivers nothing, as GitHub's disabled button does.
- `GET /_control/state`: every repository's issues and PRs with labels, state and comments, and every delivery.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import random
import re
import signal
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from tests.fakes.github_server import FakeGitHub

PR_URL = re.compile(r"^https?://[^/]+/(?P<repo>[\w.-]+/[\w.-]+)/pull/(?P<n>\d+)$")


def control(fake: FakeGitHub, method: str, path: str, raw: bytes) -> tuple[int, Any]:
    try:
        body = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return 400, {"message": "not JSON"}
    routes = {("POST", "repos"): _create_repo, ("PUT", "hooks"): _hooks, ("POST", "merge"): _merge,
              ("GET", "state"): _state}
    handler = routes.get((method, path.strip("/")))
    if handler is None:
        return 404, {"message": f"no control route {method} {path}"}
    return handler(fake, body)


def _create_repo(fake: FakeGitHub, body: dict[str, Any]) -> tuple[int, Any]:
    return 201, {"url": fake.create_repo(str(body["repo"]))}


def _hooks(fake: FakeGitHub, body: dict[str, Any]) -> tuple[int, Any]:
    with fake._lock:
        fake.hook_urls = [str(u) for u in body.get("urls", [])]  # type: ignore[attr-defined]
    return 200, {"urls": fake.hook_urls}  # type: ignore[attr-defined]


def _merge(fake: FakeGitHub, body: dict[str, Any]) -> tuple[int, Any]:
    from tests.fakes.github_routes import route

    match = PR_URL.match(str(body.get("url", "")))
    if not match:
        return 422, {"message": f"not a pull request URL: {body.get('url')!r}"}
    repo, number = match["repo"], int(match["n"])
    with fake._lock:
        item = fake.state.items.get(repo, {}).get(number)
        if item is None or item.pull is None:
            return 404, {"message": f"no pull request {repo}#{number}"}
        if item.pull["merged_at"] is not None:
            return 200, {"merged": True, "already": True, "sha": item.pull["merge_sha"], "delivery": None}
        if item.state != "open":
            return 409, {"message": f"{repo}#{number} is closed without a merge"}
        by = str(body.get("by") or repo.split("/")[0])
        sha = fake.merge_pr(repo, number, by)
        payload = {"action": "closed", "number": number,
                   "pull_request": route(fake, "GET", f"/repos/{repo}/pulls/{number}", {}, None, by)[1],
                   "repository": route(fake, "GET", f"/repos/{repo}", {}, None, by)[1],
                   "sender": fake.payloads.user(by)}
    return 200, {"merged": True, "already": False, "sha": sha, "delivery": deliver(fake, "pull_request", payload)}


def deliver(fake: FakeGitHub, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """One signed delivery (GitHub's headers), to the first hook URL that answers; recorded either way."""
    secret = os.environ.get("GITHUB_WEBHOOK_SECRET", "").encode()
    raw = json.dumps(payload).encode()
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": str(uuid.uuid4()), "User-Agent": "GitHub-Hookshot/code3",
               "Content-Type": "application/json",
               "X-Hub-Signature-256": "sha256=" + hmac.new(secret, raw, hashlib.sha256).hexdigest()}
    urls = list(getattr(fake, "hook_urls", []))
    random.shuffle(urls)
    record: dict[str, Any] = {"id": headers["X-GitHub-Delivery"], "event": event, "url": None, "status": None,
                              "tried": []}
    for url in urls:
        try:
            answer = httpx.post(url, content=raw, headers=headers, timeout=60)
        except httpx.HTTPError as exc:
            record["tried"].append({"url": url, "error": type(exc).__name__})
            continue
        record["tried"].append({"url": url, "status": answer.status_code})
        record["url"], record["status"] = url, answer.status_code
        if answer.status_code < 500:
            break
    with fake._lock:
        fake.deliveries = [*getattr(fake, "deliveries", []), record]  # type: ignore[attr-defined]
    return record


def _state(fake: FakeGitHub, _body: dict[str, Any]) -> tuple[int, Any]:
    with fake._lock:
        repos = {}
        for repo, items in fake.state.items.items():
            comments: dict[int, list[dict[str, Any]]] = {}
            for c in sorted(fake.state.comments.values(), key=lambda c: c.id):
                if c.repo == repo:
                    comments.setdefault(c.number, []).append({"id": c.id, "body": c.body, "author": c.author})
            repos[repo] = {str(n): {"title": i.title, "state": i.state, "labels": list(i.labels), "author": i.author,
                                    "pull": None if i.pull is None else {
                                        "merged": i.pull["merged_at"] is not None, "head_repo": i.pull["head_repo"],
                                        "url": f"{fake.web_url}/{repo}/pull/{n}"},
                                    "comments": comments.get(n, [])}
                           for n, i in items.items()}
        return 200, {"repos": repos, "deliveries": list(getattr(fake, "deliveries", []))}


def main() -> None:
    from tests.fakes.github_server import FakeGitHub

    parser = argparse.ArgumentParser(prog="python -m tests.fakes.github_server",
                                     description="the GitHub stand-in as a process: prints its URLs, runs until "
                                                 "SIGTERM; the webhook secret comes from GITHUB_WEBHOOK_SECRET")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--state", type=Path, required=True, help="directory of its bare git repositories")
    parser.add_argument("--token", action="append", default=[], metavar="TOKEN=LOGIN")
    parser.add_argument("--hook", action="append", default=[], metavar="URL")
    parser.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME")
    args = parser.parse_args()
    tokens = dict(item.split("=", 1) for item in args.token)
    fake = FakeGitHub(args.state, tokens=tokens, port=args.port)
    fake.hook_urls = list(args.hook)  # type: ignore[attr-defined]
    for repo in args.repo:
        fake.create_repo(repo)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(json.dumps({"api_url": fake.api_url, "web_url": fake.web_url, "pid": os.getpid()}), flush=True)
    while not stop.wait(0.5):
        pass
    fake.close()
