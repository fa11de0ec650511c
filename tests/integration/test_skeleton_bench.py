"""A 20-file smoke run of benchmarks/skeletons.py (no timing assertions)."""

from __future__ import annotations

import shutil
from pathlib import Path

from benchmarks.skeletons import measure, repomix_bin, rows_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "code"


def test_benchmark_smoke_on_twenty_files(tmp_path: Path) -> None:
    sources = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in (".py", ".ts", ".go", ".rs",
                                                                                     ".java", ".rb", ".c", ".h"))
    for p in sources[:20]:
        target = tmp_path / p.relative_to(FIXTURES)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, target)
    result = measure(tmp_path, repomix_bin(), rescans=2)
    assert result["files"] == 20 and result["parsed"] == 20
    assert result["skeleton_bytes"] > 0 and result["stub_bytes"] > 0
    assert result["rescan_ms_per_1000"] >= 0
    if "repomix_s" in result:  # repomix installed (scripts/install_test_tools.sh): measured on the same files
        assert result["repomix_files"] == 20
    rows = rows_of(result)
    assert any("re-scan" in r.metric for r in rows)
