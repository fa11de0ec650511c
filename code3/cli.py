"""The `code3` command line. stdout of `code3 mcp` carries JSON-RPC only; every log line goes to stderr."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any, NoReturn

from code3.settings import Settings


def _settings(args: argparse.Namespace) -> Settings:
    """The settings `main` read (and checked) before running the command, else read now."""
    found = getattr(args, "settings", None)
    if isinstance(found, Settings):
        return found
    return Settings.from_env(project=getattr(args, "project", None), identity=getattr(args, "identity", None))


def cmd_mcp(args: argparse.Namespace) -> int:
    from code3 import __version__
    from mcp_tools import manifest
    from mcp_tools.server import build_server
    from mcp_tools.stdio import run_stdio

    settings = _settings(args)

    def factory() -> Any:
        from code3.wiring import build_services

        return build_services(settings)

    tools = manifest.cached(settings.cache_dir)
    run_stdio(build_server(factory, profile=args.profile, version=__version__, tools=tools))
    return 0


def _require_local(settings: Settings, port: str, what: str) -> None:
    from domain.errors import Code, Code3Error

    if getattr(settings, port) != "local":
        raise Code3Error(Code.PRECONDITION, f"{what} works on the embedded {port} only "
                         f"(CODE3_{port.upper()}={getattr(settings, port)})",
                         "on a real chain fund accounts from a wallet; on GitHub use its web UI")


def cmd_account(args: argparse.Namespace) -> int:
    from adapters.keystore import Keystore

    if args.action == "link":
        from code3.bounty_cli import cmd_account_link

        return cmd_account_link(args)
    settings = _settings(args)
    keystore = Keystore(settings.keystore_dir)
    if args.action == "migrate":
        from code3.migrate import migrate

        print(json.dumps(migrate(settings), indent=2))
        return 0
    if args.action == "new":
        signer = keystore.new(args.target)
        print(json.dumps({"name": signer.name, "address": signer.address, "keystore": str(keystore.directory)}))
    elif args.action == "list":
        for name in keystore.names():
            print(f"{name}\t{keystore.load(name).address}")
    elif args.action == "fund":
        from code3.wiring import ledger
        from domain.bounties.amounts import display
        from domain.values import parse_amount

        amount = parse_amount(args.amount)  # checked before anything is opened: a refusal writes nothing
        _require_local(settings, "chain", "the faucet")
        import re

        # a named account must exist (the faucet creates no key); an address is funded as it is
        address = args.target if re.fullmatch(r"0x[0-9a-f]{64}", args.target) else keystore.load(args.target).address
        funded = None if address == args.target else args.target  # the key's name, when one was given
        asset = args.asset or settings.asset
        balance = ledger(settings).mint(address, asset, amount)
        print(json.dumps({"name": funded, "address": address, "asset": asset, "balance": balance,
                          "balance_display": display(balance, asset)}))
    elif args.action == "export":
        from adapters.key_export import export_key, passphrase

        if not args.out:
            raise _usage("account export", "--out FILE is required", "code3 account export NAME --out alice.code3key")
        keystore.load(args.target)  # an unknown name fails before the passphrase is asked
        print(json.dumps(export_key(keystore, args.target, Path(args.out), passphrase(confirm=True))))
    elif args.action == "import":
        from adapters.key_export import import_key, passphrase, read_export

        read_export(Path(args.target))  # a missing or foreign file fails before the passphrase is asked
        if args.new_name:
            keystore._path(args.new_name)
        print(json.dumps(import_key(keystore, Path(args.target), passphrase(confirm=False), args.new_name)))
    return 0


def _usage(command: str, message: str, example: str) -> Exception:
    from domain.errors import Code, Code3Error

    return Code3Error(Code.VALIDATION, f"code3 {command}: {message}", f"e.g. {example}")


def cmd_ledger(args: argparse.Namespace) -> int:
    from code3.wiring import ledger
    from domain.values import parse_duration

    if args.action == "advance":
        parse_duration(args.seconds, "--seconds")  # forward only, and bounded: the clock never moves back
    settings = _settings(args)
    _require_local(settings, "chain", "code3 ledger")
    chain = ledger(settings)
    if args.action == "advance":
        print(json.dumps({"now": chain.advance(args.seconds)}))
    else:
        print(json.dumps({"now": chain.now(), "bounties": [_readable(b.to_dict()) for b in chain.list_bounties()]},
                         indent=2))
    return 0


def _readable(bounty: dict[str, Any]) -> dict[str, Any]:
    """A ledger bounty as people read it: mode and status by name, the amount's human value beside it."""
    from domain.bounties.amounts import display
    from domain.bounties.contract import Mode, Status

    return {**bounty, "mode": Mode(bounty["mode"]).label, "status": Status(bounty["status"]).name.lower(),
            "amount_display": display(bounty["amount"], bounty["asset"])}


