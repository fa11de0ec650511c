"""What the real-code benchmarks (benchmarks.realcode_python, _javascript, _go_rust) share: where the corpus is,
issue 19's targets, and how a package's figures become table rows, so the three languages are scored alike."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from benchmarks.report import Row

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("CODE3_CORPUS_DIR") or ROOT / ".cache" / "corpus")
EXPORT_TARGET, MEMBER_TARGET, EDGE_TARGET, DRIFT_TARGET = 0.98, 0.95, 0.95, 0.95


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ratio(hit: int, total: int) -> float:
    """hit / total, 1.0 when there is nothing to find (no oracle item missed, none claimed wrongly)."""
    return hit / total if total else 1.0


def target_row(metric: str, value: float, target: float) -> Row:
    return Row(metric, value, "", None, f"≥ {target}", value >= target)


def api_rows(label: str, export_recall: float, export_precision: float, member_recall: float,
             edge_recall: float, edge_precision: float) -> list[Row]:
    """A package's five figures against the oracle, each against its target."""
    return [target_row(f"{label} export recall", export_recall, EXPORT_TARGET),
            target_row(f"{label} export precision", export_precision, EXPORT_TARGET),
            target_row(f"{label} member recall", member_recall, MEMBER_TARGET),
            target_row(f"{label} import-edge recall", edge_recall, EDGE_TARGET),
            target_row(f"{label} import-edge precision", edge_precision, EDGE_TARGET)]


def drift_rows(label: str, kinds: Mapping[str, tuple[float, float]]) -> list[Row]:
    """Drift precision and recall per kind (added, removed, changed), each against the drift target."""
    return [target_row(f"{label} {kind} {metric}", value, DRIFT_TARGET)
            for kind, (precision, recall) in kinds.items()
            for metric, value in (("precision", precision), ("recall", recall))]
