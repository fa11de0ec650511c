"""The embedded forge: repositories, issues, labels, comments, forks, branches and pull requests.

Metadata lives in one SQLite file; every repository is a real bare git repository on disk, so fork,
clone, branch, push and merge are real git operations. It acts as one user (`actor`), as a GitHub
token does.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import shutil
import subprocess
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from adapters.git import git, init_bare, merge_branch, read_ref
from adapters.ports import Comment, IssueRef, PullRequest, RepoInfo
from adapters.private_files import private_dir, read_private, write_private
from adapters.sql import Cursor, SqlDb
from adapters.webhook_payloads import pull_request_event
from domain.errors import Code, Code3Error
from domain.values import parse_branch, parse_comment_url, parse_forge_url, parse_repo

_SCHEMA = """
CREATE TABLE IF NOT EXISTS repos (full_name TEXT PRIMARY KEY, parent TEXT, default_branch TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS issues (repo TEXT NOT NULL, number INTEGER NOT NULL, is_pr INTEGER NOT NULL,
    title TEXT NOT NULL, body TEXT NOT NULL, labels TEXT NOT NULL, state TEXT NOT NULL, author TEXT NOT NULL,
    head TEXT, base TEXT, head_sha TEXT, merged INTEGER NOT NULL DEFAULT 0, merge_sha TEXT,
    PRIMARY KEY (repo, number));
CREATE TABLE IF NOT EXISTS hooks (url TEXT PRIMARY KEY, secret_ref TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS hook_deliveries (id TEXT PRIMARY KEY, url TEXT NOT NULL, event TEXT NOT NULL,
    payload TEXT NOT NULL, status INTEGER, error TEXT);
CREATE TABLE IF NOT EXISTS comments (id INTEGER PRIMARY KEY AUTOINCREMENT, repo TEXT NOT NULL,
    number INTEGER NOT NULL, body TEXT NOT NULL, author TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY AUTOINCREMENT, login TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS issue_markers (repo TEXT NOT NULL, marker TEXT NOT NULL, number INTEGER NOT NULL,
    PRIMARY KEY (repo, marker, number));
CREATE INDEX IF NOT EXISTS issue_markers_by_issue ON issue_markers (repo, number);
"""
# An issue hash (sha256 hex) in an issue's body is indexed, so publish's lookup by issue hash is one index search
# instead of a scan of every body; any other marker is still looked for in the bodies.
HASH_MARKER = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")
FIND_BY_HASH = "SELECT MIN(number) FROM issue_markers WHERE repo = ? AND marker = ?"


def parse_url(url: str) -> tuple[str, str, int]:
    """(`owner/repo`, `issues` | `pull`, number) of an issue or PR URL, on any forge host."""
    parsed = parse_forge_url(url)  # a full match: no stray whitespace or newline is forgiven
    return parsed.repo, parsed.kind, parsed.number


def check_repo(repo: str) -> str:
    return parse_repo(repo)


class LocalForge:
    def __init__(self, root: Path, actor: str, base_url: str = "local://forge", secrets: Path | None = None) -> None:
        self.root = root
        self.secrets = secrets or root / "hook_secrets"  # Code3 passes a directory outside the work tree
        self.actor = actor
        self.base_url = base_url.rstrip("/")
        self.db = SqlDb.sqlite(root / "forge.sqlite", _SCHEMA)
        self._add_identity_columns()
        self._migrate_hook_secrets()
        self._index_existing_markers()

    def close(self) -> None:
        self.db.close()

    def _git_dir(self, repo: str) -> Path:
        return self.root / "repos" / f"{check_repo(repo)}.git"

    def _require_repo(self, db: Cursor, repo: str) -> str:
        row = db.execute("SELECT default_branch FROM repos WHERE full_name = ?", (check_repo(repo),)).fetchone()
        if not row:
            raise Code3Error(Code.NOT_FOUND, f"repository {repo} does not exist on the forge",
                             "check the owner/repo spelling, or create it (`code3 forge create-repo`)")
        return row[0]

    def repo_url(self, repo: str) -> str:
        return f"{self.base_url}/{repo}"

    @property
    def actor_id(self) -> int:
        return self.user_id(self.actor)

    def user_id(self, login: str) -> int:
        """The numeric id of a user of this forge, given on first sight and never reused (as GitHub's)."""
        with self.db.statement() as db:
            return _user_id(db, login)

    def get_repo(self, repo: str) -> RepoInfo:
        with self.db.statement() as db:
            branch = self._require_repo(db, repo)
            row = db.execute("SELECT full_name, repo_id FROM repos WHERE full_name = ?", (check_repo(repo),)).fetchone()
        return RepoInfo(full_name=row[0], id=int(row[1]), default_branch=branch)

    def _add_identity_columns(self) -> None:
        """A forge file from before ids: every repository gets its id (in creation order), every comment an edit
        flag. The columns are read inside the write transaction: two processes opening an old file at once add
        each column once."""
        with self.db.transaction() as db:
            repo_columns = [r[1] for r in db.execute("PRAGMA table_info(repos)").fetchall()]
            comment_columns = [r[1] for r in db.execute("PRAGMA table_info(comments)").fetchall()]
            if "repo_id" not in repo_columns:
                db.execute("ALTER TABLE repos ADD COLUMN repo_id INTEGER")
                db.execute("UPDATE repos SET repo_id = rowid")
                db.execute("CREATE UNIQUE INDEX IF NOT EXISTS repos_by_id ON repos (repo_id)")
            if "edited" not in comment_columns:
                db.execute("ALTER TABLE comments ADD COLUMN edited INTEGER NOT NULL DEFAULT 0")

    # --- repositories -----------------------------------------------------------------------

    def create_repo(self, repo: str, readme: str = "", branch: str = "main") -> str:
        """A new repository with one commit on `branch`, its default (idempotent: an existing one is kept)."""
        if self.has_repo(repo):
            return self.repo_url(repo)
        target = self._git_dir(repo)
        if target.exists():
            shutil.rmtree(target)  # a creation interrupted before it was registered
        init_bare(target, readme or f"# {repo}\n", parse_branch(branch))
        self._register(repo, branch)
        return self.repo_url(repo)

    def import_repo(self, repo: str, source: Path, branch: str) -> str:
        """A new repository whose default branch `branch` is the history of `source`'s branch of that name
        (a git work tree: what `code3 init` pushes); an existing one is kept (adapters.forge_sync pushes to it)."""
        branch = parse_branch(branch)
        if self.has_repo(repo):
            return self.repo_url(repo)
        target = self._git_dir(repo)
        if target.exists():
            shutil.rmtree(target)  # an import interrupted before it was registered
        private_dir(target.parent)
        git("init", "-q", "--bare", "-b", branch, str(target))
        git("push", "-q", str(target), f"refs/heads/{branch}:refs/heads/{branch}", cwd=source)
        self._register(repo, branch)
        return self.repo_url(repo)

    def _register(self, repo: str, branch: str) -> None:
        with self.db.transaction() as db:
            db.execute("INSERT OR IGNORE INTO repos (full_name, parent, default_branch, repo_id) VALUES (?, NULL, "
                       "?, (SELECT COALESCE(MAX(repo_id), 0) + 1 FROM repos))", (check_repo(repo), branch))

    def has_repo(self, repo: str) -> bool:
        with self.db.statement() as db:
            return db.execute("SELECT 1 FROM repos WHERE full_name = ?", (check_repo(repo),)).fetchone() is not None

    def repo_path(self, repo: str) -> Path:
        """The bare git repository of an existing repository (what `code3 forge push|pull` sync with)."""
        with self.db.statement() as db:
            self._require_repo(db, repo)
        return self._git_dir(repo)

    def forks_of(self, repo: str) -> list[str]:
        with self.db.statement() as db:
            return [r[0] for r in db.execute("SELECT full_name FROM repos WHERE parent = ? ORDER BY full_name",
                                             (check_repo(repo),)).fetchall()]

    def fork(self, repo: str) -> str:
        """Fork into the actor's namespace (an existing fork is reused, as GitHub does)."""
        name = f"{self.actor}/{repo.split('/', 1)[1]}"
        with self.db.statement() as db:
            branch = self._require_repo(db, repo)
            if db.execute("SELECT 1 FROM repos WHERE full_name = ?", (name,)).fetchone():
                return name
        target = self._git_dir(name)
        if target.exists():
            shutil.rmtree(target)  # a fork interrupted before it was registered
        private_dir(target.parent)
        git("clone", "-q", "--bare", str(self._git_dir(repo)), str(target))
        with self.db.transaction() as db:
            db.execute("INSERT OR IGNORE INTO repos (full_name, parent, default_branch, repo_id) VALUES (?, ?, ?, "
                       "(SELECT COALESCE(MAX(repo_id), 0) + 1 FROM repos))", (name, repo, branch))
        return name

    def clone(self, repo: str, dest: Path) -> None:
        with self.db.statement() as db:
            self._require_repo(db, repo)
        git("clone", "-q", str(self._git_dir(repo)), str(dest))

    def push(self, workdir: Path, branch: str) -> str:
        git("push", "-q", "--force-with-lease", "origin", f"HEAD:refs/heads/{branch}", cwd=workdir)
        return git("rev-parse", "HEAD", cwd=workdir)

    def fetch_branch(self, workdir: Path, repo: str, branch: str) -> str:
        with self.db.statement() as db:
            self._require_repo(db, repo)
        ref = f"refs/remotes/upstream/{branch}"  # the caller checked the name (domain.values.parse_branch)
        git("fetch", "-q", str(self._git_dir(repo)), f"+refs/heads/{branch}:{ref}", cwd=workdir)
        return git("rev-parse", ref, cwd=workdir)

    def branch_sha(self, repo: str, branch: str) -> str | None:
        return read_ref(self._git_dir(repo), f"refs/heads/{branch}")

    def read_file(self, repo: str, branch: str, path: str) -> bytes | None:
        """The file at `path` in `branch` of `repo` (what a fork of it starts with), None when it holds none."""
        ref = f"refs/heads/{parse_branch(branch)}:{path}"  # git reads the repository: no file of it opened here
        found = subprocess.run(["git", f"--git-dir={self._git_dir(repo)}", "cat-file", "blob", ref],
                               capture_output=True, check=False)
        return found.stdout if found.returncode == 0 else None

    # --- issues, labels, comments -----------------------------------------------------------

    def create_issue(self, repo: str, title: str, body: str, labels: list[str], assignees: list[str]) -> IssueRef:
        with self.db.transaction() as db:
            self._require_repo(db, repo)
            number = self._next_number(db, repo)
            db.execute("INSERT INTO issues (repo, number, is_pr, title, body, labels, state, author) "
                       "VALUES (?, ?, 0, ?, ?, ?, 'open', ?)",
                       (repo, number, title, body, json.dumps(sorted(set(labels))), self.actor))
            _index_markers(db, repo, number, body)
        return self.get_issue(repo, number)

    def create_issues(self, repo: str, issues: list[tuple[str, str, list[str]]]) -> list[int]:
        """Many issues (title, body, labels) in one transaction, as `create_issue` writes each: the numbers
        given (bulk seeding of a large store; see benchmarks/seed_store.py)."""
        numbers = []
        with self.db.transaction() as db:
            self._require_repo(db, repo)
            number = self._next_number(db, repo)
            for title, body, labels in issues:
                db.execute("INSERT INTO issues (repo, number, is_pr, title, body, labels, state, author) "
                           "VALUES (?, ?, 0, ?, ?, ?, 'open', ?)",
                           (repo, number, title, body, json.dumps(sorted(set(labels))), self.actor))
                _index_markers(db, repo, number, body)
                numbers.append(number)
                number += 1
        return numbers

    def create_prs(self, repo: str, prs: list[tuple[int, str, str, str, bool]]) -> None:
        """Many PRs (number, head `owner/repo:branch`, author, head sha, merged) into `repo`'s default branch in one
        transaction, as `open_pr` (and `merge_pr`) record them, without git (bulk seeding of a large store; see
        benchmarks/seed_store.py): what the resolver reads of a PR is here."""
        with self.db.transaction() as db:
            base = self._require_repo(db, repo)
            for number, head, author, sha, merged in prs:
                _user_id(db, author)
                db.execute("INSERT INTO issues (repo, number, is_pr, title, body, labels, state, author, head, base,"
                           " head_sha, merged, merge_sha) VALUES (?, ?, 1, ?, '', '[]', ?, ?, ?, ?, ?, ?, ?)",
                           (repo, number, f"PR {number}", "closed" if merged else "open", author, head, base, sha,
                            int(merged), sha if merged else None))

    def find_issue(self, repo: str, marker: str) -> IssueRef | None:
        """The first issue whose body contains `marker` (the issue hash), so a resumed publish finds it.

        An issue hash is found through the marker index (one search, whatever the number of issues); any
        other marker by reading the bodies."""
        with self.db.statement() as db:
            self._require_repo(db, repo)
            if HASH_MARKER.fullmatch(marker):
                row = db.execute(FIND_BY_HASH, (repo, marker)).fetchone()
                row = row if row and row[0] is not None else None
            else:
                row = db.execute("SELECT number FROM issues WHERE repo = ? AND is_pr = 0 AND instr(body, ?) > 0 "
                                 "ORDER BY number LIMIT 1", (repo, marker)).fetchone()
        return self.get_issue(repo, row[0]) if row else None

    def get_issue(self, repo: str, number: int) -> IssueRef:
        with self.db.statement() as db:
            row = db.execute("SELECT title, body, labels, state, author FROM issues WHERE repo = ? AND number = ? "
                             "AND is_pr = 0", (repo, number)).fetchone()
        if not row:
            raise Code3Error(Code.NOT_FOUND, f"issue {repo}#{number} does not exist", "check the issue URL")
        return IssueRef(repo=repo, number=number, url=f"{self.base_url}/{repo}/issues/{number}", title=row[0],
                        body=row[1], labels=json.loads(row[2]), state=row[3], author=row[4])

    def list_issues(self, repo: str) -> list[IssueRef]:
        with self.db.statement() as db:
            numbers = [r[0] for r in db.execute("SELECT number FROM issues WHERE repo = ? AND is_pr = 0 "
                                                "ORDER BY number", (repo,)).fetchall()]
        return [self.get_issue(repo, n) for n in numbers]

    def update_issue_body(self, repo: str, number: int, body: str) -> None:
        self.get_issue(repo, number)
        with self.db.transaction() as db:
            db.execute("UPDATE issues SET body = ? WHERE repo = ? AND number = ?", (body, repo, number))
            db.execute("DELETE FROM issue_markers WHERE repo = ? AND number = ?", (repo, number))
            _index_markers(db, repo, number, body)

    def close_issue(self, repo: str, number: int) -> None:
        self.get_issue(repo, number)
        with self.db.statement() as db:
            db.execute("UPDATE issues SET state = 'closed' WHERE repo = ? AND number = ? AND is_pr = 0", (repo, number))

    def set_labels(self, repo: str, number: int, labels: list[str]) -> list[str]:
        self.get_issue(repo, number)
        labels = sorted(set(labels))
        with self.db.statement() as db:
            db.execute("UPDATE issues SET labels = ? WHERE repo = ? AND number = ?", (json.dumps(labels), repo, number))
        return labels

    def create_comment(self, repo: str, number: int, body: str) -> int:
        with self.db.statement() as db:
            if not db.execute("SELECT 1 FROM issues WHERE repo = ? AND number = ?", (repo, number)).fetchone():
                raise Code3Error(Code.NOT_FOUND, f"issue {repo}#{number} does not exist", "check the issue URL")
            _user_id(db, self.actor)
            cur = db.execute("INSERT INTO comments (repo, number, body, author) VALUES (?, ?, ?, ?)",
                             (repo, number, body, self.actor))
            return int(cur.lastrowid or 0)

    def list_comments(self, repo: str, number: int) -> list[Comment]:
        with self.db.statement() as db:
            rows = db.execute(f"{_COMMENTS} WHERE c.repo = ? AND c.number = ? ORDER BY c.id", (repo, number)).fetchall()
        return [self._comment(r) for r in rows]

    def get_comment(self, url: str) -> Comment | None:
        issue, comment_id = parse_comment_url(url)
        with self.db.statement() as db:
            row = db.execute(f"{_COMMENTS} WHERE c.repo = ? AND c.number = ? AND c.id = ?",
                             (issue.repo, issue.number, comment_id)).fetchone()
        return self._comment(row) if row else None

    def _comment(self, row: tuple[object, ...]) -> Comment:
        comment_id, body, author, edited, repo, number, author_id = row
        return Comment(id=int(str(comment_id)), body=str(body), author=str(author), author_id=int(str(author_id or 0)),
                       edited=bool(edited), url=f"{self.base_url}/{repo}/issues/{number}#issuecomment-{comment_id}")

    def edit_comment(self, repo: str, comment_id: int, body: str) -> None:
        """Only the comment's author edits it here (on GitHub, anyone with push access may, which is why an edited
        comment proves nothing of its author: see `Comment.edited`)."""
        with self.db.statement() as db:
            cur = db.execute("UPDATE comments SET body = ?, edited = 1 WHERE repo = ? AND id = ? AND author = ?",
                             (body, repo, comment_id, self.actor))
        if cur.rowcount == 0:
            raise Code3Error(Code.NOT_FOUND, f"no comment {comment_id} of yours in {repo}",
                             "list the issue's comments")

    # --- pull requests ----------------------------------------------------------------------

    def open_pr(self, repo: str, head: str, base: str, title: str, body: str) -> PullRequest:
        """A PR from `user:branch` (a fork's branch) or `branch` into `base`; an open one is reused."""
        head_repo, branch = (f"{head.split(':')[0]}/{repo.split('/')[1]}", head.split(":", 1)[1]) \
            if ":" in head else (repo, head)
        with self.db.statement() as db:
            self._require_repo(db, repo)
            self._require_repo(db, head_repo)
        sha = self.branch_sha(head_repo, branch)
        if sha is None:
            raise Code3Error(Code.NOT_FOUND, f"branch {branch} does not exist in {head_repo}",
                             "push the branch first (server_mcp.fork_and_prepare does)")
        head_ref = f"{head_repo}:{branch}"
        with self.db.transaction() as db:
            row = db.execute("SELECT number FROM issues WHERE repo = ? AND is_pr = 1 AND head = ? AND state = 'open'",
                             (repo, head_ref)).fetchone()
            if row:
                db.execute("UPDATE issues SET head_sha = ? WHERE repo = ? AND number = ?", (sha, repo, row[0]))
                number = row[0]
            else:
                number = self._next_number(db, repo)
                _user_id(db, self.actor)
                db.execute("INSERT INTO issues (repo, number, is_pr, title, body, labels, state, author, head, base,"
                           " head_sha) VALUES (?, ?, 1, ?, ?, '[]', 'open', ?, ?, ?, ?)",
                           (repo, number, title, body, self.actor, head_ref, base, sha))
        pr = self._pr(repo, number)
        assert pr is not None
        return pr

    def get_pr(self, url: str) -> PullRequest | None:
        repo, kind, number = parse_url(url)
        return self._pr(repo, number) if kind == "pull" else None

    def find_pr(self, repo: str, number: int) -> PullRequest | None:
        return self._pr(repo, number)

    def _pr(self, repo: str, number: int) -> PullRequest | None:
        with self.db.statement() as db:
            row = db.execute(
                "SELECT i.head, i.base, i.author, i.title, i.state, i.merged, i.head_sha, i.merge_sha, r.repo_id, "
                "r.default_branch, u.id FROM issues i JOIN repos r ON r.full_name = i.repo "
                "LEFT JOIN users u ON u.login = i.author WHERE i.repo = ? AND i.number = ? AND i.is_pr = 1",
                (repo, number)).fetchone()
        if not row:
            return None
        return PullRequest(repo=repo, number=number, url=f"{self.base_url}/{repo}/pull/{number}", head=row[0],
                           base=row[1], author=row[2], title=row[3], state=row[4], merged=bool(row[5]),
                           head_sha=row[6], merge_sha=row[7], repo_id=int(row[8]), default_branch=row[9],
                           author_id=int(row[10] or 0))

    def close_pr(self, url: str) -> PullRequest:
        """Close a PR without merging it (the maintainer's action)."""
        pr = self.get_pr(url)
        if pr is None:
            raise Code3Error(Code.NOT_FOUND, f"no pull request at {url}", "check the PR URL")
        if pr.state == "open":
            with self.db.statement() as db:
                db.execute("UPDATE issues SET state = 'closed' WHERE repo = ? AND number = ?", (pr.repo, pr.number))
            pr = self._pr(pr.repo, pr.number) or pr
            self._deliver("pull_request", pull_request_event(pr, self.base_url, self.actor, action="closed"))
        return pr

    def merge_pr(self, url: str) -> PullRequest:
        """Merge a PR into its base with a real `git merge --no-ff` (the maintainer's action)."""
        pr = self.get_pr(url)
        if pr is None:
            raise Code3Error(Code.NOT_FOUND, f"no pull request at {url}", "check the PR URL")
        if pr.merged:
            return pr
        if pr.state != "open":
            raise Code3Error(Code.INVALID_STATE, f"{url} is {pr.state}", "only an open PR can be merged")
        head_repo, branch = pr.head.split(":", 1)
        sha, _ = merge_branch(self._git_dir(pr.repo), pr.base, self._git_dir(head_repo), branch,
                              f"Merge pull request #{pr.number} from {pr.head}")
        with self.db.statement() as db:
            db.execute("UPDATE issues SET state = 'closed', merged = 1, merge_sha = ? WHERE repo = ? AND number = ?",
                       (sha, pr.repo, pr.number))
        merged = self._pr(pr.repo, pr.number)
        assert merged is not None
        self._deliver("pull_request", pull_request_event(merged, self.base_url, self.actor))
        return merged

    # --- webhooks: the same signed deliveries GitHub sends ------------------------------------

    # A hook's secret lives in a 0600 file under the forge's root; the table holds only the file's name.

    def _secret_path(self, ref: str) -> Path:
        return self.secrets / ref

    def _store_secret(self, url: str, secret: str) -> str:
        ref = hashlib.sha256(url.encode()).hexdigest()[:32]
        write_private(self._secret_path(ref), secret.encode())
        return ref

    def _secret(self, ref: str) -> str | None:
        try:
            found = read_private(self._secret_path(ref))
            return None if found is None else found.decode()
        except ValueError:
            return None

    def _migrate_hook_secrets(self) -> None:
        """A forge file written before secrets moved out of the table: move them, and wipe the old column."""
        with self.db.statement() as db:
            columns = [row[1] for row in db.execute("PRAGMA table_info(hooks)").fetchall()]
        if "secret" not in columns:
            return
        with self.db.statement() as db:
            rows = db.execute("SELECT url, secret FROM hooks").fetchall()
        refs = [(url, self._store_secret(url, secret)) for url, secret in rows]
        with self.db.statement() as db:
            db.execute("PRAGMA secure_delete = ON")  # overwrite the freed pages that held the secrets
        with self.db.transaction() as db:
            db.execute("DROP TABLE hooks")
            db.execute("CREATE TABLE hooks (url TEXT PRIMARY KEY, secret_ref TEXT NOT NULL)")
            for url, ref in refs:
                db.execute("INSERT INTO hooks VALUES (?, ?)", (url, ref))
        with self.db.statement() as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def add_hook(self, url: str, secret: str) -> None:
        ref = self._store_secret(url, secret)
        with self.db.statement() as db:
            db.execute("INSERT INTO hooks VALUES (?, ?) "
                       "ON CONFLICT (url) DO UPDATE SET secret_ref = excluded.secret_ref", (url, ref))

    def deliveries(self) -> list[dict[str, object]]:
        with self.db.statement() as db:
            rows = db.execute("SELECT id, url, event, status, error FROM hook_deliveries ORDER BY rowid").fetchall()
        return [dict(zip(("id", "url", "event", "status", "error"), r, strict=True)) for r in rows]

    def redeliver(self, delivery_id: str) -> int | None:
        """Send a recorded delivery again with the same id, as GitHub's "Redeliver" button does."""
        with self.db.statement() as db:
            row = db.execute("SELECT url, event, payload FROM hook_deliveries WHERE id = ?", (delivery_id,)).fetchone()
            ref = db.execute("SELECT secret_ref FROM hooks WHERE url = ?", (row[0],)).fetchone() if row else None
        secret = self._secret(ref[0]) if ref else None
        if row is None or secret is None:
            raise Code3Error(Code.NOT_FOUND, f"no delivery {delivery_id}", "list them with `code3 forge deliveries`")
        return self._post(delivery_id, row[0], secret, row[1], row[2].encode())

    def _deliver(self, event: str, payload: dict[str, object]) -> None:
        body = json.dumps(payload).encode()
        with self.db.statement() as db:
            hooks = db.execute("SELECT url, secret_ref FROM hooks").fetchall()
        for url, ref in hooks:
            secret = self._secret(ref)
            if secret is None:
                continue  # its secret file is gone: sending unsigned would only be refused
            delivery_id = str(uuid.uuid4())
            with self.db.statement() as db:
                db.execute("INSERT INTO hook_deliveries (id, url, event, payload) VALUES (?, ?, ?, ?)",
                           (delivery_id, url, event, body.decode()))
            self._post(delivery_id, url, secret, event, body)

    def _post(self, delivery_id: str, url: str, secret: str, event: str, body: bytes) -> int | None:
        signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        request = urllib.request.Request(url, data=body, method="POST", headers={
            "Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/code3-local",
            "X-GitHub-Event": event, "X-GitHub-Delivery": delivery_id, "X-Hub-Signature-256": signature})
        status, error = None, None
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status = response.status
        except urllib.error.HTTPError as exc:
            status, error = exc.code, exc.reason
        except OSError as exc:
            error = f"{type(exc).__name__}: {exc}"
        with self.db.statement() as db:
            db.execute("UPDATE hook_deliveries SET status = ?, error = ? WHERE id = ?", (status, error, delivery_id))
        return status

    def _index_existing_markers(self) -> None:
        """A forge file written before the marker index: index the bodies once."""
        with self.db.statement() as db:
            if db.execute("SELECT 1 FROM issue_markers LIMIT 1").fetchone() or not db.execute(
                    "SELECT 1 FROM issues WHERE is_pr = 0 LIMIT 1").fetchone():
                return
        with self.db.transaction() as db:
            for repo, number, body in db.execute("SELECT repo, number, body FROM issues WHERE is_pr = 0").fetchall():
                _index_markers(db, repo, number, body)

    @staticmethod
    def _next_number(db: Cursor, repo: str) -> int:
        return (db.execute("SELECT MAX(number) FROM issues WHERE repo = ?", (repo,)).fetchone()[0] or 0) + 1


_COMMENTS = ("SELECT c.id, c.body, c.author, c.edited, c.repo, c.number, u.id FROM comments c "
             "LEFT JOIN users u ON u.login = c.author")


def _user_id(db: Cursor, login: str) -> int:
    db.execute("INSERT INTO users (login) VALUES (?) ON CONFLICT (login) DO NOTHING", (login,))
    return int(db.execute("SELECT id FROM users WHERE login = ?", (login,)).fetchone()[0])


def _index_markers(db: Cursor, repo: str, number: int, body: str) -> None:
    for marker in set(HASH_MARKER.findall(body)):
        db.execute("INSERT OR IGNORE INTO issue_markers (repo, marker, number) VALUES (?, ?, ?)",
                   (repo, marker, number))
