"""JavaScript on real packages (issue 19's CI subset: express 4.22.3 and 5.3.0 from npm) against Node itself
(Object.keys(require(file)), the files its loader resolves), with the targets of
benchmarks/realcode_javascript.py. The corpus comes from `scripts/fetch_corpus.sh --ci` (.ci/run); without it
the tests skip with the reason, or fail under CODE3_REQUIRE_TEST_TOOLS=1 (.ci/run; tests/tools_needed.py). Node
is needed too (the oracle runs in it), and npm typescript (`make test` installs it when npm is on PATH)."""

from __future__ import annotations

import shutil

import pytest

from benchmarks import realcode_javascript as bench
from benchmarks import realcode_scoring as scoring
from tests import tools_needed
from tests.tools_needed import need_tool


def package(pkg: bench.Package) -> bench.Package:
    done = bench.CORPUS / pkg.spec / ".complete"
    need_tool(done.exists(), f"{done.parent} missing: run scripts/fetch_corpus.sh --ci")
    need_tool(shutil.which("node") is not None,
              f"node is not on PATH (the CommonJS oracle runs in it): {tools_needed.NPM_INSTALL}")
    need_tool(bench.TYPESCRIPT.is_dir(), f"{bench.TYPESCRIPT} missing: {tools_needed.USER_INSTALL}")
    return pkg


@pytest.mark.parametrize("pkg", bench.CI_PACKAGES, ids=lambda p: p.spec)
def test_exports_members_and_edges_match_node(pkg: bench.Package) -> None:
    f = bench.measure(package(pkg))
    assert f.files >= 7
    assert f.export_recall >= scoring.EXPORT_TARGET, f.missed
    assert f.export_precision >= scoring.EXPORT_TARGET, f.extra
    assert f.member_recall >= scoring.MEMBER_TARGET, f.missed_members
    assert f.edge_recall >= scoring.EDGE_TARGET, f.missed_edges
    assert f.edge_precision >= scoring.EDGE_TARGET, f.extra_edges


def test_express_application_exports_and_utils_has_incoming_edges() -> None:
    merged = bench.scan(package(bench.CI_PACKAGES[1]))
    app = merged.file("lib/application.js")
    assert app is not None
    names = {e.name for e in app.exports}
    assert {"use", "listen", "render", "set", "engine", "route"} <= names
    express = merged.file("lib/express.js")
    assert express is not None
    assert {"export=", "application", "request", "response", "json", "static"} <= {e.name for e in express.exports}
    index = merged.file("index.js")
    assert index is not None
    assert [(i.names, i.resolved) for i in index.imports] == [(["*"], "lib/express.js")]
    importers = {f.path for f in merged.files for i in f.imports if i.resolved == "lib/utils.js"}
    assert {"lib/application.js", "lib/response.js"} <= importers
    external = [i for i in app.imports if not i.relative]
    assert external and all(i.resolved is None for i in external)  # packages beside it are never read


def test_drift_between_express_4_and_5_matches_node() -> None:
    old, new = (package(p) for p in bench.DRIFT)
    d = bench.measure_drift(old, new)
    for kind, (precision, recall) in d.kinds.items():
        assert precision >= scoring.DRIFT_TARGET, (kind, d.misses[f"{kind} extra"])
        assert recall >= scoring.DRIFT_TARGET, (kind, d.misses[f"{kind} missed"])
    assert d.oracle_counts["added"] >= 1 and d.oracle_counts["removed"] >= 10  # a real difference was measured


def test_express_4_to_5_reports_the_accepts_charsets_signature_change() -> None:
    from domain.knowledge.drift import compare

    old, new = (bench.scan(package(p)) for p in bench.DRIFT)
    changed = {(i.path, i.name): i for i in compare(old, new).items if i.change == "signature"}
    item = changed[("lib/request.js", "acceptsCharsets")]
    assert (item.before, item.after) == ("req.acceptsCharsets = function()",
                                         "req.acceptsCharsets = function(...charsets)")
    assert ("lib/request.js", "protocol") not in changed  # a getter's body is not its signature
