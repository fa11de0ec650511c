"""Git over smart HTTP against a GitHub host, authenticated without the token ever reaching disk or argv.

The token travels as an `http.<base>.extraHeader` set through git's GIT_CONFIG_* environment variables:
it is not in the remote URL (so not in `.git/config`), not in the command line (so not in `ps` or a
logged argv), scoped to the forge's host (a redirect elsewhere does not receive it), and scrubbed from
any error text git prints.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
from pathlib import Path

from adapters.git import AUTHOR, GitError
from adapters.private_files import GIT_UMASK
from adapters.scrub import register_secret, scrub
from domain.errors import Code, Code3Error

_AUTH_FAILED = re.compile(r"authentication failed|could not read username|returned error: 401|invalid credentials",
                          re.IGNORECASE)
_FORBIDDEN = re.compile(r"returned error: 403|permission to .* denied", re.IGNORECASE)
_NOT_FOUND = re.compile(r"repository '.*' not found|returned error: 404|not found", re.IGNORECASE)
_TRANSIENT = re.compile(r"returned error: 5\d\d|connection reset|couldn't connect|timed out|early eof|"
                        r"the remote end hung up unexpectedly", re.IGNORECASE)


class GitTransient(GitError):
    """A git-over-HTTP failure worth retrying (5xx, reset connection, a fork still being created)."""


def web_base_from_api(api_url: str) -> str:
    """The host that serves git and web pages for an API URL (api.github.com → github.com; GHE /api/v3 → host)."""
    url = api_url.rstrip("/")
    if re.match(r"^https?://api\.github\.com$", url):
        return "https://github.com"
    return re.sub(r"/api/v3$", "", url)


class GitHubGit:
    """Clones and pushes `owner/repo` at `base_url` (the web host) as the token's owner."""

    def __init__(self, token: str, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        self._secrets = [s for s in (token, basic) if s]
        register_secret(*self._secrets)
        self._auth_env = {
            "GIT_TERMINAL_PROMPT": "0",  # a refused token fails at once instead of waiting on a prompt
            "GIT_TRACE_REDACT": "1",  # should a user turn on GIT_TRACE_CURL, the header stays redacted
            "GIT_CONFIG_COUNT": "2",
            "GIT_CONFIG_KEY_0": f"http.{self.base_url}/.extraHeader",
            "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
            "GIT_CONFIG_KEY_1": "credential.helper",  # never hand the header to a credential store
            "GIT_CONFIG_VALUE_1": "",
        }

    def __repr__(self) -> str:
        return f"GitHubGit(base_url={self.base_url!r})"

    def remote_url(self, repo: str) -> str:
        return f"{self.base_url}/{repo}.git"

    def clone(self, repo: str, dest: Path) -> None:
        self.run("clone", "-q", self.remote_url(repo), str(dest))

    def push(self, workdir: Path, branch: str) -> str:
        self.run("push", "-q", "--force-with-lease", "origin", f"HEAD:refs/heads/{branch}", cwd=workdir)
        return self.run("rev-parse", "HEAD", cwd=workdir)

    def fetch(self, workdir: Path, repo: str, branch: str) -> str:
        """`repo`'s `branch` into the working copy as refs/remotes/upstream/<branch>; its commit."""
        ref = f"refs/remotes/upstream/{branch}"
        self.run("fetch", "-q", self.remote_url(repo), f"+refs/heads/{branch}:{ref}", cwd=workdir)
        return self.run("rev-parse", ref, cwd=workdir)

    def run(self, *args: str, cwd: Path | None = None) -> str:
        proc = subprocess.run(["git", *AUTHOR, *args], cwd=cwd, env={**os.environ, **self._auth_env},
                              capture_output=True, text=True, check=False, umask=GIT_UMASK)
        if proc.returncode == 0:
            return proc.stdout.strip()
        raise self._error(args, self.scrub(proc.stderr.strip()))

    def scrub(self, text: str) -> str:
        """git's stderr without the token (in any form) or anything else that looks like a credential."""
        return scrub(text, *self._secrets)

    def _error(self, args: tuple[str, ...], stderr: str) -> Exception:
        what = f"git {args[0]}"
        if _AUTH_FAILED.search(stderr):
            return Code3Error(Code.UNAUTHORIZED, f"{what} was refused by {self.base_url}: bad or missing credentials",
                              "check GITHUB_TOKEN (repo scope, or contents:write for a fine-grained token)")
        if _FORBIDDEN.search(stderr):
            return Code3Error(Code.UNAUTHORIZED, f"{what}: the token may not write to this repository ({stderr})",
                              "push to your own fork (server_mcp.fork_and_prepare creates it)")
        if _TRANSIENT.search(stderr):
            return GitTransient(f"{what} failed: {stderr}")
        if _NOT_FOUND.search(stderr):
            return Code3Error(Code.NOT_FOUND, f"{what}: repository not found at {self.base_url} ({stderr})",
                              "check owner/repo, and that the token can see it; a new fork may take a moment")
        return GitError(f"{what} failed: {stderr}")
