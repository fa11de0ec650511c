"""`code3 bounty …` and `code3 account link`: what sponsors, workers and the resolver do outside the MCP tools.

- `bounty cancel ID`: the sponsor ends an unmerged bounty and takes their share of the pool back;
- `bounty dispute ID --reason TEXT`: the sponsor during cooling, or a worker with a submitted PR, disputes;
- `bounty rule ID --pay | --refund | --share BPS`: the bounty's resolver rules an open dispute;
- `bounty withdraw-refund ID`: a funder of a refunded bounty takes their share;
- `bounty show ID`: the bounty as the log mirrors it: submissions, rejections, the dispute, rulings, payouts;
- `account link --on URL`: publish this identity's link statement (a comment on an issue or PR, written with its
  forge account), and record the link at once when this keystore holds a resolver's key.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from code3.command_args import settings_of

BOUNTY_ACTIONS = ("cancel", "dispute", "rule", "withdraw-refund", "show")


def add_bounty_parser(sub: Any, common: Callable[[argparse.ArgumentParser], argparse.ArgumentParser]) -> None:
    p = common(sub.add_parser("bounty", help="sponsor, worker and resolver actions outside the MCP tools"))
    p.add_argument("action", choices=BOUNTY_ACTIONS,
                   help="cancel: end an unmerged bounty (the sponsor's share back); dispute: open a dispute with "
                        "--reason; rule: the resolver rules (--pay, --refund or --share BPS); withdraw-refund: a "
                        "funder's share of a refund; show: the bounty with its submissions, dispute and rulings")
    p.add_argument("bounty_id")
    p.add_argument("--reason", default=None, help="with dispute: why (1 to 500 bytes; the resolver reads it)")
    ruling = p.add_mutually_exclusive_group()
    ruling.add_argument("--pay", action="store_true", help="with rule: the whole pool to the claimant")
    ruling.add_argument("--refund", action="store_true", help="with rule: the whole pool back to the funders")
    ruling.add_argument("--share", type=int, default=None, metavar="BPS",
                        help="with rule: this many basis points (0-10000) to the claimant, the rest refunded")
    p.set_defaults(func=cmd_bounty)


def cmd_bounty(args: argparse.Namespace) -> int:
    from code3.wiring import build_services
    from domain.errors import Code, Code3Error
    from mcp_tools.lifecycle import settle

    if not args.bounty_id.isascii() or not args.bounty_id.isdigit() or len(args.bounty_id) > 20:
        raise Code3Error(Code.VALIDATION, f"invalid bounty id {args.bounty_id[:40]!r}",
                         "pass the bounty's id, a number (publish and accept_task report it)")
    settings = settings_of(args)
    if args.action == "dispute" and not args.reason:
        raise Code3Error(Code.VALIDATION, "code3 bounty dispute: --reason is required",
                         "e.g. code3 bounty dispute 3 --reason \"the merged PR breaks the login page\"")
    share = _share(args) if args.action == "rule" else None
    if args.action == "rule" and not getattr(args, "identity", None):
        settings = replace(settings, identity=settings.resolver_name)  # the resolver's key rules
    s = build_services(settings)
    try:
        if args.action == "cancel":
            answer = settle.cancel_bounty(s, args.bounty_id)
        elif args.action == "dispute":
            answer = settle.dispute(s, args.bounty_id, args.reason)
        elif args.action == "rule":
            assert share is not None
            answer = settle.rule(s, args.bounty_id, share)
        elif args.action == "withdraw-refund":
            answer = settle.withdraw_refund(s, args.bounty_id)
        else:
            answer = show(s, args.bounty_id)
        print(json.dumps(answer, indent=2 if args.action == "show" else None))
        return 0
    finally:
        s.close()


def _share(args: argparse.Namespace) -> int:
    from domain.bounties.contract import BPS
    from domain.errors import Code, Code3Error

    if args.pay:
        return BPS
    if args.refund:
        return 0
    if args.share is None or not 0 <= args.share <= BPS:
        raise Code3Error(Code.VALIDATION, "code3 bounty rule: say --pay, --refund or --share BPS (0 to 10000)",
                         "e.g. code3 bounty rule 3 --share 5000 (half to the claimant, half refunded)")
    return int(args.share)


def show(s: Any, bounty_id: str) -> dict[str, Any]:
    """The bounty as the log mirrors it (synced with the chain first), amounts with their human value."""
    from domain.bounties.amounts import display
    from domain.bounties.contract import Status
    from domain.bounties.issue import Issue
    from mcp_tools.lifecycle.chain_record import require_bounty
    from projections.bounties import board

    b = require_bounty(s, bounty_id)
    links = {link["account"]: link["login"] for link in board.links(s.views)}
    issue = s.store.get(Issue, Issue.create_id(b.issue_hash))
    # what a dispute is ruled against: the spec whose digest the issue hash (the publish's key) carries
    spec = {"issue_hash": b.issue_hash, "feature_id": issue.feature_id, "spec_path": issue.spec_path,
            "spec_digest": issue.spec_digest, "issue_url": issue.url} if issue is not None else {
        "issue_hash": b.issue_hash}
    return {
        "bounty_id": b.bounty_id, "repo": b.repo, "repo_id": b.repo_id, "state": Status(b.status).name, "spec": spec,
        "mode": b.mode, "sponsor": b.sponsor, "resolver": b.resolver, "asset": b.asset,
        "amount": str(b.amount), "amount_display": display(b.amount, b.asset),
        "pool": str(b.pool), "pool_display": display(b.pool, b.asset), "deadline": b.deadline,
        "submissions": [{"worker": w, "forge_user": links.get(w), **{k: v for k, v in sub.items() if k != "tx_hash"}}
                        for w, sub in b.submissions.items()],
        "rejections": b.rejections, "winner": b.winner, "winner_forge_user": links.get(b.winner or ""),
        "merged_pr": b.merged_pr, "cooling_until": b.cooling_until, "dispute": b.dispute, "rulings": b.rulings,
        "split": b.split, "payouts": [{**p, "amount": str(p["amount"])} for p in b.payouts],
        "refund_total": str(b.refund_total), "refunds": {k: str(v) for k, v in b.refunds.items()},
        "tips": [{**t, "amount": str(t["amount"])} for t in b.tips],
    }


def cmd_account_link(args: argparse.Namespace) -> int:
    """Publish the link statement on `--on URL` (an issue or PR of the forge), and link at once when a resolver's key
    is here; otherwise the bounty's resolver links it the first time a PR of yours merges."""
    from adapters.keystore import Keystore
    from code3.wiring import build_services
    from domain.errors import Code, Code3Error
    from domain.values import parse_forge_url
    from mcp_tools.lifecycle.identity import ensure_published, linked_address
    from mcp_tools.lifecycle.resolver import link, published_statement

    settings = settings_of(args)
    if not args.on:
        raise Code3Error(Code.VALIDATION, "code3 account link: --on URL is required",
                         "pass an issue or PR URL of the forge the statement is posted on, e.g. the bounty's issue")
    target = parse_forge_url(args.on)
    s = build_services(settings)
    resolver_services = None
    try:
        registry = s.chain.config().resolver
        resolver = args.resolver or registry
        answer: dict[str, Any] = {**ensure_published(s, resolver, target.repo, target.number), "resolver": resolver}
        keys = Keystore(settings.keystore_dir)
        name = next((n for n in keys.names() if keys.load(n).address == resolver), None)
        if answer["status"] != "linked" and name is not None:
            resolver_services = build_services(replace(settings, identity=name))
            found = published_statement(resolver_services, s.forge.actor_id, [(target.repo, target.number)])
            if found is None:
                raise Code3Error(Code.PRECONDITION, "the statement was posted but the resolver could not read it back",
                                 "check the comment on the forge, then run this again")
            link(resolver_services, found, s.forge.actor)
            answer["status"] = "linked" if linked_address(s, resolver) == s.signer.address else answer["status"]
        elif answer["status"] != "linked":
            answer["note"] = ("the bounty's resolver records this link the first time it needs it (a merge of your "
                              "PR); nothing is paid to an unlinked author")
        print(json.dumps(answer))
        return 0
    finally:
        s.close()
        if resolver_services is not None:
            resolver_services.close()
