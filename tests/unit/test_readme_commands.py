"""The docs tell a newcomer every command there is and what each setting means: the command table of
docs/commands.md lists every `code3` command the parser knows, and docs/configuration.md's table the variables a
first run meets."""

from __future__ import annotations

import argparse
from pathlib import Path

from code3.cli import build_parser
from code3.settings import VARIABLES

DOCS = Path(__file__).resolve().parents[2] / "docs"
COMMANDS = (DOCS / "commands.md").read_text(encoding="utf-8")
CONFIGURATION = (DOCS / "configuration.md").read_text(encoding="utf-8")


def section(page: str, title: str) -> str:
    start = page.index(f"\n## {title}\n")
    end = page.find("\n## ", start + 1)
    return page[start: end if end > 0 else None]


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(found[0].choices) if found else {}


def test_the_command_table_lists_every_command_and_the_families_actions() -> None:
    table = section(COMMANDS, "The command table")
    commands = subcommands(build_parser())
    assert {"init", "spec", "nexus", "loom"} <= set(commands)
    missing = [name for name in commands if f"| `code3 {name}" not in table]
    assert not missing, f"the command table of docs/commands.md omits {missing}"
    for family in ("spec", "nexus", "loom"):
        row = next(line for line in table.splitlines() if line.startswith(f"| `code3 {family} "))
        actions = subcommands(commands[family])
        assert all(action in row for action in actions), (family, [a for a in actions if a not in row])


def test_every_variable_is_documented_and_the_resolver_in_the_configuration_table() -> None:
    assert [name for name in VARIABLES if name not in CONFIGURATION] == []
    rows = [line for line in CONFIGURATION.splitlines() if line.startswith("| `CODE3_RESOLVER` |")]
    assert len(rows) == 1 and "resolver" in rows[0] and "merge" in rows[0] and "code3 serve" in rows[0]
