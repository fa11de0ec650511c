"""A cold first `prepare` over MCP against `repomix --compress`, files per second, on the real corpus.

Per package of the corpus (scripts/fetch_corpus.sh fills $CORPUS_DIR, default .cache/corpus) that holds 100
or more source files code3 parses: the package is copied into a fresh project (no `.code3`, no skeleton
cache), `code3 mcp --profile reverse-spec` is started on stdio with the Python SDK's client, and the first
`prepare` of the package's directory is timed (the call, the server started: what a user's first question
costs; the server's start-up is printed beside it and has its own target in `make bench`). In the same run
`repomix --compress` packs exactly the files code3 parsed (their paths on stdin). Target: code3's files/s ≥ 2×
repomix's. Until the corpus is fetched, `CODE3_BENCH_TREE=/some/dir` measures one tree.

    python -m benchmarks.realcode_prepare [--min-files 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from adapters.code_parser.scan import list_sources  # noqa: E402
from benchmarks.report import Row, format_table  # noqa: E402
from benchmarks.skeletons import repomix_bin, run_repomix  # noqa: E402

MIN_RATIO = 2.0
MIN_FILES = 100


def corpus_dir() -> Path:
    return Path(os.environ.get("CORPUS_DIR") or ROOT / ".cache" / "corpus")


def source_root(package: Path) -> Path:
    """The package's own sources: an npm prefix's node_modules/<name> (its dependencies are not it), else the
    unpacked directory."""
    if (package / "node_modules").is_dir():
        name = package.name.rsplit("@", 1)[0]
        if (package / "node_modules" / name).is_dir():
            return package / "node_modules" / name
    return package


def packages() -> list[tuple[str, Path]]:
    """(label, source directory) of every corpus package, or $CODE3_BENCH_TREE alone."""
    if os.environ.get("CODE3_BENCH_TREE"):
        tree = Path(os.environ["CODE3_BENCH_TREE"]).resolve()
        return [(tree.name, tree)]
    found = []
    base = corpus_dir()
    for language in sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []:
        for package in sorted(p for p in language.iterdir() if p.is_dir()):
            found.append((f"{language.name}/{package.name}", source_root(package)))
    return found


async def _first_prepare(project: Path, env: dict[str, str]) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "code3", "mcp", "--profile", "reverse-spec"],
                                   env=env, cwd=project)
    started = time.perf_counter()
    async with Client(params) as client:
        connected = time.perf_counter() - started
        called = time.perf_counter()
        result = await client.call_tool("prepare", {"targetPath": "."})
        seconds = time.perf_counter() - called
        if result.is_error or not result.content:
            raise RuntimeError(f"prepare over MCP failed: {result.content}")
        answer = json.loads(result.content[0].text)  # seed 000: the text is the answer
    return {"connected": connected, "call": seconds, "files": answer["mergedSkeleton"]["files"],
            "first page files": len(answer["filePaths"])}


def measure_one(label: str, tree: Path, repomix: Path | None) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="code3-bench-realprepare-") as tmp:
        project = Path(tmp) / "project"
        shutil.copytree(tree, project, symlinks=True)
        files = [c.rel for c in list_sources(str(project)).files]
        if len(files) < MIN_FILES:
            return [Row(f"{label}: {len(files)} source files (under {MIN_FILES}: not measured)", float(len(files)),
                        "files")]
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODE3_", "ANTHROPIC_"))}
        env.update(CODE3_PROJECT=str(project), CODE3_HOME=str(home), CODE3_CACHE_DIR=str(Path(tmp) / "cache"))
        mcp = asyncio.run(_first_prepare(project, env))
        rows = [Row(f"{label}: server start-up (initialize answered)", mcp["connected"] * 1000, "ms")]
        ours = mcp["files"] / mcp["call"]
        if repomix is None:
            return [*rows, Row(f"{label}: cold first prepare over MCP ({mcp['files']} files; no repomix to compare)",
                               ours, "files/s")]
        from adapters.code_parser.treesitter import TreeSitterCodeParser  # after the call: its cache stays cold

        parsed = [f.path for f in TreeSitterCodeParser().scan(project).files]  # the files prepare parsed (not
        seconds, _size, _marks = run_repomix(repomix, project, parsed)  # the generated ones the scan skips)
        packed = len(parsed)  # not its `<file path=` count: that text also occurs inside files (repomix's own)
        theirs = packed / seconds if seconds else 0.0
        ratio = ours / theirs if theirs else 0.0
        return [*rows, Row(f"{label}: cold first prepare over MCP ({mcp['files']} files, {mcp['first page files']} "
                           f"in the first page) vs repomix --compress ({packed} files)", ours,
                           "files/s", theirs, f"≥ {MIN_RATIO:g}x", ratio >= MIN_RATIO)]


def measure(min_files: int = MIN_FILES) -> list[Row]:
    global MIN_FILES
    MIN_FILES = min_files
    repomix = repomix_bin()
    rows: list[Row] = []
    for label, tree in packages():
        rows.extend(measure_one(label, tree, repomix))
    if not any(row.passed is not None for row in rows):
        rows.append(Row(f"no corpus package of {min_files}+ files under {corpus_dir()} (scripts/fetch_corpus.sh)",
                        0.0, "", target="a package measured", passed=False))
    return rows


def rows() -> list[Row]:
    return measure()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--min-files", type=int, default=MIN_FILES)
    args = parser.parse_args()
    table = measure(args.min_files)
    print(format_table(table))
    sys.exit(1 if any(row.passed is False for row in table) else 0)