def cmd_forge(args: argparse.Namespace) -> int:
    from code3.wiring import local_forge

    settings = _settings(args)
    _require_local(settings, "forge", "code3 forge")
    local = local_forge(settings, settings.identity)
    if args.action == "create-repo":
        print(json.dumps({"repo": args.target, "url": local.create_repo(args.target)}))
    elif args.action == "merge":
        pr = local.merge_pr(args.target)
        print(json.dumps({"pr_url": pr.url, "merged": pr.merged, "merge_sha": pr.merge_sha}))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from code3 import __version__
    from code3.wiring import build_services, ensure_identity, guard, local_forge, webhook_secret
    from mcp_tools import manifest
    from mcp_tools.http.runner import serve
    from mcp_tools.http.tokens import serve_token

    if args.print_url or args.rotate_token:
        return _serve_web_login(args)
    if args.print_token:  # the one place the token is printed: the user asked for it
        try:
            token, _ = serve_token(_settings(args).secrets_dir, _settings(args).serve_token)
        except ValueError as exc:
            raise _serve_refused(str(exc)) from None
        print(token.decode())
        return 0
    if args.host not in ("127.0.0.1", "localhost", "::1") and not args.allow_remote:
        raise _usage("serve", f"refusing to bind {args.host}: the webhook and MCP endpoints would be reachable "
                     "from other machines", f"code3 serve --host {args.host} --allow-remote, if that is what you want")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"code3 serve: WARNING: listening on {args.host}, reachable beyond this machine", file=sys.stderr)
    settings = _settings(args)
    guard(settings)  # planted state is refused before a token or a key is made for the project
    try:
        token, token_file = serve_token(settings.secrets_dir, settings.serve_token)
    except ValueError as exc:
        raise _serve_refused(str(exc)) from None
    ensure_identity(settings, reports_merges=True)  # serve receives the merge webhook: the ledger's resolver
    secret = webhook_secret(settings)

    def ready(port: int) -> None:
        url = f"http://{args.host}:{port}"
        if settings.forge == "local":  # the embedded forge delivers its merges here, signed like GitHub
            local = local_forge(settings, settings.identity)
            local.add_hook(f"{url}/webhooks/github", secret.decode())
            local.close()
        # where the bearer token for /mcp is, never the token itself (`--print-token` prints it)
        auth = {"token_file": str(token_file)} if token_file else {"token_from": "CODE3_SERVE_TOKEN"}
        print(json.dumps({"listening": url, "mcp": f"{url}/mcp", "api": f"{url}/api",
                          "webhook": f"{url}/webhooks/github", "web": f"{url}/",
                          "web_login": f"code3 serve --print-url --port {port}", **auth,
                          # one serve acts as one identity (README: Running on several machines): which one
                          "identity": settings.identity, "stateless": args.stateless}), flush=True)

    serve(lambda: build_services(settings), secret, args.host, args.port, ready, token=token,
          tools=manifest.cached(settings.cache_dir), version=__version__, token_file=token_file,
          session_hours=settings.web_session_hours, stateless=args.stateless)
    return 0


def _serve_web_login(args: argparse.Namespace) -> int:
    """`--print-url`: a one-time login URL for the web page of the serve on --port (the serve checks the code
    against the same token); `--rotate-token`: a new token file, which ends every session and the old token."""
    from mcp_tools.http.tokens import rotate_token, serve_token
    from mcp_tools.web.auth import login_url, mint_code

    settings = _settings(args)
    if args.rotate_token:
        try:
            path = rotate_token(settings.secrets_dir, settings.serve_token)
        except ValueError as exc:
            raise _serve_refused(str(exc)) from None
        print(json.dumps({"rotated": True, "token_file": str(path),
                          "note": "a running serve refuses the old token and every web session from its next request; "
                                  "give MCP clients the new token (`code3 serve --print-token`)"}))
        return 0
    if not 0 < args.port <= 65535:
        raise _usage("serve", "--print-url needs the port the serve listens on",
                     "code3 serve --print-url --port 8765 (the port `code3 serve` printed)")
    try:
        token, _ = serve_token(settings.secrets_dir, settings.serve_token)
    except ValueError as exc:
        raise _serve_refused(str(exc)) from None
    print(login_url(args.host, args.port, mint_code(token, args.port)))  # good once, for ten minutes
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from code3.wiring import ensure_identity, worker
    from scheduler.worker import run_worker

    settings = _settings(args)
    token = None
    if args.metrics_port is not None:  # the serve token guards the worker's /metrics too, found the same way
        from mcp_tools.http.tokens import serve_token

        if not 0 <= args.metrics_port <= 65535:
            raise _usage("worker", f"--metrics-port {args.metrics_port} is no TCP port",
                         "code3 worker --metrics-port 9464")
        try:
            token, _ = serve_token(settings.secrets_dir, settings.serve_token)
        except ValueError as exc:
            raise _serve_refused(str(exc)) from None
    ensure_identity(settings, reports_merges=True)
    return run_worker(worker(settings), interval=args.interval, once=args.once, metrics_port=args.metrics_port,
                      token=token)


