"""`serve`: `code3 serve`'s process — the app (`app.build_app`) under uvicorn until SIGINT or SIGTERM.

On the way up: the heap settled once the app is built and the bound port reported (`on_ready`); the outage
watchdog started (a serve out of reach of its database too long exits 3, to be restarted). On the way down:
uvicorn's graceful stop (open SSE streams are cut after 5 s), a hard stop `STOP_GRACE_S` after the signal at the
latest (threads stuck on a silent database must not hold it), and exit status 0.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mcp_tools.http.app import build_app
from mcp_tools.manifest import Entry

STOP_GRACE_S = 10.0  # after SIGTERM, the process ends this long after at the latest (adapters/shutdown.py)


def serve(factory: Callable[[], Any], secret: bytes, host: str, port: int, on_ready: Callable[[int], None],
          token: bytes | None = None, tools: Iterable[Entry] | None = None, version: str = "0",
          token_file: Path | None = None, session_hours: float = 12.0, stateless: bool = False) -> None:
    """Run until SIGINT/SIGTERM (uvicorn stops gracefully on both). `version`: Code3's, for serverInfo."""
    import uvicorn

    # an MCP client's open SSE stream must not hold a SIGTERM up: after 5 s the remaining connections are cut
    app = build_app(factory, secret, host, token=token, tools=tools, version=version, token_file=token_file,
                    session_hours=session_hours, stateless=stateless)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=5,
                            log_config=None)  # uvicorn's lines through the root handlers: scrubbed, JSON on request
    server = uvicorn.Server(config)
    from adapters.db_watchdog import outage_limit, watchdog

    watchdog(outage_limit(), check=app.ready)  # out of reach of its database too long: exit 3, to be restarted

    original = server.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets)
        from adapters.process_heap import settle_after_start

        settle_after_start()  # full collections no longer pause every call for 60-90 ms
        bound = server.servers[0].sockets[0].getsockname()[1] if server.servers else port
        on_ready(bound)

    server.startup = startup  # type: ignore[method-assign]
    graceful = server.handle_exit

    def handle_exit(sig: int, frame: Any) -> None:  # uvicorn's handler, bound when it starts serving
        from adapters.shutdown import exit_after

        exit_after(STOP_GRACE_S)  # past uvicorn's own 5 s, threads stuck on a silent database must not hold the stop
        graceful(sig, frame)

    server.handle_exit = handle_exit  # type: ignore[method-assign]
    # uvicorn re-raises the signal after its graceful shutdown; exit 0 then, as a clean stop should.
    signal.signal(signal.SIGTERM, _exit_cleanly)
    signal.signal(signal.SIGINT, _exit_cleanly)
    server.run()


def _exit_cleanly(signum: int, frame: Any) -> None:
    raise SystemExit(0)
