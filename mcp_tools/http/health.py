"""What a supervisor and a scraper ask `code3 serve`: /healthz (the process answers), /readyz (it reaches its
database; `?verbose`, with the serve token, says why not) and /metrics (Prometheus, behind the serve token).

`readiness` is also the question `serve`'s outage watchdog asks (`Front.ready`, PostgreSQL only).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from adapters import metrics
from mcp_tools.binding import Runtime
from mcp_tools.http.gate import authorized

log = logging.getLogger("code3.serve")

READY_TIMEOUT_S = 5.0


def add_health_routes(server: Any, runtime: Runtime, current_token: Callable[[], bytes]) -> None:
    """/healthz, /readyz and /metrics on `server` (an MCPServer, before its app is built); this process's
    counters start here. `current_token()`: the serve token as it is now (for /readyz?verbose)."""

    @server.custom_route("/healthz", methods=["GET"])
    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    @server.custom_route("/readyz", methods=["GET"])
    async def ready(request: Request) -> Response:
        """200 `ready` or 503 `not ready` and nothing more without the token; `?verbose` with it adds why."""
        verbose = "verbose" in request.query_params
        if verbose and not authorized(request.scope, current_token()):
            return JSONResponse({"error": "unauthorized", "message": "/readyz?verbose needs the serve token"},
                                status_code=401, headers={"www-authenticate": 'Bearer realm="code3"'})
        error: str | None = "Timeout"
        with anyio.move_on_after(READY_TIMEOUT_S):  # a probe stuck on a silent network answers not ready
            error = await anyio.to_thread.run_sync(lambda: readiness(runtime), abandon_on_cancel=True)
        status = 503 if error else 200
        if verbose:
            from adapters.db_outage import OUTAGE

            return JSONResponse({"ready": not error, "error": error, "unreachable_s": round(OUTAGE.seconds(), 1)},
                                status_code=status)
        return Response("not ready" if error else "ready", status_code=status, media_type="text/plain")

    metrics.enable()  # this process's counters start with its app; /metrics is behind the token (`Front`)

    @server.custom_route("/metrics", methods=["GET"])
    async def prometheus(request: Request) -> Response:
        body = await anyio.to_thread.run_sync(lambda: metrics.exposition(store_figures(runtime.run)))
        return Response(body, media_type=metrics.CONTENT_TYPE)


def readiness(runtime: Runtime, local_too: bool = True) -> str | None:
    """None when this serve reaches its database, else the class of the error that keeps it from it. Before the
    services exist they are built (once, by whichever call comes first); on SQLite, a `SELECT 1` on the file
    (`local_too`; the outage watchdog asks only about PostgreSQL)."""
    from adapters.pg_pool import PgPool, probe

    if PgPool.all():
        return probe()
    try:
        services = runtime.services()
        if local_too and not services.views.postgres:
            services.views.query("SELECT 1")
    except Exception as exc:
        return type(exc).__name__
    return None


def store_figures(run: Callable[[Callable[[Any], Any]], Any]) -> dict[str, Any] | None:
    """The store's figures for /metrics (`projections.operations`), read through `run(fn(services))`; None
    (`code3_store_up 0`) when the store does not answer, so a scrape still reports this process."""
    from projections.operations import snapshot

    def read(s: Any) -> dict[str, Any]:
        return snapshot(s.store, s.views).metrics(s.chain.now())

    try:
        return run(read)
    except Exception:
        log.warning("metrics: the store could not be read", exc_info=True)
        return None
