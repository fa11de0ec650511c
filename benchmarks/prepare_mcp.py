"""`prepare` over MCP against the same work from the CLI, in the same run, on a generated project.

The MCP side is what a user's client does: start `code3 mcp --profile reverse-spec` on stdio and call
`prepare` with the Python SDK's client (which lists the tools and checks each structured answer against
the output schema). The CLI side is `code3 spec prepare .`, which prints the whole answer. Both include
starting Python and code3; the skeleton cache is warmed by one CLI run first, so both read it.

The target (≤ 1.2x) is on the call a client makes to a started server (its first call, which imports the
reverse-spec family as the CLI does) against the CLI process; the server's start-up and the session as a
whole are printed beside it. An MCP answer is at most CODE3_MAX_ANSWER_BYTES (256 KB) as a JSON-RPC line,
so for a large tree that answer is a page; fetching every page (following `continuation`) recomputes prepare
per page, since the server keeps no state between calls (seed 000): printed too, without a target.

    python -m benchmarks.prepare_mcp [--modules 300] [--files 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import Row, format_table, median  # noqa: E402
from benchmarks.reverse_spec import make_project  # noqa: E402

MAX_RATIO = 1.2


def cli_prepare(project: Path, env: dict[str, str]) -> tuple[float, int]:
    """Seconds for `code3 spec prepare .` and the bytes it printed."""
    started = time.perf_counter()
    ran = subprocess.run([sys.executable, "-m", "code3", "spec", "prepare", "."], cwd=project, env=env,
                         capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if ran.returncode != 0:
        raise RuntimeError(f"code3 spec prepare failed: {ran.stderr.decode(errors='replace')[-2000:]}")
    return elapsed, len(ran.stdout)


async def _mcp_prepare(project: Path, env: dict[str, str], follow: bool) -> dict[str, float]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "code3", "mcp", "--profile", "reverse-spec"],
                                   env=env, cwd=project)
    figures = {"pages": 0.0, "files": 0.0}
    started = time.perf_counter()
    async with Client(params) as client:
        figures["connected"] = time.perf_counter() - started
        arguments: dict[str, Any] = {"targetPath": "."}
        while True:
            called = time.perf_counter()
            result = await client.call_tool("prepare", arguments)
            figures.setdefault("first call", time.perf_counter() - called)
            if result.is_error or not result.content:
                raise RuntimeError(f"prepare over MCP failed: {result.content}")
            answer = json.loads(result.content[0].text)  # seed 000: the text is the answer
            figures["pages"] += 1
            figures["files"] += len(answer["filePaths"])
            more = answer.get("continuation")
            if not follow or more is None:
                break
            arguments = {"targetPath": ".", "offset": more["offset"], "contextOffset": more["contextOffset"]}
        figures["answered"] = time.perf_counter() - started
    figures["session"] = time.perf_counter() - started
    return figures


def mcp_prepare(project: Path, env: dict[str, str], follow: bool = False) -> dict[str, float]:
    """Seconds: `connected` (server started and initialized), `first call` (the first prepare round trip,
    the reverse-spec family imported on it), `answered` (start to the last answer wanted), `session` (start
    to the client's exit, the server stopped); `pages` and `files` received."""
    return asyncio.run(_mcp_prepare(project, env, follow))


def measure(modules: int = 300, files: int = 10, runs: int = 3) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="code3-bench-prepare-") as tmp:
        project = Path(tmp) / "project"
        make_project(project, modules, files)
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODE3_", "ANTHROPIC_"))}
        env.update(CODE3_PROJECT=str(project), CODE3_HOME=str(home), CODE3_CACHE_DIR=str(Path(tmp) / "cache"))
        cli_prepare(project, env)  # warms the skeleton cache (and the tools/list manifest below)
        mcp_prepare(project, env)
        cli: list[float] = []
        sessions: list[dict[str, float]] = []
        for i in range(runs):  # alternating, so drift hits both
            for side in ("cli", "mcp") if i % 2 == 0 else ("mcp", "cli"):
                if side == "cli":
                    seconds, printed = cli_prepare(project, env)
                    cli.append(seconds)
                else:
                    sessions.append(mcp_prepare(project, env))
        every = mcp_prepare(project, env, follow=True)
    total = modules * files
    if every["files"] != total:
        raise RuntimeError(f"following the pages gave {every['files']:.0f} files of {total}")
    base = median(cli) * 1000

    def ms(key: str) -> float:
        return median([figures[key] for figures in sessions]) * 1000

    return [
        Row(f"prepare from the CLI: the process ({total} files, {printed // 1024} KB printed)", base, "ms"),
        Row.against_baseline(f"prepare over MCP: the call, server started ({sessions[0]['files']:.0f} files in the "
                             "first answer, within the cap) vs CLI", base, ms("first call"), "ms", MAX_RATIO),
        Row.against_baseline("prepare over MCP: server start to first answer vs CLI", base, ms("answered"), "ms"),
        Row.against_baseline("prepare over MCP: the whole session (start, answer, exit) vs CLI", base, ms("session"),
                             "ms"),
        Row.against_baseline(f"prepare over MCP: all {every['pages']:.0f} pages followed vs CLI", base,
                             every["answered"] * 1000, "ms"),
    ]


def rows() -> list[Row]:
    return measure()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modules", type=int, default=300)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    table = measure(args.modules, args.files, args.runs)
    print(format_table(table))
    sys.exit(1 if any(row.passed is False for row in table) else 0)
