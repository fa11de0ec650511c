"""A loopback GitHub: the REST API under /api/v3 (as GitHub Enterprise serves it) and git smart HTTP at the root.

State lives in memory; every repository is a real bare git repository served by `git http-backend`, so
clone, push and merge are real git. Tests can make the next requests fail as GitHub does (rate limits,
5xx, 404) and read a log of every request. Tokens map to users; a wrong token gets 401.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from adapters.git import git, init_bare, merge_branch
from tests.fakes.github_payloads import JSON, Payloads

API = "/api/v3"
CONTROL = "/_control/"  # a maintainer's clicks and the state dump of the standalone stand-in
ISSUES = re.compile(r"^/repos/[^/]+/[^/]+/issues$")  # where issues are created (POST)
GIT_PATH = re.compile(r"^/(?P<repo>[\w.-]+/[\w.-]+?)(?:\.git)?/(?P<rest>info/refs|git-upload-pack|git-receive-pack)$")


@dataclass(frozen=True)
class Logged:
    method: str
    path: str
    status: int
    kind: str  # "api" or "git"


@dataclass
class Failure:
    status: int
    headers: dict[str, str]
    body: JSON | None
    after_commit: bool
    kind: str


@dataclass
class Repo:
    id: int
    full_name: str
    parent: str | None
    created: float
    default_branch: str = "main"


@dataclass
class Item:
    """An issue, or a pull request (GitHub numbers both in one sequence per repository)."""

    id: int
    number: int
    title: str
    body: str
    labels: list[str]
    author: str
    created: float
    updated: float
    state: str = "open"
    closed: float | None = None
    pull: dict[str, Any] | None = None  # head_repo, head_ref, base_ref, id, merged_at, merge_sha, head_sha, merged_by


@dataclass
class CommentRec:
    id: int
    repo: str
    number: int
    body: str
    author: str
    created: float
    updated: float


@dataclass
class IssueHold:
    """`FakeGitHub.hold_issue_creation`'s knob: how long an issue creation waits, what ends the wait early, and
    whether a creation is waiting now."""

    seconds: float
    release: threading.Event = field(default_factory=threading.Event)
    entered: threading.Event = field(default_factory=threading.Event)


class HttpError(Exception):
    def __init__(self, status: int, message: str, errors: list[JSON] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.errors = status, message, errors


@dataclass
class _State:
    repos: dict[str, Repo] = field(default_factory=dict)
    items: dict[str, dict[int, Item]] = field(default_factory=dict)
    comments: dict[int, CommentRec] = field(default_factory=dict)
    labels: dict[tuple[str, str], int] = field(default_factory=dict)


class FakeGitHub:
    """Start with `with FakeGitHub(tokens={"tok": "alice"}) as gh:`; `gh.api_url` goes to GitHubForge."""

    def __init__(self, root: Path | None = None, tokens: dict[str, str] | None = None, port: int = 0) -> None:
        self._tmp = None if root else tempfile.TemporaryDirectory(prefix="fake-github-")
        self.root = Path(root or self._tmp.name)  # type: ignore[union-attr]
        self.git_root = self.root / "git"
        self.git_root.mkdir(parents=True, exist_ok=True)
        self.tokens = dict(tokens or {"test-token": "alice"})
        self.requests: list[Logged] = []
        self.state = _State()
        self._failures: list[Failure] = []
        self._lock = threading.RLock()
        self._ids = itertools.count(1000)
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._httpd.daemon_threads = True
        self.web_url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self.api_url = self.web_url + API
        self.payloads = Payloads(self.api_url, self.web_url)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), name="fake-github",
                                        daemon=True)
        self._thread.start()

    def __enter__(self) -> FakeGitHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        if self._tmp is not None:
            self._tmp.cleanup()

    # --- knobs for tests --------------------------------------------------------------------

    def fail_next(self, count: int = 1, status: int = 500, headers: dict[str, str] | None = None,
                  body: JSON | None = None, after_commit: bool = False, kind: str = "api") -> None:
        """Answer the next `count` requests with `status`; with `after_commit`, only after doing the work."""
        default = Payloads.error(status, {404: "Not Found", 502: "Bad Gateway"}.get(status, "Server Error"))
        with self._lock:
            self._failures += [Failure(status, dict(headers or {}), body or default, after_commit, kind)
                               for _ in range(count)]

    def hold_issue_creation(self, seconds: float) -> IssueHold:
        """A slow GitHub: every issue creation waits `seconds` (or until `release` is set) before it is made and
        answered, outside the stand-in's lock, so its other requests go on meanwhile; `entered` is set once one
        waits."""
        self._issue_hold = IssueHold(seconds)
        return self._issue_hold

    def wait_if_held(self, method: str, path: str) -> None:
        hold = getattr(self, "_issue_hold", None)
        if hold is not None and method == "POST" and ISSUES.match(path):
            hold.entered.set()
            hold.release.wait(hold.seconds)

    def rate_limit_next(self, count: int = 1, reset_in: int | None = None, retry_after: int | None = None,
                        status: int = 403) -> None:
        """Primary (`x-ratelimit-remaining: 0` + reset) or secondary (`Retry-After`) rate limit answers."""
        headers = {"x-ratelimit-limit": "5000", "x-ratelimit-used": "5000", "x-ratelimit-resource": "core"}
        if reset_in is not None:
            headers |= {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + reset_in)}
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        message = ("API rate limit exceeded for user ID 100." if retry_after is None else
                   "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.")
        self.fail_next(count, status, headers, Payloads.error(status, message))

    def api_requests(self) -> list[tuple[str, str, int]]:
        return [(r.method, r.path, r.status) for r in self.requests if r.kind == "api"]

    # --- repositories, merges ---------------------------------------------------------------

    def bare(self, repo: str) -> Path:
        return self.git_root / f"{repo}.git"

    def create_repo(self, repo: str, readme: str = "") -> str:
        """A repository with one commit on `main` (an existing one is kept)."""
        with self._lock:
            if repo in self.state.repos:
                return f"{self.web_url}/{repo}"
            init_bare(self.bare(repo), readme or f"# {repo}\n")
            self._register(repo, None)
        return f"{self.web_url}/{repo}"

    def _register(self, repo: str, parent: str | None) -> Repo:
        git("config", "http.receivepack", "true", cwd=self.bare(repo))
        record = Repo(next(self._ids), repo, parent, time.time())
        self.state.repos[repo] = record
        self.state.items[repo] = {}
        return record

    def merge_pr(self, repo: str, number: int, by: str | None = None) -> str:
        """Merge a PR into its base with a real `git merge --no-ff` in the bare repository (the maintainer's click)."""
        with self._lock:
            item = self.state.items[repo][number]
            pull = item.pull
            assert pull is not None and item.state == "open", f"{repo}#{number} is not an open pull request"
            sha, head_sha = merge_branch(self.bare(repo), pull["base_ref"], self.bare(pull["head_repo"]),
                                         pull["head_ref"], f"Merge pull request #{number}")
            now = time.time()
            pull |= {"merged_at": now, "merge_sha": sha, "head_sha": head_sha, "merged_by": by or repo.split("/")[0]}
            item.state, item.closed, item.updated = "closed", now, now
            return sha

    def merge_pr_at(self, url: str, by: str | None = None) -> str:
        """`merge_pr` by the PR's web URL (what LocalForge.merge_pr takes), for tests run over both forges."""
        match = re.match(rf"^{re.escape(self.web_url)}/(?P<repo>[^/]+/[^/]+)/pull/(?P<n>\d+)$", url)
        assert match, f"not a pull request URL of this stand-in: {url}"
        return self.merge_pr(match["repo"], int(match["n"]), by)

    # --- request handling (called from the handler threads) -------------------------------------

    def take_failure(self, kind: str) -> Failure | None:
        with self._lock:
            for i, failure in enumerate(self._failures):
                if failure.kind == kind:
                    return self._failures.pop(i)
        return None

    def log(self, entry: Logged) -> None:
        with self._lock:
            self.requests.append(entry)

    def login_for(self, authorization: str) -> str | None:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() in ("token", "bearer"):
            return self.tokens.get(value.strip())
        if scheme.lower() == "basic":
            try:
                _user, _, password = base64.b64decode(value).decode().partition(":")
            except ValueError:
                return None
            return self.tokens.get(password)
        return None

    def api(self, method: str, path: str, query: dict[str, str], body: Any, login: str | None
            ) -> tuple[int, Any, dict[str, str]]:
        if login is None:
            raise HttpError(401, "Bad credentials")
        from tests.fakes.github_routes import route

        with self._lock:
            return route(self, method, path, query, body, login)

    def git_backend(self, method: str, repo: str, rest: str, query: str, headers: Any, body: bytes,
                    login: str | None) -> tuple[int, dict[str, str], bytes]:
        """Run `git http-backend` as a CGI for one request, after the checks GitHub makes."""
        if login is None:
            return 401, {"WWW-Authenticate": 'Basic realm="GitHub"'}, b"Invalid username or token.\n"
        if repo not in self.state.repos:
            return 404, {}, b"Repository not found.\n"
        pushing = rest == "git-receive-pack" or "service=git-receive-pack" in query
        if pushing and repo.split("/")[0] != login:
            return 403, {}, f"Permission to {repo}.git denied to {login}.\n".encode()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.root), "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_PROJECT_ROOT": str(self.git_root), "GIT_HTTP_EXPORT_ALL": "1",
               "PATH_INFO": f"/{repo}.git/{rest}", "REQUEST_METHOD": method, "QUERY_STRING": query,
               "CONTENT_TYPE": headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
               "REMOTE_USER": login, "REMOTE_ADDR": "127.0.0.1"}
        if headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = headers["Content-Encoding"]
        if headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = headers["Git-Protocol"]
        proc = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=False)
        cuts = [(i, len(sep)) for sep in (b"\r\n\r\n", b"\n\n") if (i := proc.stdout.find(sep)) >= 0]
        if not cuts:
            return 500, {}, proc.stderr
        at, width = min(cuts)
        head, payload = proc.stdout[:at], proc.stdout[at + width:]
        status, out = 200, {}
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                out[name.strip()] = value.strip()
        return status, out, payload


