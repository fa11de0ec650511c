"""`code3 nexus …`: the CodeNexus tools from the command line (the same handlers as over MCP).

Answers are printed as JSON on stdout; a refusal is the one CLI style (code3/cli_errors.py): `code3: CODE:
message` and a hint on stderr, exit 1 (`--json`: the error object on stdout).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from code3.settings import Settings


def add_parser(sub: Any, common: Callable[[argparse.ArgumentParser], argparse.ArgumentParser]) -> None:
    p = sub.add_parser("nexus", help="CodeNexus: tag, comment and relate files; query them; derive imports; "
                                     "follow renames")
    nexus = p.add_subparsers(dest="nexus_command", required=True)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        found = common(nexus.add_parser(name, help=help_text))
        found.set_defaults(func=run)
        return found

    c = command("tag", "add tags to a file")
    c.add_argument("path")
    c.add_argument("tags", nargs="+")
    c = command("untag", "remove tags from a file")
    c.add_argument("path")
    c.add_argument("tags", nargs="+")
    c = command("comment", "set a file's comment (Markdown)")
    c.add_argument("path")
    c.add_argument("text")
    c = command("relate", "create a relationship between two files")
    c.add_argument("source")
    c.add_argument("target")
    c.add_argument("type", help="imports, calls, configures or depends_on")
    c.add_argument("--description", default="")
    c = command("unrelate", "remove a relationship")
    c.add_argument("source")
    c.add_argument("target")
    c.add_argument("type")
    c = command("describe-tag", "give a tag a description and a colour")
    c.add_argument("tag")
    c.add_argument("description")
    c.add_argument("--color", default=None)
    c = command("query", "find files by tags (AND), comment words, relationships")
    c.add_argument("--tag", action="append", dest="tags", default=None)
    c.add_argument("--comment", default=None, help="words the comment must contain (case-insensitive)")
    c.add_argument("--related-to", default=None)
    c.add_argument("--type", default=None)
    c.add_argument("--limit", type=int, default=20)
    c.add_argument("--offset", type=int, default=0)
    c = command("show", "a file's metadata and its relationships in both directions")
    c.add_argument("path")
    c = command("tags", "every tag with its description, colour and file count")
    c = command("derive", "derive imports relationships from the code (marked derived)")
    c.add_argument("path", nargs="?", default=".")
    command("sync", "move metadata with the files renamed in git since the last sync")


def _call(s: Any, args: argparse.Namespace) -> Any:
    from mcp_tools.codenexus import derive, extras, renames, resources, tools

    name = args.nexus_command
    if name == "tag":
        return tools.add_tag(s, args.path, args.tags)
    if name == "untag":
        return extras.remove_tag(s, args.path, args.tags)
    if name == "comment":
        return tools.add_comment(s, args.path, args.text)
    if name == "relate":
        return tools.create_relationship(s, args.source, args.target, args.type, args.description)
    if name == "unrelate":
        return extras.remove_relationship(s, args.source, args.target, args.type)
    if name == "describe-tag":
        return extras.describe_tag(s, args.tag, args.description, args.color)
    if name == "query":
        return tools.query_files(s, tags=args.tags, comment_contains=args.comment, related_to=args.related_to,
                                 relationship_type=args.type, limit=args.limit, offset=args.offset)
    if name == "show":
        return {"file": resources.file_metadata(s, args.path),
                "relationships": resources.file_relationships(s, args.path)}
    if name == "tags":
        return resources.all_tags(s)
    if name == "derive":
        return derive.derive_relationships(s, args.path)
    return renames.sync_renames(s)


# the seed's JSON-RPC error codes, as the CLI's codes
_CODES = {-32000: "E_NOT_FOUND", -32001: "E_UNAUTHORIZED", -32002: "E_VALIDATION", -32602: "E_VALIDATION"}


def refusal(exc: Any, command: str) -> tuple[str, str, str]:
    """(code, message, hint) of a CodeNexus failure: the Code3Error it was made from when there is one (its
    own code and hint), else the JSON-RPC error's code and details."""
    from domain.errors import Code3Error

    origin = exc.__context__
    if isinstance(origin, Code3Error):
        return origin.code.value, origin.message, origin.hint or f"see `code3 nexus {command} --help`"
    data = exc.error.data if isinstance(exc.error.data, dict) else {}
    return (_CODES.get(exc.error.code, "E_INTERNAL"), str(data.get("details") or exc.error.message),
            f"see `code3 nexus {command} --help`")


def run(args: argparse.Namespace) -> int:
    from mcp.shared.exceptions import MCPError

    from code3.cli_errors import refuse, wants_json
    from code3.wiring import build_services

    s = build_services(Settings.from_env(project=args.project, identity=args.identity))
    try:
        print(json.dumps(_call(s, args), ensure_ascii=False, indent=2))
        return 0
    except MCPError as exc:
        return refuse(*refusal(exc, args.nexus_command), as_json=wants_json(args))
    finally:
        s.close()
