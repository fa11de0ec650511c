"""Secrets at rest: after a whole lifecycle every state file is 0600 and every state directory 0700 (whatever
the umask), keys and secrets are in CODE3_HOME (never in the work tree), and no key, token or webhook secret
is in any SQLite table (nor anywhere in the project state's bytes)."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.keystore import Keystore
from adapters.local_forge import LocalForge
from adapters.private_files import loose_modes, private_dir, private_file, read_or_create_private
from code3.doctor import diagnose, report
from code3.wiring import local_forge, webhook_secret
from mcp_tools.lifecycle import settle, work
from tests.conftest import REPO, STACKS, World
from tests.integration.test_lifecycle import submit_work


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    """The modes must not depend on a careful umask: run everything under the common 022."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def full_lifecycle(w: World) -> None:
    published = w.published()
    feature_id = next(p.name for p in (w.project / "specs").iterdir())
    work.accept_task(w["bob"], f"{REPO}#{published['issue']['number']}")
    pr_url = submit_work(w, "bob", published, feature_id)
    w.stack.merge_pr(pr_url)
    settle.mark_merged(w["alice"], pr_url, delivery_id="d-1")
    w.stack.advance(w.stack.cooling_period)
    settle.claim_payout(w["bob"], published["bounty"]["bounty_id"])


def secrets_of(w: World) -> list[str]:
    found = [w[n].signer.private_key_hex for n in ("alice", "bob", "carol")]
    found.append(webhook_secret(w.settings("alice")).decode())
    found += [v for n in ("alice", "bob", "carol") if (v := w.settings(n).github_token)]
    return found


def sqlite_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and p.read_bytes()[:16] == b"SQLite format 3\x00"]


def table_texts(path: Path) -> Iterator[tuple[str, str]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            for row in conn.execute(f'SELECT * FROM "{table}"').fetchall():
                yield table, " ".join(v.decode(errors="replace") if isinstance(v, bytes) else str(v) for v in row)
    finally:
        conn.close()


def postgres_texts(url: str) -> list[tuple[str, str]]:
    import psycopg

    from adapters.pg_pool import PostgresUrl

    params = PostgresUrl.parse(url)
    found = []
    with psycopg.connect(params.dsn, autocommit=True) as conn:
        tables = conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                              (params.schema,)).fetchall()
        for (table,) in tables:
            for row in conn.execute(f'SELECT * FROM "{params.schema}"."{table}"').fetchall():
                found.append((table, " ".join(bytes(v).decode(errors="replace") if isinstance(v, bytes | memoryview)
                                              else str(v) for v in row)))
    assert found, "the events are in PostgreSQL"
    return found


