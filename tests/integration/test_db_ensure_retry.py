"""Creating the tables beside the events survives a backend terminated midway: the soak campaign's first
finding (a `code3 worker` whose backend was terminated while it started exited with E_INTERNAL and stayed
down). The DDL is idempotent and its transaction rolls back, so `SqlDb.ensure` runs it again on a new
connection; a fault of the SQL itself is still raised at once.
"""

from __future__ import annotations

import uuid

import psycopg
import pytest

pytestmark = pytest.mark.postgres


def test_a_backend_terminated_while_tables_are_created_is_replaced_and_the_tables_made(
        postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from adapters.sql import SqlDb

    monkeypatch.setenv("PGAPPNAME", f"code3-test-{uuid.uuid4().hex[:8]}-ensure")
    db = SqlDb.postgres_url(postgres_url)
    try:
        with db.statement() as cur:  # a sequence is not transactional: it counts the tries a rollback undoes
            cur.execute("CREATE SEQUENCE ensure_attempts")
        # the first try's own backend is terminated in the middle of the transaction, as by an operator
        ddl = ("CREATE TABLE IF NOT EXISTS made_here (x INTEGER);"
               "SELECT CASE WHEN nextval('ensure_attempts') = 1 THEN pg_terminate_backend(pg_backend_pid()) END")
        db.ensure(ddl)
        assert db.query("SELECT last_value FROM ensure_attempts") == [(2,)], "one failed try, one that worked"
        assert db.query("SELECT count(*) FROM made_here") == [(0,)]
        with pytest.raises(psycopg.errors.UndefinedTable):
            db.ensure("CREATE TABLE IF NOT EXISTS other (x INTEGER); SELECT * FROM nowhere")
        assert db.query("SELECT last_value FROM ensure_attempts") == [(2,)], "a fault of the SQL is not retried"
    finally:
        db.close()
