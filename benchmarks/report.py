"""Result rows and the table `make bench` prints.

Kept apart from run.py so benchmark modules (e.g. benchmarks/lifecycle.py) can build rows without
importing the entry script, which would run it a second time when it is `__main__`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100): always an observed sample, no interpolation surprises."""
    if not values:
        raise ValueError("percentile of no samples")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


@dataclass(frozen=True)
class Row:
    """One line of the table.

    `passed` is None for informational rows (no target): they are printed but never fail the run.
    `baseline` is the minimal-server figure when there is one, so the ratio can be shown.
    """

    metric: str
    code3: float
    unit: str = ""
    baseline: float | None = None
    target: str = ""
    passed: bool | None = None

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or self.baseline == 0:
            return None
        return self.code3 / self.baseline

    @classmethod
    def against_baseline(
        cls, metric: str, baseline: float, code3: float, unit: str, max_ratio: float | None = None
    ) -> Row:
        """A row judged by code3/baseline ≤ max_ratio (informational when max_ratio is None)."""
        row = cls(metric, code3, unit, baseline)
        if max_ratio is None:
            return row
        ratio = row.ratio
        passed = ratio is not None and ratio <= max_ratio
        return cls(metric, code3, unit, baseline, f"≤ {max_ratio:g}x", passed)

    @classmethod
    def at_least(cls, metric: str, code3: float, unit: str, minimum: float) -> Row:
        """A row judged by an absolute floor (throughput-style metrics)."""
        return cls(metric, code3, unit, None, f"≥ {minimum:g} {unit}".rstrip(), code3 >= minimum)

    @classmethod
    def at_most(cls, metric: str, code3: float, unit: str, maximum: float) -> Row:
        """A row judged by an absolute ceiling (latency-style metrics)."""
        return cls(metric, code3, unit, None, f"≤ {maximum:g} {unit}".rstrip(), code3 <= maximum)


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    digits = 3 if abs(value) < 10 else 2 if abs(value) < 100 else 1
    return f"{value:,.{digits}f} {unit}".rstrip()


def format_table(rows: Sequence[Row]) -> str:
    header = ("metric", "baseline", "code3", "ratio", "target", "result")
    lines = [
        (
            row.metric,
            _value(row.baseline, row.unit),
            _value(row.code3, row.unit),
            "-" if row.ratio is None else f"{row.ratio:.2f}x",
            row.target or "-",
            {None: "info", True: "PASS", False: "FAIL"}[row.passed],
        )
        for row in rows
    ]
    widths = [max(len(cells[i]) for cells in [header, *lines]) for i in range(len(header))]
    rule = "  ".join("-" * w for w in widths)

    def fmt(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest]).rstrip()

    return "\n".join([fmt(header), rule, *(fmt(cells) for cells in lines)])
