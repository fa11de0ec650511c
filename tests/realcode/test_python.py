"""Python on real packages (issue 19's CI subset: click 8.1.8 and 8.2.1 from PyPI) against griffe and
ast+importlib, with the targets of benchmarks/realcode_python.py. The corpus comes from
`scripts/fetch_corpus.sh --ci` (.ci/run); without it the tests skip with the reason, or fail under
CODE3_REQUIRE_TEST_TOOLS=1 (.ci/run; tests/tools_needed.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import realcode_python as bench
from benchmarks import realcode_scoring as scoring
from tests.tools_needed import need_tool


def package(name: str) -> Path:
    found = bench.CORPUS / name
    need_tool((found / ".complete").exists(), f"{found} missing: run scripts/fetch_corpus.sh --ci")
    return found


@pytest.mark.parametrize("name", bench.CI_PACKAGES)
def test_exports_members_and_edges_match_griffe_and_importlib(name: str) -> None:
    f = bench.measure(package(name))
    assert f.export_recall >= scoring.EXPORT_TARGET, f.missed
    assert f.export_precision >= scoring.EXPORT_TARGET, f.extra
    assert f.member_recall >= scoring.MEMBER_TARGET, f.missed_members
    assert f.edge_recall >= scoring.EDGE_TARGET, f.missed_edges
    assert f.edge_precision >= scoring.EDGE_TARGET, f.extra_edges


def test_click_init_re_exports_the_api_and_overloads_show_the_implementation() -> None:
    root = package("click-8.2.1")
    merged = bench.scan(root)
    init = merged.file("src/click/__init__.py")
    assert init is not None
    names = {e.name: e for e in init.exports}
    assert {"Argument", "Command", "Group", "echo", "option"} <= names.keys()
    assert names["Argument"].signature == "from .core import Argument"
    decorators = merged.file("src/click/decorators.py")
    assert decorators is not None
    command = next(e for e in decorators.exports if e.name == "command")
    assert command.signature.startswith("def command( name: str | _AnyCallable | None = None,")  # not a stub
    core = merged.file("src/click/core.py")
    assert core is not None
    assert "src/click/decorators.py" in {i.resolved for i in core.imports}  # imported inside a method


def test_drift_between_click_releases_matches_griffe() -> None:
    d = bench.measure_drift(package("click-8.1.8"), package("click-8.2.1"))
    for kind, (precision, recall) in d.kinds.items():
        assert precision >= scoring.DRIFT_TARGET, (kind, d.misses[f"{kind} extra"])
        assert recall >= scoring.DRIFT_TARGET, (kind, d.misses[f"{kind} missed"])
    assert d.breakage_recall >= scoring.DRIFT_TARGET, d.misses["breakages missed"]
