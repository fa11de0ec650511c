"""Skeletons of a real source tree, beside `repomix --compress` on the same files, measured in the same run.

Run: `.venv/bin/python -m benchmarks.skeletons` (after scripts/install_test_tools.sh, which installs repomix
under .cache/node). The tree is a package installed from PyPI into .cache/bench/ (sympy, ~1 500 .py files) and
read from its install folder; `CODE3_BENCH_TREE=/some/dir` measures another tree instead.

Measured:
- cold scan: a fresh parser (grammars already loaded by a warm-up on a small file), files/s and MB/s;
- skeleton size (JSON of the merged skeleton) against the source size, and against repomix's output;
- no-change re-scan: the median of 5 re-scans in process, per 1 000 files (target < 100 ms);
- one touched file: the re-scan after changing one file's mtime;
- a new process's first scan with the on-disk cache (SkeletonCache(path): load + scan, no parsing);
- repomix: `repomix --compress --quiet --no-security-check --no-gitignore --stdin` given exactly the files we
  parsed (security check off so it does less work than its default; target: our cold scan is faster).
`rows()` returns benchmark.report rows for `make bench`.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from adapters.code_parser.cache import SkeletonCache  # noqa: E402
from adapters.code_parser.scan import list_sources  # noqa: E402
from adapters.code_parser.treesitter import TreeSitterCodeParser  # noqa: E402
from benchmarks.report import Row, format_table  # noqa: E402

BENCH_DIR = ROOT / ".cache" / "bench"
PACKAGE = "sympy==1.13.3"
RESCANS = 5
RESCAN_TARGET_MS = 100.0


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ensure_tree() -> Path:
    """The benchmark tree: $CODE3_BENCH_TREE, or sympy installed (no dependencies) under .cache/bench/."""
    if os.environ.get("CODE3_BENCH_TREE"):
        return Path(os.environ["CODE3_BENCH_TREE"]).resolve()
    target = BENCH_DIR / "sympy"
    if not (target / "sympy" / "__init__.py").exists():
        log(f"installing {PACKAGE} into {target} …")
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                               str(target), PACKAGE], check=False)
        if done.returncode != 0:
            # no PyPI: the npm packages scripts/install_test_tools.sh installed (typescript, repomix and their
            # dependencies, ~2 700 .js/.ts files) are an install folder of a real tree too
            node = ROOT / ".cache" / "node" / "node_modules"
            if len(list_sources(str(node)).files) >= 1000:
                log(f"pip failed; measuring {node} instead")
                return node
            raise RuntimeError(f"could not install {PACKAGE} and no other tree of 1 000 files is installed")
    return target / "sympy"


def repomix_bin() -> Path | None:
    local = ROOT / ".cache" / "node" / "node_modules" / ".bin" / "repomix"
    if local.exists():
        return local
    found = shutil.which("repomix")
    return Path(found) if found else None


def run_repomix(repomix: Path, root: Path, files: list[str]) -> tuple[float, int, int]:
    """(seconds, output bytes, files in the output) of `repomix --compress` on exactly the given files
    (paths relative to root, passed on stdin)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "repomix.xml"
        cmd = [str(repomix), "--compress", "--quiet", "--no-security-check", "--no-gitignore", "--stdin",
               "-o", str(out)]
        start = time.perf_counter()
        subprocess.run(cmd, cwd=root, check=True, input="\n".join(files) + "\n", text=True,
                       stdout=subprocess.DEVNULL, timeout=1800)
        seconds = time.perf_counter() - start
        text = out.read_text(encoding="utf-8", errors="replace")
        return seconds, len(text.encode()), text.count("<file path=")


def stub_text(merged: Any) -> str:
    """The skeleton as an LLM would read it: per file its path, then each export's signature (members
    indented), no docs, no line numbers."""
    lines: list[str] = []

    def walk(exports: Any, depth: int) -> None:
        for e in exports:
            lines.append("  " * depth + (e.signature or f"{e.kind} {e.name}"))
            walk(e.members, depth + 1)

    for f in merged.files:
        lines.append(f"# {f.path}")
        walk(f.exports, 0)
    return "\n".join(lines)


