"""`code3 serve`: one HTTP process on loopback — MCP streamable HTTP at /mcp, the ai-loom REST twins under
/api and the GitHub webhook.

The webhook, the REST routes and the tools share one Runtime (one set of services, built once) and run
concurrently, each in a worker thread: a slow call (a publish waiting on the forge) stalls no other
(`mcp_tools.binding.Runtime` says what keeps that safe).

Every route but the webhook (authenticated by its HMAC signature) and /healthz needs the serve token
as `Authorization: Bearer <token>` (`Front`): /mcp, the REST routes under /api (their OpenAPI
description and docs page included) and the web page at / when it comes. The token is
`CODE3_SERVE_TOKEN`, or generated once into `CODE3_HOME/projects/<key>/serve_token` (0600 in a 0700
directory, outside the work tree). `Front` also answers POST /mcp bodies that are not JSON (-32700) or
not a JSON-RPC message (-32600) itself, the same way in both protocol eras, with seed 002's
`data: {type, details, timestamp}` as every Code3 JSON-RPC error (`mcp_tools.dialects`).
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import signal
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from adapters import metrics
from mcp_tools.ai_loom.rest import build_rest
from mcp_tools.binding import Runtime
from mcp_tools.dialects import INVALID_REQUEST, PARSE_ERROR, error_data, with_data
from mcp_tools.manifest import Entry
from mcp_tools.server import build_server

log = logging.getLogger("code3.serve")

MAX_BODY = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB
MAX_MCP_BODY = 4 * 1024 * 1024  # the SDK's own cap for a streamable-HTTP request body
TOKEN_FILE = "serve_token"
MIN_TOKEN_LENGTH = 16
OPEN_PATHS = frozenset({"/webhooks/github", "/healthz", "/readyz"})  # the webhook has its HMAC; health says nothing


class TooLarge(Exception):
    pass


# --- the serve token --------------------------------------------------------------------------------------------------

def serve_token(state_dir: Path, configured: str | None = None) -> tuple[bytes, Path | None]:
    """The bearer token `serve` requires, and the file it lives in (None when it comes from the environment).

    Generated on first use (32 random bytes, URL-safe) into `state_dir/serve_token` (the project's secrets
    directory in CODE3_HOME, never the work tree), created 0600 in a
    0700 directory and never rewritten: racing first starts agree on the first one written. The token is
    registered with the scrubber, so no log line or error message carries it.
    """
    from adapters.private_files import private_dir, read_or_create_private
    from adapters.scrub import register_secret

    if configured is not None:
        if len(configured) < MIN_TOKEN_LENGTH or any(c.isspace() for c in configured):
            raise ValueError(f"CODE3_SERVE_TOKEN must be at least {MIN_TOKEN_LENGTH} characters without spaces")
        register_secret(configured)
        return configured.encode(), None
    path = private_dir(state_dir) / TOKEN_FILE
    token = read_or_create_private(path, secrets.token_urlsafe(32).encode()).strip()
    if len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(f"{path} holds no usable token; delete it and start `code3 serve` again")
    register_secret(token)
    return token, path


class LiveToken:
    """The serve token as it is now. A token from a file is read again when the file changes (`code3 serve
    --rotate-token` replaces it), so a rotation refuses the old token and ends every web session at once,
    without a restart; a file that is gone or unusable refuses every token until a new one is written. One
    `stat` per request: no timer, nothing held."""

    def __init__(self, token: bytes, path: Path | None = None) -> None:
        self._token = token
        self.path = path
        self._stamp = _stamp(path) if path is not None else None
        self._lock = threading.Lock()

    def current(self) -> bytes:
        if self.path is None:
            return self._token
        stamp = _stamp(self.path)
        if stamp != self._stamp:
            with self._lock:
                self._token, self._stamp = self._reread(), stamp
        return self._token

    def _reread(self) -> bytes:
        from adapters.private_files import read_private
        from adapters.scrub import register_secret

        assert self.path is not None
        try:
            token = (read_private(self.path) or b"").strip()
        except Exception as exc:  # a planted or loose file is refused as at start
            log.warning("the serve token file %s cannot be used (%s): every request is refused until "
                        "`code3 serve --rotate-token` writes a new one", self.path, type(exc).__name__)
            token = b""
        if len(token) < MIN_TOKEN_LENGTH:
            if token:
                log.warning("the serve token file %s holds no usable token: every request is refused", self.path)
            return secrets.token_urlsafe(32).encode()  # known to nobody: fail closed
        register_secret(token)
        log.warning("the serve token changed (%s): the old token and every web session are refused from now on",
                    self.path)
        return token


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def rotate_token(state_dir: Path, configured: str | None = None) -> Path:
    """Write a new serve token into its file (0600, atomically: a reader sees the old or the new); a running
    serve picks it up at its next request (`LiveToken`). Refused when the token comes from CODE3_SERVE_TOKEN."""
    from adapters.private_files import private_dir, write_private

    if configured is not None:
        raise ValueError("the serve token comes from CODE3_SERVE_TOKEN: change that variable and restart the serve "
                         "instead (--rotate-token replaces only a token file)")
    path = private_dir(state_dir) / TOKEN_FILE
    write_private(path, secrets.token_urlsafe(32).encode())
    return path


def authorized(scope: dict[str, Any], token: bytes) -> bool | None:
    """True for the right bearer token, False for a wrong one, None when none was sent (constant-time compare)."""
    values = [v for k, v in scope.get("headers", []) if k == b"authorization"]
    if not values:
        return None
    if len(values) > 1:
        return False
    scheme, _, given = values[0].partition(b" ")
    if scheme.lower() != b"bearer":
        return False
    return hmac.compare_digest(given.strip(), token)


# --- bounded bodies ---------------------------------------------------------------------------------------------------

def declared_length(scope: dict[str, Any]) -> int | None:
    for key, value in scope.get("headers", []):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def read_capped(receive: Callable[[], Any], cap: int, declared: int | None) -> bytes:
    """The request body, read chunk by chunk; TooLarge as soon as it passes `cap` (checked against the
    declared Content-Length first, so an announced oversize body is not read at all)."""
    if declared is not None and declared > cap:
        raise TooLarge
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise anyio.EndOfStream
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            raise TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


# --- the Host check ---------------------------------------------------------------------------------------------------

LOOPBACK = ("127.0.0.1", "localhost", "::1")
WEBHOOK_PATH = "/webhooks/github"  # GitHub's deliveries come through a tunnel: their Host is the tunnel's


def host_security(host: str) -> Any:
    """The SDK's DNS-rebinding settings for a server bound to `host`: on loopback, only loopback Host and Origin
    headers (the SDK's own defaults); None (no check) when bound elsewhere, as the SDK does."""
    from mcp.server.transport_security import TransportSecuritySettings

    if host not in LOOPBACK:
        return None
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                                     allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])


