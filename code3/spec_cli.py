"""`code3 spec prepare|generate|batch|diff`: the reverse-spec tools on the command line.

Each prints the tool's JSON answer on stdout; a failure is the one CLI style (code3/cli_errors.py):
`code3: CODE: spec prepare: message` and a hint on stderr, exit 1 (`--json`: the error object on stdout);
the seed's "prepare 失败: …" text is the MCP tools' dialect. `diff` exits 1 when it finds drift (for CI)
unless `--accept` rewrote the baseline, 2 when it fails, and says on stderr when there is no drift;
`batch` draws a progress bar (rich) on stderr and exits 1 when a module failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_tools.reverse_spec.answers import BatchAnswer


def add_spec_parser(sub: Any, common: Callable[[argparse.ArgumentParser], argparse.ArgumentParser]) -> None:
    p = common(sub.add_parser("spec", help="reverse-spec: skeletons, generated specs, batch, drift checks"))
    actions = p.add_subparsers(dest="action", required=True)
    a = common(actions.add_parser("prepare", help="the skeleton and model context of a file or directory"))
    a.add_argument("target")
    a.add_argument("--deep", action="store_true", help="add function bodies (secrets redacted)")
    a = common(actions.add_parser("generate", help="write <output-dir>/<target>.spec.md"))
    a.add_argument("target")
    a.add_argument("--deep", action="store_true", help="add function bodies (secrets redacted) to the context")
    a.add_argument("--output-dir", default="specs")
    a = common(actions.add_parser("batch", help="a spec per module, dependencies first, incremental"))
    a.add_argument("root", nargs="?", default=None, help="project root or a directory in it (default: the root)")
    a.add_argument("--force", action="store_true", help="regenerate every module")
    a.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    a.add_argument("--prune", action="store_true", help="delete the stale specs (their module is gone) the answer "
                   "lists in staleSpecs")
    a = common(actions.add_parser("diff", help="drift between a spec's baseline and the source (exit 1 on drift)"))
    a.add_argument("spec")
    a.add_argument("source")
    a.add_argument("--accept", action="store_true", help="rewrite the spec's baseline to the current source "
                   "(the prose is kept) and record who accepted the drift")
    a.add_argument("--include", action="append", default=None, metavar="GLOB",
                   help="compare only the files matching this fnmatch pattern (project-relative; repeatable)")
    a.add_argument("--exclude", action="append", default=None, metavar="GLOB",
                   help="leave out the files matching this fnmatch pattern (project-relative; repeatable)")
    a.add_argument("--tests-as-api", action="store_true", help="count test files (*_test.go, test_*.py, tests/, "
                   "*.test.ts, …) as API; by default they are left out")
    p.set_defaults(func=cmd_spec)


def _batch(s: Any, args: argparse.Namespace) -> BatchAnswer:
    from mcp_tools.reverse_spec.batch import run_batch

    if args.no_progress:
        return run_batch(s, args.root, args.force, prune=args.prune)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("[bold]reverse-spec batch"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.description}"))
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task = bar.add_task("scanning", total=None)

        def progress(done: int, total: int, message: str) -> None:
            bar.update(task, completed=done, total=total, description=message)

        return run_batch(s, args.root, args.force, progress, prune=args.prune)


def cmd_spec(args: argparse.Namespace) -> int:
    from adapters.redact import redact
    from code3.cli_errors import failure_status, refuse, wants_json
    from code3.settings import Settings
    from code3.wiring import build_services
    from domain.errors import Code3Error

    settings = Settings.from_env(project=getattr(args, "project", None), identity=getattr(args, "identity", None))
    status = failure_status("spec", args.action)  # 2 for diff, whose 1 means drift

    def refused(exc: Code3Error) -> int:
        return refuse(exc.code.value, f"spec {args.action}: {redact(exc.message).text}", redact(exc.hint).text,
                      status=status, as_json=wants_json(args))

    try:
        s = build_services(settings)
    except Code3Error as exc:
        return refused(exc)
    try:
        if args.action == "prepare":
            from mcp_tools.reverse_spec.prepare import prepare_answer

            answer: Mapping[str, Any] = prepare_answer(s, args.target, args.deep)
        elif args.action == "generate":
            from mcp_tools.reverse_spec.generate import generate

            answer = generate(s, args.target, args.deep, args.output_dir)
        elif args.action == "batch":
            answer = _batch(s, args)
        else:
            from mcp_tools.reverse_spec.diff import check_drift

            answer = check_drift(s, args.spec, args.source, accept=args.accept,
                                 tests_as_api=args.tests_as_api, include=args.include, exclude=args.exclude)
    except Code3Error as exc:
        return refused(exc)
    finally:
        s.close()
    print(json.dumps(answer, ensure_ascii=False, indent=2))
    if args.action == "diff":
        if answer["hasDrift"] and not answer["accepted"]:
            summary = answer["summary"]
            print(f"drift: {summary['high']} high, {summary['medium']} medium, {summary['low']} low — "
                  f"{answer['recommendation']}", file=sys.stderr)
            return 1
        if answer["hasDrift"]:
            print(f"drift accepted: {args.spec} now matches {args.source}", file=sys.stderr)
        else:
            print(f"no drift: {args.spec} matches {args.source}", file=sys.stderr)
        return 0
    if args.action == "batch" and answer["failed"]:
        print(f"batch: {len(answer['failed'])} module(s) failed", file=sys.stderr)
        return 1
    return 0
