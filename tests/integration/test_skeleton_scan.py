"""Directory scans across processes: parallel parsing in a process pool, and what a fresh interpreter imports
(the in-process checks are tests/unit/test_skeleton_scan.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import adapters.code_parser.treesitter as ts_module
from adapters.code_parser.treesitter import TreeSitterCodeParser

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("executor", ["thread", "process"])
def test_parallel_scan_matches_serial(executor: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ts_module, "PARALLEL_THRESHOLD", 2)
    root = REPO / "tests" / "fixtures" / "code"
    serial = TreeSitterCodeParser(workers=1).scan(root)
    parallel = TreeSitterCodeParser(workers=2, executor=executor).scan(root)
    assert parallel == serial
    assert len(serial.files) >= 60


def test_importing_the_package_does_not_load_tree_sitter() -> None:
    code = ("import sys, adapters.code_parser, adapters.code_parser.port, adapters.code_parser.languages, "
            "domain.knowledge.skeleton; from adapters.code_parser import CodeParser; "
            "assert not [m for m in sys.modules if m.startswith('tree_sitter')], sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60)