def _allowed(value: str, allowed: list[str]) -> bool:
    return value in allowed or any(a.endswith(":*") and value.startswith(a[:-1]) for a in allowed)


def misdirected(scope: dict[str, Any], security: Any) -> tuple[int, str] | None:
    """(status, message) for a request whose Host (421) or Origin (403) header is not the server's own, as the
    SDK answers on /mcp; one check for every route (/mcp, /api, the page), so a web page that rebinds a name
    to 127.0.0.1 reaches none of them."""
    if security is None:
        return None
    headers = {k: v for k, v in scope.get("headers", [])}
    host = headers.get(b"host", b"").decode("latin-1")
    if not host or not _allowed(host, security.allowed_hosts):
        return 421, "the Host header names another server (DNS-rebinding protection): connect to the address " \
                    "code3 serve printed (127.0.0.1 or localhost)"
    origin = headers.get(b"origin", b"").decode("latin-1")
    if origin and not _allowed(origin, security.allowed_origins):
        return 403, "requests from another site's page are refused (the Origin header is not this server's)"
    return None


# --- the front --------------------------------------------------------------------------------------------------------

class Front:
    """ASGI in front of the SDK's app: the serve token on every route but the open ones, and JSON-RPC
    parse/invalid-request errors for POST /mcp."""

    def __init__(self, app: Any, token: bytes | LiveToken, mcp_path: str = "/mcp", security: Any = None) -> None:
        self.app = app
        self.tokens = token if isinstance(token, LiveToken) else LiveToken(token)
        self.mcp_path = mcp_path
        self.security = security  # the Host/Origin check (`host_security`), None when bound off loopback
        self.ready: Callable[[], str | None] | None = None  # /readyz's question (`readiness`), set by build_app
        self.web: Any = None  # the web page's gate (`mcp_tools.web.app.WebGate`), set by build_app

    @property
    def token(self) -> bytes:
        return self.tokens.current()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if self.web is not None and self.web.owns(path):  # the web page answers its refusals in HTML
            await self.web(scope, receive, send, self.app)
            return
        problem = None if path == WEBHOOK_PATH else misdirected(scope, self.security)
        if problem is not None:
            await _json(send, problem[0], {"error": "misdirected", "message": problem[1]})
            return
        if path not in OPEN_PATHS:
            verdict = authorized(scope, self.token)
            if not verdict:
                await _unauthorized(send, presented=verdict is False)
                return
        if path == self.mcp_path and scope.get("method") == "POST":
            try:
                body = await read_capped(receive, MAX_MCP_BODY, declared_length(scope))
            except TooLarge:
                await _json(send, 413, {"error": "request body too large"}, headers=[(b"connection", b"close")])
                return
            except anyio.EndOfStream:
                return
            error = json_rpc_problem(body)
            if error is not None:
                await _json(send, 400, error)
                return
            receive = _replay(body, receive)
        if path == self.mcp_path:
            send = _error_data_on(send)
        await self.app(scope, receive, send)


