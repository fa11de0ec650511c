"""What every `code3` command reads from its parsed arguments: the settings (read and checked once, by `main`)
and a usage refusal in the commands' own words."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from code3.settings import Settings

Common = Callable[[argparse.ArgumentParser], argparse.ArgumentParser]
"""Adds the options every command shares (--json, --project, --identity) to a subcommand's parser."""


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings `main` read (and checked) before running the command, else read now."""
    found = getattr(args, "settings", None)
    if isinstance(found, Settings):
        return found
    return Settings.from_env(project=getattr(args, "project", None), identity=getattr(args, "identity", None))


def usage(command: str, message: str, example: str) -> Exception:
    from domain.errors import Code, Code3Error

    return Code3Error(Code.VALIDATION, f"code3 {command}: {message}", f"e.g. {example}")
