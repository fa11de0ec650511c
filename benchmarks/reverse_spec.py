"""reverse-spec batch: first run, a no-change re-run, and a re-run after one leaf's API changed.

A synthetic project of `modules` directories × `files` Python files each, layered (module i imports module
i-1), with the offline writer (no model: the figures are the engine's own cost). The no-change re-run is
what a CI job pays on every push: scan (stat cache), hash, compare keys, write nothing.

    python benchmarks/reverse_spec.py [--modules 100] [--files 10]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import Row, format_table  # noqa: E402


def make_project(root: Path, modules: int, files: int) -> None:
    for m in range(modules):
        for f in range(files):
            path = root / f"mod{m:03d}" / f"file{f:02d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            dep = f"from mod{m - 1:03d}.file{f:02d} import func{f}\n\n\n" if m else ""
            path.write_text(f'{dep}def func{f}(x: int, y: str = "a") -> int:\n    """Do {m}.{f}."""\n'
                            f"    return x + {f}\n\n\nclass Thing{f}:\n    def run(self) -> None:\n        pass\n")


def measure(modules: int = 100, files: int = 10) -> list[Row]:
    from code3.settings import Settings
    from code3.wiring import build_services, ensure_identity
    from mcp_tools.reverse_spec.batch import run_batch

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_project(root, modules, files)
        settings = Settings.from_env(env={}, project=root)
        ensure_identity(settings)
        s = build_services(settings)
        try:
            started = time.perf_counter()
            first = run_batch(s)
            cold = time.perf_counter() - started
            started = time.perf_counter()
            again = run_batch(s)
            warm = time.perf_counter() - started
            leaf = root / "mod050" / "file00.py"
            leaf.write_text(leaf.read_text() + "\n\ndef added() -> None:\n    pass\n")
            started = time.perf_counter()
            touched = run_batch(s)
            partial = time.perf_counter() - started
        finally:
            s.close()
    total = modules * files
    assert not again["successful"] and len(first["successful"]) == modules
    return [
        Row(f"batch, first run ({modules} modules, {total} files)", cold * 1000, "ms"),
        Row("batch, no-change re-run", warm * 1000, "ms", target="< 100 ms per 1000 files",
            passed=warm * 1000 <= 100 * total / 1000),
        Row(f"batch, one leaf changed ({len(touched['successful'])} modules regenerated)", partial * 1000, "ms"),
    ]


def rows() -> list[Row]:
    return measure()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--modules", type=int, default=100)
    parser.add_argument("--files", type=int, default=10)
    args = parser.parse_args()
    print(format_table(measure(args.modules, args.files)))
