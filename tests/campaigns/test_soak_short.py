"""The chaos campaign's short version (`make soak` runs the full one): 20 agents, stdio and HTTP, drive a few
lifecycles through three serves and two workers on PostgreSQL while a serve and a worker are SIGKILLed and
restarted, the campaign's backends are terminated and the database is cut off (a shorter drop than the full
campaign's 20 s, to stay within 3 minutes on a 2-core machine); then every check of soak_checks.py holds.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.campaigns.soak import Options, render, run

pytestmark = pytest.mark.postgres


@pytest.mark.timeout(600)
def test_lifecycles_survive_kills_terminated_backends_and_a_cut_off_database(tmp_path: Path) -> None:
    from tests.conftest import _postgres_schema

    _postgres_schema()  # skips with the reason when no PostgreSQL answers
    options = Options(agents=20, lifecycles=int(os.environ.get("CODE3_SOAK_LIFECYCLES", "6")), seconds=40,
                      kills=2, terminations=1, drop_seconds=8, concurrency=6, expire_share=0.3, expire_deadline=20,
                      contest_share=0.4, quiesce_seconds=90, lifecycle_seconds=360, max_seconds=120,
                      root=tmp_path / "soak", seed=7)
    report = run(options)
    text = render(report)
    print(text)
    assert report["ok"], text
    assert report["outcomes"].get("paid", 0) >= 1 and report["outcomes"].get("refunded", 0) >= 1, text
    assert sorted(k["machine"].split("-")[0] for k in report["kills"]) == ["serve", "worker"], text
    assert len(report["terminations"]) == 1 and report["terminations"][0]["backends"] >= 5, text
    [cut] = report["cuts"]
    assert all(status == 503 for status, _ in cut["readyz"].values()), text
    assert cut["doctor"]["exit"] != 0 and "unreachable" in cut["doctor"]["database"], text
    assert report["facts"]["duplicate_comments"] == 0 and report["facts"]["escrow"] == 0, text
    assert report["agents"]["http"] >= 1 and report["agents"]["stdio_workers"] >= 2, text
