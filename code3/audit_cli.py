"""`code3 audit`: an aggregate's history, verification by replay, and the signed export of the log and its check."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from code3.command_args import Common, settings_of, usage
from code3.settings import Settings


def add_audit_parser(sub: Any, common: Common) -> None:
    p = common(sub.add_parser("audit", help="history of an aggregate, verify by replay, export / check the log"))
    p.add_argument("action", choices=["history", "verify", "export", "check"])
    p.add_argument("target", nargs="?", default=None,
                   help="history: bounty id, task id or feature id; export/check: the JSON-lines file")
    p.add_argument("--key", default=None, metavar="ADDRESS|PUBKEY|NAME",
                   help="with check: the signer the export must be signed by (else any valid signer is shown)")
    p.set_defaults(func=cmd_audit)



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
    settings = settings_of(args)
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
        raise usage(f"audit {args.action}", "--key goes with check only", "code3 audit check FILE --key 0x…")
    if args.action == "export" and not Path(args.target).resolve().parent.is_dir():
        raise Code3Error(Code.NOT_FOUND, f"no directory for {args.target}", "create the directory first")
    from code3.wiring import build_services, ensure_identity
    from mcp_tools.lifecycle import audit
    from projections import audit_log

    settings = settings_of(args)
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


