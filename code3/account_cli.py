"""`code3 account`, `code3 ledger` and `code3 forge`: the keystore's identities, and the embedded ledger's and
forge's own commands (a faucet, a movable clock, a merge button) that have no equivalent on a real service."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from code3.command_args import Common, settings_of, usage
from code3.settings import Settings


def add_account_parsers(sub: Any, common: Common) -> None:
    p = common(sub.add_parser("account", help="manage the keystore (the identities this server acts as)"))
    p.add_argument("action", choices=["new", "list", "fund", "balance", "export", "import", "migrate", "link"])
    p.add_argument("target", nargs="?", default=None, metavar="NAME|FILE",
                   help="the account's name (new, fund, balance, export; fund and balance also take an address; "
                        "balance defaults to --identity) or the exported "
                        "file (import); migrate moves an older Code3's keys and secrets from <project>/.code3/ "
                        "to CODE3_HOME")
    p.add_argument("--amount", default=None, help="with fund: amount in the asset's smallest unit, digits at most "
                                                  "2^64-1 (USDT has 6 decimals: 5000000 is 5 USDT)")
    p.add_argument("--asset", default=None, help="with fund, balance: asset symbol (default: CODE3_ASSET)")
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

    p = common(sub.add_parser("forge", help="the embedded forge: create a repository, merge a PR, push your "
                                            "code to it or pull merged work back (code3/forge_cli.py)"))
    p.add_argument("action", choices=["create-repo", "merge", "push", "pull"])
    p.add_argument("target", nargs="?", default=None,
                   help="owner/repo for create-repo, the PR URL for merge; for push and pull the repository "
                        "(default: the one code3 init set up)")
    p.set_defaults(func=cmd_forge)



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
    settings = settings_of(args)
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
    elif args.action == "balance":
        print(json.dumps(_balance(settings, keystore, args.target or settings.identity, args.asset or settings.asset)))
    elif args.action == "export":
        from adapters.key_export import export_key, passphrase

        if not args.out:
            raise usage("account export", "--out FILE is required", "code3 account export NAME --out alice.code3key")
        keystore.load(args.target)  # an unknown name fails before the passphrase is asked
        print(json.dumps(export_key(keystore, args.target, Path(args.out), passphrase(confirm=True))))
    elif args.action == "import":
        from adapters.key_export import import_key, passphrase, read_export

        read_export(Path(args.target))  # a missing or foreign file fails before the passphrase is asked
        if args.new_name:
            keystore._path(args.new_name)
        print(json.dumps(import_key(keystore, Path(args.target), passphrase(confirm=False), args.new_name)))
    return 0


def _balance(settings: Settings, keystore: Any, who: str, asset: str) -> dict[str, Any]:
    """An identity's (or an address's) balance as the chain port reads it: smallest units and human value."""
    import re

    from code3.wiring import chain
    from domain.bounties.amounts import display

    address = who if re.fullmatch(r"0x[0-9a-f]{64}", who) else keystore.load(who).address  # unknown name: refused
    ledger = chain(settings)
    try:
        balance = ledger.balance(address, asset)
    finally:
        getattr(ledger, "close", lambda: None)()
    return {"name": None if address == who else who, "address": address, "asset": asset, "balance": balance,
            "balance_display": display(balance, asset), "chain": settings.chain}


def cmd_ledger(args: argparse.Namespace) -> int:
    from code3.wiring import ledger
    from domain.values import parse_duration

    if args.action == "advance":
        parse_duration(args.seconds, "--seconds")  # forward only, and bounded: the clock never moves back
    settings = settings_of(args)
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

    settings = settings_of(args)
    _require_local(settings, "forge", "code3 forge")
    if args.action in ("push", "pull"):
        from code3.forge_cli import cmd_sync

        return cmd_sync(settings, args.action, args.target)
    if not args.target:
        raise usage(f"forge {args.action}", "the target is required",
                    "code3 forge create-repo acme/app" if args.action == "create-repo" else
                    "code3 forge merge local://forge/acme/app/pull/1")
    local = local_forge(settings, settings.identity)
    if args.action == "create-repo":
        print(json.dumps({"repo": args.target, "url": local.create_repo(args.target)}))
    elif args.action == "merge":
        pr = local.merge_pr(args.target)
        print(json.dumps({"pr_url": pr.url, "merged": pr.merged, "merge_sha": pr.merge_sha}))
    return 0