def cmd_webhooks(args: argparse.Namespace) -> int:
    from code3.wiring import build_services
    from mcp_tools.lifecycle.webhook import Inbox, process

    s = build_services(_settings(args))
    try:
        inbox = Inbox(s.views)
        if args.action == "list":
            print(json.dumps(inbox.dead(), indent=2))
            return 0
        results = []
        for letter in inbox.dead():
            inbox.revive(letter["delivery_id"])
            answer = process(s, inbox, letter["delivery_id"])
            results.append({"delivery_id": letter["delivery_id"], "status": answer.status, **answer.body})
        print(json.dumps(results, indent=2))
        return 0 if all(r["status"] == 200 for r in results) else 1
    finally:
        s.close()


def _audit_key(settings: Settings, key: str) -> str:
    """--key as an address or public key (hex), or the name of a key of this keystore (its address)."""
    import re

    from adapters.keystore import Keystore
    from domain.errors import Code, Code3Error

    if re.fullmatch(r"(0x)?[0-9a-fA-F]{64}", key):
        return key
    if re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,31}", key):
        return Keystore(settings.keystore_dir).load(key).address
    raise Code3Error(Code.VALIDATION, f"--key {key[:80]!r} is not an address, a public key or an account name",
                     "pass the expected signer's address (0x + 64 hex digits), public key (64 hex digits) or name")


def _audit_check(args: argparse.Namespace) -> int:
    from adapters.keystore import Keystore
    from domain.errors import Code, Code3Error
    from projections.audit_log import check

    path = Path(args.target)
    if not path.is_file():
        raise Code3Error(Code.NOT_FOUND, f"no export file {path}", "pass a file written by `code3 audit export`")
    settings = _settings(args)
    key = _audit_key(settings, args.key) if args.key else None
    result = check(path, key)
    for problem in result.problems:
        print(problem)
    if result.signer is not None:
        known = Keystore(settings.keystore_dir).find_address(result.signer["address"])
        mine = f" ({known} in this keystore)" if known else ""
        print(f"signed by {result.signer['address']}{mine}, public key {result.signer['public_key']}")
        if key is None and result.ok:
            print("the signature holds; pass --key ADDRESS to also require that this is the expected signer")
    print("export intact" if result.ok else f"{len(result.problems)} problem(s)")
    return 0 if result.ok else 1


def cmd_audit(args: argparse.Namespace) -> int:
    from domain.errors import Code, Code3Error

    if args.action == "check":
        return _audit_check(args)
    if args.key:
        raise _usage(f"audit {args.action}", "--key goes with check only", "code3 audit check FILE --key 0x…")
    if args.action == "export" and not Path(args.target).resolve().parent.is_dir():
        raise Code3Error(Code.NOT_FOUND, f"no directory for {args.target}", "create the directory first")
    from code3.wiring import build_services, ensure_identity
    from mcp_tools.lifecycle import audit
    from projections import audit_log

    settings = _settings(args)
    ensure_identity(settings)
    s = build_services(settings)
    try:
        if args.action == "history":
            for record in audit.history(s, args.target):
                print(json.dumps(record))
            return 0
        if args.action == "export":
            count = audit_log.export(s.store, Path(args.target), s.signer)
            print(json.dumps({"exported": count, "file": args.target, "signed_by": s.signer.address}))
            return 0
        from code3.progress import reporter

        with reporter("audit verify") as progress:  # on stderr: by pages, it can take minutes on a big store
            verdict = audit.verify(s, progress)
        print(json.dumps({"ok": verdict.ok, "events": verdict.events, "aggregates": verdict.aggregates,
                          "board_rows": verdict.board_rows, "bounties_checked": verdict.bounties_checked,
                          "problems": verdict.problems}, indent=2))
        return 0 if verdict.ok else 1
    finally:
        s.close()


def cmd_init(args: argparse.Namespace) -> int:
    from code3.init import init_project, report

    print(report(init_project(_settings(args), funds=args.fund, repo=args.repo)))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from code3.demo import run_demo

    return run_demo(keep=args.keep)


def cmd_doctor(args: argparse.Namespace) -> int:
    from code3.doctor import diagnose, report

    checks = diagnose(_settings(args))
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


