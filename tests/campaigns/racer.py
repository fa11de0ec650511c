"""One racer of the race campaign, in its own process: build the services of an identity, wait for the
start signal (a file appearing), run one handler, print the answer (or the error code) as JSON."""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path


def main() -> int:
    project, identity, command, arguments, go = sys.argv[1:6]
    from code3.settings import Settings
    from code3.wiring import build_services
    from domain.errors import Code3Error
    from mcp_tools.ai_loom import tools as loom
    from mcp_tools.lifecycle import publish, settle, work

    def loom_edit(s: object, comment: str, **rest: object) -> object:
        """Each racer writes its own comment, so that every one of them has to land."""
        return loom.edit(s, comment=f"{comment} by racer {os.getpid()}", **rest)  # type: ignore[arg-type]

    handlers = {"publish": publish.publish_issue_with_metadata, "accept": work.accept_task,
                "submit": work.submit_pr, "claim": settle.claim_payout, "cancel": settle.cancel_bounty,
                "loom_edit": loom_edit}
    services = build_services(Settings(project=Path(project), identity=identity,
                                       database_url=os.environ.get("CODE3_RACE_DATABASE_URL") or None))
    deadline = time.monotonic() + 60
    while not Path(go).exists() and time.monotonic() < deadline:
        time.sleep(0.002)
    if ":" in command:  # "package.module:function": any handler; "{racer}" in the arguments is this racer's id
        module, _, name = command.partition(":")
        handlers[command] = getattr(importlib.import_module(module), name)
        arguments = arguments.replace("{racer}", str(os.getpid()))
    try:
        answer = {"ok": handlers[command](services, **json.loads(arguments))}
    except Code3Error as exc:
        answer = {"error": exc.code.value, "message": exc.message}
    except Exception as exc:  # CodeNexus answers JSON-RPC errors (seed 002), raised only once the SDK is imported
        sdk = sys.modules.get("mcp.shared.exceptions")  # not imported here: it costs most of a racer's start
        if sdk is None or not isinstance(exc, sdk.MCPError):
            raise
        answer = {"error": exc.error.code, "message": exc.error.message}
    finally:
        services.close()
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
