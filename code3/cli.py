"""The `code3` command line. stdout of `code3 mcp` carries JSON-RPC only; every log line goes to stderr."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any

from code3.settings import VARIABLES, Settings


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env(project=getattr(args, "project", None), identity=getattr(args, "identity", None))


def cmd_mcp(args: argparse.Namespace) -> int:
    from mcp_tools.server import build_server

    settings = _settings(args)

    def factory() -> Any:
        from code3.wiring import build_services

        return build_services(settings)

    build_server(factory, profile=args.profile).run()
    return 0


def cmd_account(args: argparse.Namespace) -> int:
    from adapters.keystore import Keystore

    settings = _settings(args)
    keystore = Keystore(settings.keystore_dir)
    if args.action == "new":
        signer = keystore.new(args.name)
        print(json.dumps({"name": signer.name, "address": signer.address, "keystore": str(keystore.directory)}))
    elif args.action == "list":
        for name in keystore.names():
            print(f"{name}\t{keystore.load(name).address}")
    elif args.action == "fund":
        from code3.wiring import ledger

        signer = keystore.load(args.name)
        balance = ledger(settings).mint(signer.address, args.asset or settings.asset, args.amount)
        print(json.dumps({"name": signer.name, "address": signer.address, "asset": args.asset or settings.asset,
                          "balance": balance}))
    return 0


def cmd_ledger(args: argparse.Namespace) -> int:
    from code3.wiring import ledger

    chain = ledger(_settings(args))
    if args.action == "advance":
        print(json.dumps({"now": chain.advance(args.seconds)}))
    else:
        print(json.dumps({"now": chain.now(), "bounties": [b.to_dict() for b in chain.list_bounties()]}, indent=2))
    return 0


def cmd_forge(args: argparse.Namespace) -> int:
    from code3.wiring import forge

    settings = _settings(args)
    local = forge(settings, settings.identity)
    if args.action == "create-repo":
        print(json.dumps({"repo": args.target, "url": local.create_repo(args.target)}))
    elif args.action == "merge":
        pr = local.merge_pr(args.target)
        print(json.dumps({"pr_url": pr.url, "merged": pr.merged, "merge_sha": pr.merge_sha}))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from code3.demo import run_demo

    return run_demo(keep=args.keep)


def cmd_config(args: argparse.Namespace) -> int:
    for name, meaning in VARIABLES.items():
        print(f"{name}\n    {meaning}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="code3", description="Event-sourced bounty workflows over MCP.")
    parser.add_argument("--log-level", default=None, help="stderr log level (default: CODE3_LOG_LEVEL or WARNING)")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--project", help="project root (default: CODE3_PROJECT or the current directory)")
        p.add_argument("--identity", help="keystore name to act as (default: CODE3_IDENTITY or 'default')")
        return p

    p = common(sub.add_parser("mcp", help="MCP server over stdio"))
    p.add_argument("--profile", default="all", choices=["client-local", "client-remote", "server", "all"],
                   help="which tools to expose (default: all)")
    p.set_defaults(func=cmd_mcp)

    p = common(sub.add_parser("account", help="manage the keystore (the identities this server acts as)"))
    p.add_argument("action", choices=["new", "list", "fund"])
    p.add_argument("name", nargs="?", default=None)
    p.add_argument("--amount", type=int, default=0, help="with fund: amount in the smallest unit")
    p.add_argument("--asset", default=None, help="with fund: asset symbol (default: CODE3_ASSET)")
    p.set_defaults(func=cmd_account)

    p = common(sub.add_parser("ledger", help="the embedded ledger: show it, or move its clock"))
    p.add_argument("action", choices=["show", "advance"])
    p.add_argument("--seconds", type=int, default=0)
    p.set_defaults(func=cmd_ledger)

    p = common(sub.add_parser("forge", help="the embedded forge: create a repository, merge a PR"))
    p.add_argument("action", choices=["create-repo", "merge"])
    p.add_argument("target", help="owner/repo for create-repo, the PR URL for merge")
    p.set_defaults(func=cmd_forge)

    p = sub.add_parser("demo", help="run a whole bounty lifecycle on a throw-away embedded project")
    p.add_argument("--keep", action="store_true", help="keep the demo project directory and print its path")
    p.set_defaults(func=cmd_demo)

    sub.add_parser("config", help="list the environment variables and their defaults").set_defaults(func=cmd_config)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    level = (args.log_level or Settings.from_env().log_level).upper()
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level, logging.WARNING),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command in ("account",) and args.action in ("new", "fund") and not args.name:
        print(f"code3 account {args.action}: a NAME is required", file=sys.stderr)
        return 2
    from domain.errors import Code3Error

    try:
        return int(args.func(args) or 0)
    except Code3Error as exc:
        print(f"code3: {exc.code.value}: {exc.message}\n  hint: {exc.hint}", file=sys.stderr)
        return 1
