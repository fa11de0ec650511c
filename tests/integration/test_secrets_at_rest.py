"""Secrets at rest: after a whole lifecycle every state file is 0600 and every state directory 0700 (whatever
the umask), and no key, token or webhook secret is in any SQLite table (nor anywhere in the files' bytes)."""

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
from adapters.private_files import loose_modes, private_file, read_or_create_private
from code3.doctor import diagnose, report
from code3.wiring import webhook_secret
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

    from adapters.sql import PostgresUrl

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
        forge = LocalForge(w.project / ".code3" / "forge", actor="alice")
        forge.add_hook("http://127.0.0.1:9/webhooks/github", secret)
        forge.close()
    for services in w.people.values():
        services.close()
    w.people.clear()

    state = w.project / ".code3"
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert loose_modes(state, limit=50) == [], "every state file 0600, every state directory 0700"
    keys = state / "keys"
    assert {stat.S_IMODE(p.stat().st_mode) for p in keys.iterdir()} == {0o600}
    assert stat.S_IMODE((state / "webhook_secret").stat().st_mode) == 0o600
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
    for path in state.rglob("*"):  # nor in the raw bytes (freed pages, the WAL) of any file but its own
        if path.is_file() and path.parent.name not in ("keys", "hook_secrets") and path.name != "webhook_secret":
            data = path.read_bytes()
            for secret in secrets:
                assert secret.encode() not in data, f"a secret sits in {path.relative_to(state)}"


def test_a_forge_file_with_secrets_in_its_table_is_migrated_to_a_private_file(tmp_path: Path) -> None:
    root = tmp_path / ".code3" / "forge"
    root.mkdir(parents=True)
    db = sqlite3.connect(root / "forge.sqlite")
    db.execute("CREATE TABLE hooks (url TEXT PRIMARY KEY, secret TEXT NOT NULL)")
    db.execute("INSERT INTO hooks VALUES ('http://127.0.0.1:9/hook', 'old-secret-0123456789abcdef')")
    db.commit()
    db.close()

    forge = LocalForge(root, actor="alice")
    forge.close()
    rows = list(table_texts(root / "forge.sqlite"))
    assert ("hooks", "http://127.0.0.1:9/hook " + rows[0][1].split(" ")[1]) in rows
    assert not any("old-secret" in text for _, text in rows)
    assert b"old-secret" not in (root / "forge.sqlite").read_bytes(), "the freed page was wiped"
    [secret_file] = (root / "hook_secrets").iterdir()
    assert secret_file.read_text() == "old-secret-0123456789abcdef"
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    assert stat.S_IMODE((root / "forge.sqlite").stat().st_mode) == 0o600


def test_loose_state_from_an_older_version_is_reported_by_doctor_then_tightened(tmp_path: Path) -> None:
    keystore = Keystore(tmp_path / ".code3" / "keys")
    keystore.new("alice")
    os.chmod(tmp_path / ".code3", 0o755)
    os.chmod(tmp_path / ".code3" / "keys", 0o755)
    os.chmod(tmp_path / ".code3" / "keys" / "alice.key", 0o644)

    from code3.settings import Settings

    checks = diagnose(Settings(project=tmp_path, identity="alice"))
    modes = next(c for c in checks if c.name == "file modes")
    assert not modes.ok and "alice.key (644)" in modes.detail and "chmod" in modes.hint, report(checks)
    assert loose_modes(tmp_path / ".code3") == [], "opening the state (as doctor's probes did) tightened it"
    again = next(c for c in diagnose(Settings(project=tmp_path, identity="alice")) if c.name == "file modes")
    assert again.ok, again.detail


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
