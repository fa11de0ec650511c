"""What stops a follower's round (transient: the same event again next round) and what makes a dead letter."""

from __future__ import annotations

import sqlite3

import httpx
import psycopg
import pytest

from domain.errors import Code, Code3Error
from projections.failures import NotYet, describe, transient


@pytest.mark.parametrize("exc", [
    Code3Error(Code.GH_RATE_LIMIT, "comment on a/b#1: GitHub kept answering HTTP 502 after 5 attempt(s)"),
    NotYet("issue not opened yet"),
    ConnectionResetError("reset by peer"),
    TimeoutError("timed out"),
    sqlite3.OperationalError("database is locked"),
    psycopg.OperationalError("the connection is lost"),
    httpx.ConnectError("refused"),
])
def test_waiting_fixes_these_so_they_stop_the_round(exc: BaseException) -> None:
    assert transient(exc)


@pytest.mark.parametrize("exc", [
    Code3Error(Code.NOT_FOUND, "read issue a/b#1: not found on GitHub"),
    Code3Error(Code.VALIDATION, "comment on a/b#1: GitHub answered 422 (Validation Failed)"),
    Code3Error(Code.UNAUTHORIZED, "forbidden by GitHub"),
    sqlite3.OperationalError("no such column: mode"),
    psycopg.errors.UndefinedColumn("column mode does not exist"),
    KeyError("status"),
    ValueError("bad amount"),
])
def test_these_fail_the_same_way_again_so_they_are_dead_letters(exc: BaseException) -> None:
    assert not transient(exc)


def test_a_described_failure_carries_its_code_and_no_credential() -> None:
    said = describe(Code3Error(Code.GH_RATE_LIMIT, "GitHub said: bad token ghp_abcdefghijklmnopqrstuvwx1234"))
    assert said.startswith("E_GH_RATE_LIMIT: ") and "ghp_abcdefghijklmnopqrstuvwx1234" not in said
    assert len(describe(ValueError("x" * 2000))) <= 500