def _serve_refused(problem: str) -> Exception:
    from domain.errors import Code, Code3Error

    return Code3Error(Code.PRECONDITION, f"code3 serve: {problem}",
                      "fix the serve token as the message says (`code3 serve --print-token` shows the one in use)")


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

    p = common(sub.add_parser("account", help="manage the keystore (the identities this server acts as)"))
    p.add_argument("action", choices=["new", "list", "fund", "export", "import", "migrate", "link"])
    p.add_argument("target", nargs="?", default=None, metavar="NAME|FILE",
                   help="the account's name (new, fund, export; fund also takes an address) or the exported "
                        "file (import); migrate moves an older Code3's keys and secrets from <project>/.code3/ "
                        "to CODE3_HOME")
    p.add_argument("--amount", default=None, help="with fund: amount in the asset's smallest unit, digits at most "
                                                  "2^64-1 (USDT has 6 decimals: 5000000 is 5 USDT)")
    p.add_argument("--asset", default=None, help="with fund: asset symbol (default: CODE3_ASSET)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="with export: the file to write (never replaced); the passphrase comes from "
                        "CODE3_PASSPHRASE or a prompt, never from an argument")
    p.add_argument("--name", dest="new_name", default=None,
                   help="with import: the name to store the key under (default: its exported name)")
    p.add_argument("--on", default=None, metavar="URL",
                   help="with link: the issue or PR the link statement is posted on (as a comment, with your forge "
                        "account)")
    p.add_argument("--resolver", default=None, metavar="ADDRESS",
                   help="with link: the resolver whose links to join (default: the registry's current resolver)")
    p.set_defaults(func=cmd_account)

    p = common(sub.add_parser("ledger", help="the embedded ledger: show it, or move its clock"))
    p.add_argument("action", choices=["show", "advance"])
    p.add_argument("--seconds", type=int, default=0)
    p.set_defaults(func=cmd_ledger)

    p = common(sub.add_parser("forge", help="the embedded forge: create a repository, merge a PR"))
    p.add_argument("action", choices=["create-repo", "merge"])
    p.add_argument("target", help="owner/repo for create-repo, the PR URL for merge")
    p.set_defaults(func=cmd_forge)

    p = common(sub.add_parser("serve", help="HTTP on loopback: MCP at /mcp, the ai-loom REST routes under /api, "
                                             "the GitHub webhook at /webhooks/github, the web page at /"))
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765, help="0 picks a free port (printed on stdout)")
    p.add_argument("--allow-remote", action="store_true", help="allow binding a non-loopback address")
    p.add_argument("--print-token", action="store_true",
                   help="print the bearer token /mcp and /api require (creating it on first use) and exit")
    p.add_argument("--print-url", action="store_true",
                   help="print a one-time login URL (good for 10 minutes) for the web page of the serve on --port "
                        "and exit")
    p.add_argument("--rotate-token", action="store_true",
                   help="write a new serve token file and exit: a running serve refuses the old token and ends "
                        "every web session")
    p.add_argument("--stateless", action="store_true",
                   help="keep no MCP session between requests, so several serves behind one address answer any "
                        "client (no resource subscriptions, no per-session log level; README: Running on several "
                        "machines)")
    p.set_defaults(func=cmd_serve)

    p = common(sub.add_parser("worker", help="projections, chain sync, webhook retries and payouts until SIGTERM"))
    p.add_argument("--interval", type=float, default=2.0, help="seconds between rounds (default: 2)")
    p.add_argument("--once", action="store_true", help="run one round and exit")
    p.add_argument("--metrics-port", type=int, default=None, metavar="PORT",
                   help="serve Prometheus /metrics on 127.0.0.1:PORT behind the serve token (0: a free port, printed)")
    p.set_defaults(func=cmd_worker)

    p = common(sub.add_parser("webhooks", help="the webhook dead-letter list: list it, or retry it"))
    p.add_argument("action", choices=["list", "retry"])
    p.set_defaults(func=cmd_webhooks)

    p = common(sub.add_parser("audit", help="history of an aggregate, verify by replay, export / check the log"))
    p.add_argument("action", choices=["history", "verify", "export", "check"])
    p.add_argument("target", nargs="?", default=None,
                   help="history: bounty id, task id or feature id; export/check: the JSON-lines file")
    p.add_argument("--key", default=None, metavar="ADDRESS|PUBKEY|NAME",
                   help="with check: the signer the export must be signed by (else any valid signer is shown)")
    p.set_defaults(func=cmd_audit)

    from code3.bounty_cli import add_bounty_parser

    add_bounty_parser(sub, common)

    p = common(sub.add_parser("init", help="make this git repository a Code3 project: state, identity, forge "
                                           "repository, faucet funds, .mcp.json and the `claude mcp add` line"))
    p.add_argument("--repo", help="owner/repo on the forge (default: from the git remote origin, else "
                                  "<identity>/<directory>)")
    p.add_argument("--fund", type=int, default=10_000_000,
                   help="embedded ledger: top the identity's balance up to this many smallest units (default: 10 USDT)")
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
        args.settings = settings = _settings(args)
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
