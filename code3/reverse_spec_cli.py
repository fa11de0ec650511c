"""The reverse-spec seed's entry command: `reverse-spec mcp-server` runs `code3 mcp --profile reverse-spec`
(MCP over stdio, serverInfo reverse-spec 2.0.0, the tools prepare, generate, batch and diff).
`reverse-spec prepare|generate|batch|diff …` are `code3 spec …`; refusals in the one CLI style
(code3/cli_errors.py), exit 1.
"""

from __future__ import annotations

import sys

USAGE = ("usage: reverse-spec mcp-server [--project DIR]\n"
         "       reverse-spec prepare|generate|batch|diff … (as `code3 spec …`; see code3 spec --help)")
_HINT = "use `reverse-spec mcp-server` or `reverse-spec prepare|generate|batch|diff …` (reverse-spec --help)"


def main(argv: list[str] | None = None) -> int:
    from code3.cli_errors import refuse

    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if not args:
        return refuse("E_VALIDATION", "reverse-spec: a command is required", _HINT, as_json=False)
    from code3.cli import main as code3_main

    if args[0] == "mcp-server":
        return code3_main(["mcp", "--profile", "reverse-spec", *args[1:]])
    if args[0] in ("prepare", "generate", "batch", "diff"):
        return code3_main(["spec", *args])
    return refuse("E_VALIDATION", f"reverse-spec: unknown command {args[0][:80]!r}", _HINT, as_json="--json" in args)


if __name__ == "__main__":
    raise SystemExit(main())
