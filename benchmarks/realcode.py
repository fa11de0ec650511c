"""`make bench`'s real-code table (issue 19): the parsers on the pinned corpus of real packages, each language
against its own tools as oracles (benchmarks.realcode_python: griffe and ast; realcode_javascript: Node and the
TypeScript compiler; realcode_go_rust: go list, go/parser and hand-checked Rust fixtures).

Run `scripts/fetch_corpus.sh` first (`make corpus`); `--ci` measures the CI-sized subset the suite asserts on.
Exit status: 0 every target met, 1 a target missed.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import realcode_go_rust, realcode_javascript, realcode_python  # noqa: E402
from benchmarks.report import Row, format_table  # noqa: E402


def rows(ci: bool = False) -> list[Row]:
    return [row for module in (realcode_python, realcode_javascript, realcode_go_rust) for row in module.rows(ci=ci)]


if __name__ == "__main__":
    table = rows(ci="--ci" in sys.argv)
    print(format_table(table))
    sys.exit(1 if any(row.passed is False for row in table) else 0)