@STACKS
def test_after_a_lifecycle_state_is_private_and_no_table_holds_a_secret(world: World) -> None:
    w = world
    full_lifecycle(w)
    secret = webhook_secret(w.settings("alice")).decode()  # what `code3 serve` does first
    if w.stack.kind == "local":  # then, on the embedded forge, it registers a signed hook
        forge = local_forge(w.settings("alice"), "alice")
        forge.add_hook("http://127.0.0.1:9/webhooks/github", secret)
        forge.close()
    for services in w.people.values():
        services.close()
    w.people.clear()

    state = w.project / ".code3"
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert loose_modes(state, limit=50) == [], "every state file 0600, every state directory 0700"
    assert not (state / "keys").exists() and not (state / "webhook_secret").exists(), "no secret in the work tree"
    home = w.settings("alice").home_dir
    keys, own = w.settings("alice").keystore_dir, w.settings("alice").secrets_dir
    assert keys.is_relative_to(home) and own.is_relative_to(home) and not home.is_relative_to(w.project)
    assert {stat.S_IMODE(p.stat().st_mode) for p in keys.iterdir()} == {0o600}
    assert stat.S_IMODE((own / "webhook_secret").stat().st_mode) == 0o600
    assert loose_modes(home, limit=50) == [], "CODE3_HOME is owner-only too"
    for db in (state / "events.sqlite", state / "events.sqlite-wal", state / "events.sqlite-shm"):
        if db.exists():
            assert stat.S_IMODE(db.stat().st_mode) == 0o600, db
    workspaces = state / "workspaces"
    clones = [p for p in workspaces.rglob(".git")]
    assert clones, "the lifecycle cloned a fork into a workspace"
    for clone in clones:
        assert stat.S_IMODE(clone.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(clone.parent.parent.stat().st_mode) == 0o700

    secrets = secrets_of(w)
    databases = sqlite_files(state)
    assert (state / "events.sqlite" in databases) == (w.database_url is None)
    rows = [(f"{db.name}:{table}", text) for db in databases for table, text in table_texts(db)]
    if w.database_url:
        rows += postgres_texts(w.database_url)
    for table, text in rows:
        for secret in secrets:
            assert secret not in text, f"a secret sits in table {table}"
    for path in state.rglob("*"):  # nor in the raw bytes (freed pages, the WAL) of any file of the project
        if path.is_file():
            data = path.read_bytes()
            for secret in secrets:
                assert secret.encode() not in data, f"a secret sits in {path.relative_to(state)}"


def test_a_forge_file_with_secrets_in_its_table_is_migrated_to_a_private_file(tmp_path: Path) -> None:
    root = private_dir(tmp_path / ".code3" / "forge")  # as an older Code3 made it: 0700
    db = sqlite3.connect(root / "forge.sqlite")
    db.execute("CREATE TABLE hooks (url TEXT PRIMARY KEY, secret TEXT NOT NULL)")
    db.execute("INSERT INTO hooks VALUES ('http://127.0.0.1:9/hook', 'old-secret-0123456789abcdef')")
    db.commit()
    db.close()
    (root / "forge.sqlite").chmod(0o600)

    forge = LocalForge(root, actor="alice", secrets=tmp_path / "home" / "forge_hooks")
    forge.close()
    rows = list(table_texts(root / "forge.sqlite"))
    assert ("hooks", "http://127.0.0.1:9/hook " + rows[0][1].split(" ")[1]) in rows
    assert not any("old-secret" in text for _, text in rows)
    assert b"old-secret" not in (root / "forge.sqlite").read_bytes(), "the freed page was wiped"
    assert not (root / "hook_secrets").exists(), "the secrets go outside the work tree"
    [secret_file] = (tmp_path / "home" / "forge_hooks").iterdir()
    assert secret_file.read_text() == "old-secret-0123456789abcdef"
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    assert stat.S_IMODE((root / "forge.sqlite").stat().st_mode) == 0o600


def test_loose_state_is_reported_by_doctor_and_refused_never_silently_tightened(tmp_path: Path) -> None:
    from code3.settings import Settings
    from code3.wiring import build_services

    settings = Settings(project=tmp_path, identity="alice")
    Keystore(settings.keystore_dir).new("alice")
    build_services(settings).close()
    os.chmod(tmp_path / ".code3", 0o755)
    os.chmod(settings.keystore_dir / "alice.key", 0o644)

    checks = diagnose(settings)
    modes = next(c for c in checks if c.name == "file modes")
    assert not modes.ok and "alice.key (644)" in modes.detail and "chmod" in modes.hint, report(checks)
    identity = next(c for c in checks if c.name == "identity")
    assert not identity.ok and "chmod 600" in identity.hint, report(checks)
    assert {p for p, _ in loose_modes(tmp_path / ".code3", settings.keystore_dir)} == {
        tmp_path / ".code3", settings.keystore_dir / "alice.key"}, "nothing was tightened behind the user's back"
    with pytest.raises(Exception, match="its mode 755 lets group or others"):
        build_services(settings)
    os.chmod(tmp_path / ".code3", 0o700)
    os.chmod(settings.keystore_dir / "alice.key", 0o600)
    again = diagnose(settings)
    assert all(c.ok for c in again if c.name in ("file modes", "identity")), report(again)


def test_private_files_ignore_the_umask_and_racing_writers_agree(tmp_path: Path) -> None:
    path = private_file(tmp_path / "a" / "b" / "db.sqlite")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700

    target = tmp_path / "state" / "webhook_secret"
    seen: list[bytes] = []
    threads = [threading.Thread(target=lambda i=i: seen.append(read_or_create_private(target, f"s{i}".encode())))
               for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen)) == 1 and seen[0] == target.read_bytes()
    assert [p.name for p in target.parent.iterdir()] == ["webhook_secret"], "no temporary file left behind"


def test_doctor_fails_its_state_layout_check_on_planted_or_old_state_and_says_what_to_do(tmp_path: Path) -> None:
    import subprocess

    from code3.settings import Settings

    clean = tmp_path / "clean"
    subprocess.run(["git", "init", "-q", str(clean)], check=True)
    settings = Settings(project=clean)
    layout = next(c for c in diagnose(settings) if c.name == "state layout")
    assert layout.ok and str(settings.home_dir) in layout.detail, layout.detail
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # git is asked once per process and project
    private_dir(tmp_path / ".code3")
    (tmp_path / ".code3" / "events.sqlite").write_bytes(b"")
    (tmp_path / ".code3" / "events.sqlite").chmod(0o600)
    subprocess.run(["git", "add", "-f", ".code3/events.sqlite"], cwd=tmp_path, check=True)
    layout = next(c for c in diagnose(Settings(project=tmp_path)) if c.name == "state layout")
    assert not layout.ok and "git tracks it" in layout.detail and "git rm -r --cached .code3" in layout.hint
    read_or_create_private(tmp_path / ".code3" / "serve_token", b"an-old-token-0123456789")
    layout = next(c for c in diagnose(Settings(project=tmp_path)) if c.name == "state layout")
    assert not layout.ok and "serve_token" in layout.detail and "code3 account migrate" in layout.hint