def measure(root: Path, repomix: Path | None = None, rescans: int = RESCANS) -> dict[str, Any]:
    """Every figure of the benchmark for one tree (no assertions: the caller judges)."""
    listing = list_sources(str(root))
    files = len(listing.files)
    source_bytes = sum(c.size for c in listing.files)
    TreeSitterCodeParser(workers=1).parse_source("warm.py", b"x = 1\n")  # load the runtime before timing
    parser = TreeSitterCodeParser()
    start = time.perf_counter()
    merged = parser.scan(root)
    cold = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:  # a new process's first scan, with the on-disk cache
        disk = SkeletonCache(Path(tmp) / "skeletons.sqlite")
        for (r, rel), entry in parser.cache.entries.items():
            disk.put(r, rel, entry.size, entry.mtime_ns, entry.skeleton, entry.listing)
        disk.save()
        start = time.perf_counter()
        from_disk = TreeSitterCodeParser(cache=SkeletonCache(Path(tmp) / "skeletons.sqlite")).scan(root)
        disk_start = time.perf_counter() - start
        assert from_disk.hash == merged.hash
    skeleton_bytes = len(merged.model_dump_json().encode())
    stub_bytes = len(stub_text(merged).encode())
    times = []
    for _ in range(rescans):
        start = time.perf_counter()
        again = parser.scan(root)
        times.append(time.perf_counter() - start)
        assert again.hash == merged.hash
    rescan = statistics.median(times)
    touched = root / listing.files[0].rel
    st = touched.stat()
    os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    start = time.perf_counter()
    parser.scan(root)
    one_touched = time.perf_counter() - start
    os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns))
    result: dict[str, Any] = {
        "tree": str(root), "files": files, "parsed": len(merged.files), "skipped": merged.skipped,
        "source_bytes": source_bytes, "cold_s": cold, "files_per_s": len(merged.files) / cold,
        "mb_per_s": source_bytes / cold / 1e6, "skeleton_bytes": skeleton_bytes,
        "skeleton_ratio": skeleton_bytes / source_bytes if source_bytes else 0.0,
        "stub_bytes": stub_bytes, "stub_ratio": stub_bytes / source_bytes if source_bytes else 0.0,
        "rescan_s": rescan, "rescan_ms_per_1000": rescan * 1000 / max(len(merged.files), 1) * 1000,
        "one_touched_s": one_touched, "disk_start_s": disk_start,
        "parse_errors": sum(1 for f in merged.files if f.parse_errors),
    }
    if repomix is not None:
        seconds, size, count = run_repomix(repomix, root, [f.path for f in merged.files])
        result.update({"repomix_s": seconds, "repomix_bytes": size, "repomix_files": count,
                       "repomix_files_per_s": count / seconds if seconds else 0.0,
                       "speedup_vs_repomix": seconds / cold, "size_vs_repomix": skeleton_bytes / size})
    return result


def rows_of(r: dict[str, Any]) -> list[Row]:
    out = [
        Row("skeletons: files in the tree", r["files"], "files"),
        Row("skeletons: source size", r["source_bytes"] / 1e6, "MB"),
        Row("skeletons: cold scan speed", r["files_per_s"], "files/s"),
        Row("skeletons: skeleton JSON size / source size", r["skeleton_ratio"], "x"),
        Row("skeletons: signatures-only text / source size", r["stub_ratio"], "x"),
        Row.at_most("skeletons: no-change re-scan per 1 000 files", r["rescan_ms_per_1000"], "ms", RESCAN_TARGET_MS),
        Row("skeletons: re-scan with one file touched", r["one_touched_s"] * 1000, "ms"),
        Row.against_baseline("skeletons: first scan of a new process with the on-disk cache (vs cold)", r["cold_s"],
                             r["disk_start_s"], "s"),
    ]
    if "repomix_s" in r:
        out += [
            Row.against_baseline("skeletons: cold scan time vs repomix --compress", r["repomix_s"], r["cold_s"], "s",
                                 max_ratio=1.0),
            Row.against_baseline("skeletons: JSON size vs repomix --compress output", r["repomix_bytes"] / 1e6,
                                 r["skeleton_bytes"] / 1e6, "MB"),
            Row.against_baseline("skeletons: signatures-only text vs repomix --compress output",
                                 r["repomix_bytes"] / 1e6, r["stub_bytes"] / 1e6, "MB"),
        ]
    else:
        out.append(Row("skeletons: repomix not installed (scripts/install_test_tools.sh)", 0, ""))
    return out


def rows() -> list[Row]:
    return rows_of(measure(ensure_tree(), repomix_bin()))


def main() -> int:
    r = measure(ensure_tree(), repomix_bin())
    print(f"tree: {r['tree']} ({r['files']} source files, {r['source_bytes'] / 1e6:.1f} MB; skipped {r['skipped']}; "
          f"{r['parse_errors']} files with parse errors)")
    print(f"cold scan: {r['cold_s']:.2f} s = {r['files_per_s']:.0f} files/s, {r['mb_per_s']:.1f} MB/s")
    print(f"skeleton: {r['skeleton_bytes'] / 1e6:.2f} MB JSON = {r['skeleton_ratio']:.3f}x the source; "
          f"signatures-only text {r['stub_bytes'] / 1e6:.2f} MB = {r['stub_ratio']:.3f}x")
    print(f"no-change re-scan: {r['rescan_s'] * 1000:.1f} ms = {r['rescan_ms_per_1000']:.1f} ms per 1 000 files "
          f"(target < {RESCAN_TARGET_MS:.0f})")
    print(f"one file touched: {r['one_touched_s'] * 1000:.1f} ms")
    print(f"new parser with the on-disk cache (load + scan): {r['disk_start_s']:.2f} s")
    if "repomix_s" in r:
        print(f"repomix --compress: {r['repomix_s']:.2f} s for {r['repomix_files']} files = "
              f"{r['repomix_files_per_s']:.0f} files/s, output {r['repomix_bytes'] / 1e6:.2f} MB")
        print(f"ratios: cold scan {r['speedup_vs_repomix']:.2f}x faster than repomix; skeleton JSON "
              f"{r['size_vs_repomix']:.2f}x and signatures-only text {r['stub_bytes'] / r['repomix_bytes']:.2f}x "
              "repomix's output size")
    print()
    rows_list = rows_of(r)
    print(format_table(rows_list))
    return 0 if all(row.passed is not False for row in rows_list) else 1


if __name__ == "__main__":
    sys.exit(main())
