"""The `code3` command line. stdout of `code3 mcp` carries JSON-RPC only; every log line goes to stderr."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any, NoReturn

from code3.command_args import settings_of


def cmd_mcp(args: argparse.Namespace) -> int:
    from code3 import __version__
    from mcp_tools import manifest
    from mcp_tools.server import build_server
    from mcp_tools.stdio import run_stdio

    settings = settings_of(args)
    from adapters.home import check_home_outside_work_trees

    check_home_outside_work_trees(settings.home_dir, settings.keystore)  # refused before any JSON-RPC line

    def factory() -> Any:
        from code3.wiring import build_services

        return build_services(settings)

    tools = manifest.cached(settings.cache_dir)
    run_stdio(build_server(factory, profile=args.profile, version=__version__, tools=tools))
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from code3.init import init_project, report

    print(report(init_project(settings_of(args), funds=args.fund, repo=args.repo, role=args.role)))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from code3.demo import run_demo

    return run_demo(keep=args.keep)


def cmd_doctor(args: argparse.Namespace) -> int:
    from code3.doctor import diagnose, report

    checks = diagnose(settings_of(args))
    if getattr(args, "json", False):
        from dataclasses import asdict

        print(json.dumps([asdict(c) for c in checks], indent=2))
    else:
        print(report(checks))
    return 0 if all(c.ok for c in checks) else 1  # 1: a check failed (a finding); doctor's own failure is 2


def cmd_config(args: argparse.Namespace) -> int:
    from code3.settings import describe

    print(describe())
    return 0


class _UsageError(Exception):
    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog, self.message = prog, message


class _Parser(argparse.ArgumentParser):
    """Bad arguments answer like every other refusal (code3/cli_errors.py): one coded line and a hint."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(self.prog, message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="code3", description="Event-sourced bounty workflows over MCP.")
    parser.add_argument("--log-level", default=None, help="stderr log level (default: CODE3_LOG_LEVEL or WARNING)")
    sub = parser.add_subparsers(dest="command", required=True)

    parser.add_argument("--json", action="store_true", help=JSON_HELP)

    def common(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=JSON_HELP)
        p.add_argument("--project", help="project root (default: CODE3_PROJECT or the current directory)")
        p.add_argument("--identity", help="keystore name to act as (default: CODE3_IDENTITY or 'default')")
        return p

    p = common(sub.add_parser("mcp", help="MCP server over stdio"))
    from mcp_tools.catalog import PROFILES

    p.add_argument("--profile", default="all", choices=list(PROFILES),
                   help="which seed server to stand in for: its tools, resources and serverInfo (default: all)")
    p.set_defaults(func=cmd_mcp)

    from code3.account_cli import add_account_parsers

    add_account_parsers(sub, common)

    from code3.serve_cli import add_serve_parsers

    add_serve_parsers(sub, common)

    from code3.audit_cli import add_audit_parser

    add_audit_parser(sub, common)

    from code3.bounty_cli import add_bounty_parser

    add_bounty_parser(sub, common)

    p = common(sub.add_parser("init", help="make this git repository a Code3 project: state, identity, forge "
                                           "repository, faucet funds, .mcp.json and the `claude mcp add` line"))
    p.add_argument("--repo", help="owner/repo on the forge (default: from the git remote origin, else "
                                  "<identity>/<directory>)")
    p.add_argument("--fund", type=int, default=10_000_000,
                   help="embedded ledger: top the identity's balance up to this many smallest units (default: 10 USDT)")
    p.add_argument("--role", default="sponsor", choices=["sponsor", "worker", "knowledge", "all"],
                   help="the .mcp.json entry's profile: sponsor (entry `code3`, --profile sponsor; the default), "
                        "worker (`code3-worker`, --profile server), knowledge (`code3-knowledge`, --profile "
                        "knowledge) or all (`code3-all`, every tool)")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("demo", help="run a whole bounty lifecycle on a throw-away embedded project")
    p.add_argument("--keep", action="store_true", help="keep the demo project directory and print its path")
    p.set_defaults(func=cmd_demo)

    sub.add_parser("config", help="list the environment variables and their defaults").set_defaults(func=cmd_config)
    common(sub.add_parser("doctor", help="which forge, chain and store are in use, and whether they answer")
           ).set_defaults(func=cmd_doctor)
    from code3.nexus_cli import add_parser as add_nexus_parser

    add_nexus_parser(sub, common)
    from code3.spec_cli import add_spec_parser

    add_spec_parser(sub, common)
    from code3.loom_cli import add_loom_parser

    add_loom_parser(sub, common)
    return parser


JSON_HELP = "machine-readable output: a refusal is the error object {code, message, hint} as JSON on stdout"
# keyed by (command, action), the action None for a command without one (looked up for every command)
_NEEDS_TARGET: dict[tuple[str, str | None], str] = {
    ("account", "new"): "NAME", ("account", "fund"): "NAME", ("account", "export"): "NAME",
    ("account", "import"): "FILE", ("audit", "history"): "ID", ("audit", "export"): "FILE", ("audit", "check"): "FILE"}


def main(argv: list[str] | None = None) -> int:
    from code3.cli_errors import failure_status, refuse, status_for_argv

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help
        return int(exc.code or 0) if isinstance(exc.code, int) else 2
    except _UsageError as exc:
        return refuse("E_VALIDATION", f"{exc.prog}: {exc.message}", f"see `{exc.prog} --help`",
                      status=status_for_argv(argv), as_json="--json" in argv)

    def _refuse(code: str, message: str, hint: str) -> int:
        return refuse(code, message, hint, status=failure_status(args.command, getattr(args, "action", None)),
                      as_json=bool(getattr(args, "json", False)))

    from adapters.scrub import ScrubFilter
    from domain.errors import Code3Error

    try:  # every variable is checked before anything is opened: a bad one is refused by name
        args.settings = settings = settings_of(args)
    except Code3Error as exc:
        return _refuse(exc.code.value, exc.message, exc.hint)
    level = (args.log_level or settings.log_level).upper()
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level, logging.WARNING),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(ScrubFilter())  # no secret reaches a log line, whoever logged it
        if settings.log_format == "json":
            from adapters.log_format import JsonFormatter

            handler.setFormatter(JsonFormatter())
    what = _NEEDS_TARGET.get((args.command, getattr(args, "action", None)))
    if what and not args.target:
        return _refuse("E_VALIDATION", f"code3 {args.command} {args.action}: {what} is required",
                       f"see `code3 {args.command} --help`")
    try:
        return int(args.func(args) or 0)
    except Code3Error as exc:
        return _refuse(exc.code.value, exc.message, exc.hint)
    except KeyboardInterrupt:
        print("code3: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # no traceback for the user; the log has it at DEBUG
        logging.getLogger("code3.cli").debug("unexpected failure", exc_info=True)
        return _refuse("E_INTERNAL", f"{type(exc).__name__}: {exc}",
                       "rerun with --log-level DEBUG for the details, and report it if it persists")
