"""`code3 loom …`: ai-loom annotations from the command line, through the same handlers as the MCP tools and
the REST routes (`mcp_tools.ai_loom.tools`; `lower` and `show --reveal` are the owner's alone,
`mcp_tools.ai_loom.owner`).

    add FILE START END COMMENT [--tags a,b] [--priority P0|P1|P2] [--sensitivity public|internal|secret] [--key K]
    list [--limit N] [--offset N]        show ID [--reveal]        rm ID
    edit ID [--comment C] [--tags a,b] [--priority P] [--sensitivity S] [--start N --end N]
    lower ID --to public|internal [--yes]
    stitch [--template concise|detailed] [--max-chars N] [--ids ID,ID]
    verify

Answers are JSON on stdout, except `stitch`, which prints the prompt on stdout and its stats on stderr.
`verify` records where each annotation is now (Reanchored / Orphaned events) and prints a line per
annotation (old → new lines, status, confidence) and the counts (`--json`: the same as JSON); `list`
and `show` give each annotation's `lastMove`, the last re-anchoring recorded (mcp_tools/ai_loom/moves.py).
A refusal prints one line `code3: CODE: message` (the seed's codes: NOT_FOUND, VALIDATION_ERROR, INTERNAL)
and a hint on stderr and exits 1, without a traceback (`--json`: the error object on stdout).
`show --reveal` opens a secret (or unshared internal) comment for the owner on this machine: the one
place it is ever shown. `lower` is the one way to lower a sensitivity (MCP, REST and `edit` only raise
it): it asks for confirmation (or takes `--yes`) and records who lowered it.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable
from typing import Any

from code3.settings import Settings

log = logging.getLogger("code3.loom")
PRIORITIES = ("P0", "P1", "P2")
SENSITIVITIES = ("public", "internal", "secret")


def add_loom_parser(sub: Any, common: Callable[[argparse.ArgumentParser], argparse.ArgumentParser]) -> None:
    p = sub.add_parser("loom", help="ai-loom: annotate line ranges, list/show/edit/remove them, stitch them into a "
                                    "prompt, re-anchor them after edits")
    loom = p.add_subparsers(dest="loom_command", required=True)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        found = common(loom.add_parser(name, help=help_text))
        found.set_defaults(func=run)
        return found

    c = command("add", "annotate lines START-END of FILE (a path relative to the project root)")
    c.add_argument("file", metavar="FILE")
    c.add_argument("start", type=int, metavar="START", help="first line (1-based)")
    c.add_argument("end", type=int, metavar="END", help="last line (inclusive)")
    c.add_argument("comment", metavar="COMMENT", help="the note (Markdown)")
    _fields(c)
    c.add_argument("--key", default=None, help="idempotency key: a repeat answers the same annotation")
    c = command("list", "annotations by priority, then file, then line (a page of them)")
    c.add_argument("--limit", type=int, default=None, help="page size, 1-200 (default 50)")
    c.add_argument("--offset", type=int, default=None, help="where the page starts (the last page's nextOffset)")
    c = command("show", "one annotation, with where its lines are now")
    c.add_argument("id", metavar="ID")
    c.add_argument("--reveal", action="store_true",
                   help="show a secret or unshared internal comment (on this terminal only; never over MCP or REST)")
    c = command("edit", "change an annotation; what is not given stays")
    c.add_argument("id", metavar="ID")
    c.add_argument("--comment", default=None)
    _fields(c, defaults=False)
    c.add_argument("--start", type=int, default=None, help="a new first line (with --end)")
    c.add_argument("--end", type=int, default=None, help="a new last line (with --start)")
    c = command("lower", "lower an annotation's sensitivity (the owner's act; recorded with who did it)")
    c.add_argument("id", metavar="ID")
    c.add_argument("--to", required=True, choices=SENSITIVITIES[:2], help="the new, lower sensitivity")
    c.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    c = command("rm", "delete an annotation (its history stays in the log)")
    c.add_argument("id", metavar="ID")
    c = command("stitch", "stitch annotations into a prompt (stdout) within a character budget; stats on stderr")
    c.add_argument("--template", choices=("concise", "detailed"), default=None, help="default: concise")
    c.add_argument("--max-chars", type=int, default=None, help="character budget, 200-200000 (default 4000)")
    c.add_argument("--ids", default=None, metavar="ID,ID", help="the annotations to stitch (default: all)")
    command("verify", "re-anchor every annotation on its file's current text and record the outcomes")


def _fields(c: argparse.ArgumentParser, defaults: bool = True) -> None:
    c.add_argument("--tags", default=None, metavar="a,b", help="comma-separated tags, [a-z0-9_-]{2,50}"
                                                               + ("" if defaults else " ('' clears them)"))
    c.add_argument("--priority", choices=PRIORITIES, default="P1" if defaults else None,
                   help="P0 (highest) to P2" + (" (default P1)" if defaults else ""))
    c.add_argument("--sensitivity", choices=SENSITIVITIES, default="public" if defaults else None,
                   help="secret never leaves over MCP or REST; internal only when the server shares it"
                        + (" (default public)" if defaults else ""))


def _list(value: str | None) -> list[str] | None:
    return None if value is None else [part.strip() for part in value.split(",") if part.strip()]


def _call(s: Any, args: argparse.Namespace) -> Any:
    from mcp_tools.ai_loom import moves, owner
    from mcp_tools.ai_loom import tools as loom

    name = args.loom_command
    if name == "add":
        return loom.annotate(s, filePath=args.file, startLine=args.start, endLine=args.end, comment=args.comment,
                             tags=_list(args.tags), priority=args.priority, sensitivity=args.sensitivity,
                             clientKey=args.key)
    if name == "list":
        return moves.with_last_moves(s, loom.list_contexts(s, limit=args.limit, offset=args.offset))
    if name == "show":
        return moves.with_last_move(s, owner.reveal(s, args.id) if args.reveal else loom.get_context(s, id=args.id))
    if name == "edit":
        return loom.edit(s, id=args.id, comment=args.comment, tags=_list(args.tags), priority=args.priority,
                         sensitivity=args.sensitivity, startLine=args.start, endLine=args.end)
    if name == "lower":
        return owner.lower(s, id=args.id, to=args.to, by=_who(s))
    if name == "rm":
        return loom.delete(s, id=args.id)
    if name == "stitch":
        return loom.stitch_contexts(s, templateId=args.template, annotationIds=_list(args.ids),
                                    maxChars=args.max_chars)
    return moves.verify(s)


def _who(s: Any) -> str:
    """Who lowers: the identity the CLI acts as, and the operating-system user running it."""
    import getpass

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{s.signer.name} (cli, user {user})"


def _confirmed(args: argparse.Namespace) -> bool:
    if args.loom_command != "lower" or args.yes:
        return True
    if not sys.stdin.isatty():
        return False
    print(f"lower {args.id} to {args.to}? its comment will be shown to {args.to} readers [y/N] ", end="",
          file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _refuse(args: argparse.Namespace, code: str, message: str, hint: str) -> int:
    from code3.cli_errors import refuse, wants_json

    return refuse(code, message, hint, as_json=wants_json(args))


def run(args: argparse.Namespace) -> int:
    from code3.wiring import build_services
    from domain.errors import Code3Error
    from mcp_tools.ai_loom.errors import LOOM_CODES, LoomError

    if not _confirmed(args):
        return _refuse(args, "VALIDATION_ERROR", "lowering a sensitivity needs confirmation",
                       f"answer y on a terminal, or pass --yes: code3 loom lower {args.id} --to {args.to} --yes")
    try:
        s = build_services(Settings.from_env(project=args.project, identity=args.identity))
    except Code3Error as exc:
        return _refuse(args, LOOM_CODES.get(exc.code, "INTERNAL"), exc.message, exc.hint)
    try:
        answer = _call(s, args)
    except LoomError as exc:
        return _refuse(args, exc.loom_code, exc.message, exc.hint)
    except Code3Error as exc:
        return _refuse(args, LOOM_CODES.get(exc.code, "INTERNAL"), exc.message, exc.hint)
    except Exception:  # no traceback for the user; the log has it at DEBUG
        log.debug("code3 loom %s failed", args.loom_command, exc_info=True)
        return _refuse(args, "INTERNAL", "internal error", "rerun with --log-level DEBUG for the details")
    finally:
        s.close()
    if args.loom_command == "stitch":
        print(answer["prompt"])
        print(json.dumps({k: v for k, v in answer.items() if k != "prompt"}, ensure_ascii=False), file=sys.stderr)
    elif args.loom_command == "verify" and not getattr(args, "json", False):
        from mcp_tools.ai_loom.moves import report

        print(report(answer))
    else:
        print(json.dumps(answer, ensure_ascii=False, indent=2))
    return 0
