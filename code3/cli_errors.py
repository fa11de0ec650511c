"""One error style for every command family (`code3 …`, `code3 loom|nexus|spec …`, `reverse-spec …`).

A refusal is `code3: CODE: message` and, on its own line, `  hint: what to do`, on stderr; with `--json`
the error object `{"code", "message", "hint"}` on stdout instead, for machines. The exit status is 1,
or 2 for the commands whose 1 already means a finding (`spec diff`: drift, `audit verify|check`: a
problem, `doctor`: a failed check), as GNU diff does. Messages and hints are scrubbed of secrets.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

# (command, action): exit 1 reports what the command found, so its own failures exit 2
FINDING_COMMANDS = frozenset({("spec", "diff"), ("audit", "verify"), ("audit", "check"), ("doctor", None)})


def failure_status(command: str | None, action: str | None = None) -> int:
    """1, or 2 for a command whose exit 1 means a finding."""
    return 2 if (command, action) in FINDING_COMMANDS or (command, None) in FINDING_COMMANDS else 1


def status_for_argv(argv: Sequence[str]) -> int:
    """`failure_status` guessed from raw arguments (a usage error happens before they are parsed)."""
    words = [a for a in argv if not a.startswith("-")]
    return failure_status(words[0] if words else None, words[1] if len(words) > 1 else None)


def wants_json(args: Any) -> bool:
    return bool(getattr(args, "json", False))


def refuse(code: str, message: str, hint: str, *, status: int = 1, as_json: bool = False,
           prog: str = "code3") -> int:
    """Print the refusal in the one style and return the exit status."""
    from adapters.scrub import scrub

    message, hint = scrub(message), scrub(hint)
    if as_json:
        print(json.dumps({"code": code, "message": message, "hint": hint}, ensure_ascii=False))
    else:
        print(f"{prog}: {code}: {message}\n  hint: {hint}", file=sys.stderr)
    return status
