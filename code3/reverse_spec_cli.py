"""The reverse-spec seed's entry command: `reverse-spec mcp-server` runs `code3 mcp --profile reverse-spec`
(MCP over stdio, serverInfo reverse-spec 2.0.0, the tools prepare, generate, batch and diff).
`reverse-spec prepare|generate|batch|diff …` are `code3 spec …`.
"""

from __future__ import annotations

import sys

USAGE = ("usage: reverse-spec mcp-server [--project DIR]\n"
         "       reverse-spec prepare|generate|batch|diff … (as `code3 spec …`; see code3 spec --help)")


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not args else sys.stdout)
        return 2 if not args else 0
    from code3.cli import main as code3_main

    if args[0] == "mcp-server":
        return code3_main(["mcp", "--profile", "reverse-spec", *args[1:]])
    if args[0] in ("prepare", "generate", "batch", "diff"):
        return code3_main(["spec", *args])
    print(f"reverse-spec: unknown command {args[0]!r}\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
