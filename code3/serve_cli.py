"""`code3 serve`, `code3 worker` and `code3 webhooks`: the long-running processes (the HTTP front and the
background worker) and the webhook dead-letter list they share."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from code3.command_args import Common, settings_of, usage


def add_serve_parsers(sub: Any, common: Common) -> None:
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
                        "client (no resource subscriptions, no per-session log level; docs/operations.md: Sessions "
                        "behind one address)")
    p.set_defaults(func=cmd_serve)

    p = common(sub.add_parser("worker", help="projections, chain sync, webhook retries and payouts until SIGTERM"))
    p.add_argument("--interval", type=float, default=2.0, help="seconds between rounds (default: 2)")
    p.add_argument("--once", action="store_true",
                   help="run one round, print one line per thing it did (payouts, refunds, mirrored transitions) "
                        "and exit")
    p.add_argument("--metrics-port", type=int, default=None, metavar="PORT",
                   help="serve Prometheus /metrics on 127.0.0.1:PORT behind the serve token (0: a free port, printed)")
    p.set_defaults(func=cmd_worker)

    p = common(sub.add_parser("webhooks", help="the webhook dead-letter list: list it, or retry it"))
    p.add_argument("action", choices=["list", "retry"])
    p.set_defaults(func=cmd_webhooks)



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
            token, _ = serve_token(settings_of(args).secrets_dir, settings_of(args).serve_token)
        except ValueError as exc:
            raise _serve_refused(str(exc)) from None
        print(token.decode())
        return 0
    if args.host not in ("127.0.0.1", "localhost", "::1") and not args.allow_remote:
        raise usage("serve", f"refusing to bind {args.host}: the webhook and MCP endpoints would be reachable "
                     "from other machines", f"code3 serve --host {args.host} --allow-remote, if that is what you want")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"code3 serve: WARNING: listening on {args.host}, reachable beyond this machine", file=sys.stderr)
    settings = settings_of(args)
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
                          # one serve acts as one identity (docs/operations.md, "Identities"): which one
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

    settings = settings_of(args)
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
        raise usage("serve", "--print-url needs the port the serve listens on",
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

    settings = settings_of(args)
    token = None
    if args.metrics_port is not None:  # the serve token guards the worker's /metrics too, found the same way
        from mcp_tools.http.tokens import serve_token

        if not 0 <= args.metrics_port <= 65535:
            raise usage("worker", f"--metrics-port {args.metrics_port} is no TCP port",
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

    s = build_services(settings_of(args))
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


def _serve_refused(problem: str) -> Exception:
    from domain.errors import Code, Code3Error

    return Code3Error(Code.PRECONDITION, f"code3 serve: {problem}",
                      "fix the serve token as the message says (`code3 serve --print-token` shows the one in use)")