class _Handler(BaseHTTPRequestHandler):
    fake: FakeGitHub
    server_version = "GitHub.com"
    protocol_version = "HTTP/1.1"  # keep-alive, as GitHub: the client's connection pool gets exercised

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read FakeGitHub.requests
        pass

    def do_GET(self) -> None:
        try:
            self._handle()
        except Exception as exc:  # a bug in the stand-in: answer 500 and say what, rather than drop the socket
            self._send(500, {"Content-Type": "text/plain"}, f"stand-in error: {exc!r}".encode())
            raise

    do_POST = do_PATCH = do_PUT = do_DELETE = do_GET

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _handle(self) -> None:
        url = urlsplit(self.path)
        kind = "api" if url.path == API or url.path.startswith(API + "/") else "git"
        body = self._read_body()
        if url.path.startswith(CONTROL):  # the operator's side, no GitHub API (tests/fakes/github_control.py)
            from tests.fakes.github_control import control

            status, answer = control(self.fake, self.command, url.path[len(CONTROL):], body)
            self._send(status, {"Content-Type": "application/json"}, json.dumps(answer).encode())
            return
        failure = self.fake.take_failure(kind)
        if failure is not None and not failure.after_commit:
            self._fail(url.path, kind, failure)
            return
        login = self.fake.login_for(self.headers.get("Authorization", ""))
        if kind == "git":
            match = GIT_PATH.match(url.path)
            if not match:
                status, headers, raw = 404, {}, b"Not Found\n"
            else:
                status, headers, raw = self.fake.git_backend(self.command, match["repo"], match["rest"], url.query,
                                                             self.headers, body, login)
        else:
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            self.fake.wait_if_held(self.command, url.path[len(API):])
            try:
                data = json.loads(body) if body.strip() else None
                status, payload, headers = self.fake.api(self.command, url.path[len(API):] or "/", query, data,
                                                         login)
            except HttpError as exc:
                status, payload, headers = exc.status, Payloads.error(exc.status, exc.message, exc.errors), {}
            raw = b"" if status == 204 else json.dumps(payload).encode()
            headers = {"Content-Type": "application/json; charset=utf-8", "x-ratelimit-limit": "5000",
                       "x-ratelimit-remaining": "4999", "x-ratelimit-reset": str(int(time.time()) + 3600),
                       "x-ratelimit-used": "1", "x-ratelimit-resource": "core", **headers}
        if failure is not None:  # the work is done, but the answer is lost
            self._fail(url.path, kind, failure)
            return
        self.fake.log(Logged(self.command, url.path, status, kind))  # before answering: the client may count at once
        self._send(status, headers, raw)

    def _fail(self, path: str, kind: str, failure: Failure) -> None:
        raw = json.dumps(failure.body).encode()
        self.fake.log(Logged(self.command, path, failure.status, kind))
        self._send(failure.status, {"Content-Type": "application/json; charset=utf-8", **failure.headers}, raw)

    def _send(self, status: int, headers: dict[str, str], raw: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in ("content-length", "connection"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(raw)


def github_forge(tmp_path: Path) -> Iterator[tuple[Any, Callable[[str], Any]]]:
    """The port contract's factory: a GitHubForge acting as alice (looked up from the token) on a fresh stand-in
    (`contract-token-bob` acts as bob there)."""
    from adapters.github import GitHubForge

    with FakeGitHub(tmp_path / "github", tokens={"contract-token": "alice", "contract-token-bob": "bob"}) as server:
        forge = GitHubForge("contract-token", base_url=server.api_url, sleep=lambda _s: None)
        yield forge, server.create_repo
        forge.close()


if __name__ == "__main__":
    from tests.fakes.github_control import main

    main()