def _error_data_on(send: Any) -> Any:
    """`send` with seed 002's `data: {type, details, timestamp}` added to the JSON-RPC errors the SDK's HTTP
    transport answers itself (a missing or unknown session, an Accept it cannot serve, routing headers that
    do not match the body): small JSON bodies with a 4xx status. Errors of requests the server handles get
    their data from `mcp_tools.server.error_data`."""
    held: dict[str, Any] | None = None
    chunks: list[bytes] = []

    async def wrapped(message: dict[str, Any]) -> None:
        nonlocal held
        if message["type"] == "http.response.start" and message.get("status", 200) >= 400:
            headers = {k.lower(): v for k, v in message.get("headers", [])}
            if headers.get(b"content-type", b"").startswith(b"application/json"):
                held = message
                return
        if held is not None and message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = _with_error_data(b"".join(chunks))
            headers = [(k, v) for k, v in held.get("headers", []) if k.lower() != b"content-length"]
            await send({**held, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            held = None
            return
        await send(message)

    return wrapped


def _with_error_data(body: bytes) -> bytes:
    try:
        message = json.loads(body)
    except ValueError:
        return body
    error = message.get("error") if isinstance(message, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), int):
        return body
    data = with_data(error["code"], str(error.get("message", "")), error.get("data"))
    return body if data is None else json.dumps({**message, "error": {**error, "data": data}}).encode()


def json_rpc_problem(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC error for a POST body that is not JSON (-32700, id null) or not one JSON-RPC message
    (-32600, with its id when it has a usable one); None for a message the SDK should handle."""
    from mcp.types import jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, too deep, or an oversized integer literal
        return {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "Parse error",
                                                       "data": error_data(PARSE_ERROR, "the body is not JSON")}}
    try:
        jsonrpc_message_adapter.validate_python(decoded, by_name=False)
    except (ValidationError, RecursionError):
        request_id = decoded.get("id") if isinstance(decoded, dict) else None
        if not (isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool))):
            request_id = None
        message = "Invalid Request: not a JSON-RPC 2.0 message"
        return {"jsonrpc": "2.0", "id": request_id,
                "error": {"code": INVALID_REQUEST, "message": message, "data": error_data(INVALID_REQUEST, message)}}
    return None


def _replay(body: bytes, receive: Any) -> Any:
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _json(send: Any, status: int, body: dict[str, Any], headers: tuple[tuple[bytes, bytes], ...] | list[Any] = ()
                ) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": data})


async def _unauthorized(send: Any, presented: bool) -> None:
    challenge = b'Bearer realm="code3"' + (b', error="invalid_token"' if presented else b"")
    await _json(send, 401, {"error": "unauthorized",
                            "message": "send `Authorization: Bearer <token>`; `code3 serve --print-token` prints "
                                       "the token (or set CODE3_SERVE_TOKEN)"},
                headers=[(b"www-authenticate", challenge)])


# --- the app ----------------------------------------------------------------------------------------------------------

def build_app(factory: Callable[[], Any], secret: bytes, host: str = "127.0.0.1", profile: str = "all",
              token: bytes | None = None, tools: Iterable[Entry] | None = None, version: str = "0",
              token_file: Path | None = None, session_hours: float = 12.0, stateless: bool = False) -> Any:
    """`token_file`: where the token came from, watched for `serve --rotate-token` (None: fixed, as from
    CODE3_SERVE_TOKEN); `session_hours`: how long a web page login lasts; `stateless` (`serve --stateless`): the
    SDK's stateless streamable HTTP, no MCP session kept between requests, so any serve behind one address answers
    any request (README: Running on several machines says what a session-less client gives up)."""
    if token is None or len(token) < MIN_TOKEN_LENGTH:
        raise ValueError("code3 serve needs a serve token (see mcp_tools.http_app.serve_token)")
    tokens = LiveToken(token, token_file)
    runtime = Runtime(factory)
    server = build_server(factory, profile=profile, runtime=runtime, tools=tools, version=version)

    @server.custom_route("/webhooks/github", methods=["POST"])
    async def github_webhook(request: Request) -> JSONResponse:
        from mcp_tools.lifecycle.webhook import receive

        try:
            body = await read_capped(request.receive, MAX_BODY, declared_length(request.scope))
        except TooLarge:
            log.warning("refused a webhook body over %d bytes", MAX_BODY)
            # `Connection: close`: the server stops reading the rest instead of draining it
            return JSONResponse({"error": f"payload too large (over {MAX_BODY} bytes)"}, status_code=413,
                                headers={"Connection": "close"})
        except anyio.EndOfStream:
            return JSONResponse({"error": "the client went away"}, status_code=400)
        headers = dict(request.headers)
        answer = await anyio.to_thread.run_sync(lambda: runtime.run(lambda s: receive(s, secret, headers, body)))
        return JSONResponse(answer.body, status_code=answer.status)

    @server.custom_route("/healthz", methods=["GET"])
    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    @server.custom_route("/readyz", methods=["GET"])
    async def ready(request: Request) -> Response:
        """200 `ready` or 503 `not ready` and nothing more without the token; `?verbose` with it adds why."""
        verbose = "verbose" in request.query_params
        if verbose and not authorized(request.scope, tokens.current()):
            return JSONResponse({"error": "unauthorized", "message": "/readyz?verbose needs the serve token"},
                                status_code=401, headers={"www-authenticate": 'Bearer realm="code3"'})
        error: str | None = "Timeout"
        with anyio.move_on_after(READY_TIMEOUT_S):  # a probe stuck on a silent network answers not ready
            error = await anyio.to_thread.run_sync(lambda: readiness(runtime), abandon_on_cancel=True)
        status = 503 if error else 200
        if verbose:
            from adapters.sql import OUTAGE

            return JSONResponse({"ready": not error, "error": error, "unreachable_s": round(OUTAGE.seconds(), 1)},
                                status_code=status)
        return Response("not ready" if error else "ready", status_code=status, media_type="text/plain")

    metrics.enable()  # this process's counters start with its app; /metrics is behind the token (`Front`)

    @server.custom_route("/metrics", methods=["GET"])
    async def prometheus(request: Request) -> Response:
        body = await anyio.to_thread.run_sync(lambda: metrics.exposition(store_figures(runtime.run)))
        return Response(body, media_type=metrics.CONTENT_TYPE)

    security = host_security(host)  # the same Host/Origin rule in the SDK's transport and in `Front`
    app = server.streamable_http_app(host=host, transport_security=security, stateless_http=stateless)
    # the ai-loom REST twins (/api/annotations, /api/stitch, /api/openapi.json, /api/docs): the same handlers
    # and the same Runtime (the same services) as the tools; behind `Front`, so the serve token guards them as it
    # does /mcp
    app.mount("/api", build_rest(runtime.run))
    from mcp_tools.web.app import WebGate, web_routes

    app.router.routes.extend(web_routes(runtime, tokens.current, session_hours))  # the web page at /
    front = Front(app, tokens, security=security)
    front.web = WebGate(tokens.current, security)
    front.ready = lambda: readiness(runtime, local_too=False)  # the question `serve`'s outage watchdog asks
    return front


READY_TIMEOUT_S = 5.0
STOP_GRACE_S = 10.0  # after SIGTERM, the process ends this long after at the latest (adapters/shutdown.py)


def readiness(runtime: Runtime, local_too: bool = True) -> str | None:
    """None when this serve reaches its database, else the class of the error that keeps it from it. Before the
    services exist they are built (once, by whichever call comes first); on SQLite, a `SELECT 1` on the file
    (`local_too`; the outage watchdog asks only about PostgreSQL)."""
    from adapters import sql

    if sql.PgPool.all():
        return sql.probe()
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
    from adapters.sql import outage_limit, watchdog

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
