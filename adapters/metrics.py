"""This process's Prometheus metrics (prometheus-client) and the loopback listener that exposes a worker's.

The registry is per process and created on demand (`enable`, by `code3 serve` and a worker run with
`--metrics-port`): until then every recording function is a no-op and prometheus_client is never imported,
so `code3 mcp` and the other commands pay nothing. Counters live here (tool calls, errors by code,
latency); the database connections (reconnects, failures, open) are read from the pools at scrape time, and
the store's figures (lag, dead letters, payouts: `projections.operations`) are read at scrape time by the
caller and rendered beside them, so every process reports the same store the same way.
"""

from __future__ import annotations

import hmac
import logging
import threading
from collections.abc import Callable
from typing import Any

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"  # the Prometheus text format
log = logging.getLogger("code3.metrics")
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

_lock = threading.Lock()
_metrics: _Metrics | None = None


class _Metrics:
    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry()
        self.calls = Counter("code3_tool_calls", "Tool calls answered, by tool", ["tool"], registry=self.registry)
        self.errors = Counter("code3_tool_errors", "Tool calls answered with an error, by tool and error code",
                              ["tool", "code"], registry=self.registry)
        self.seconds = Histogram("code3_tool_seconds", "Time to answer a tool call, by tool", ["tool"],
                                 buckets=LATENCY_BUCKETS, registry=self.registry)
        self.registry.register(_ConnectionCollector())


def enable() -> None:
    """Create this process's registry (idempotent); recording starts from here."""
    global _metrics
    with _lock:
        if _metrics is None:
            _metrics = _Metrics()


def enabled() -> bool:
    return _metrics is not None


def tool_call(tool: str, seconds: float, error_code: str | None = None) -> None:
    """Count one answered tool call (and its error code when it failed) and its latency."""
    m = _metrics
    if m is None:
        return
    m.calls.labels(tool).inc()
    m.seconds.labels(tool).observe(seconds)
    if error_code is not None:
        m.errors.labels(tool, error_code).inc()


def exposition(store: dict[str, Any] | None) -> bytes:
    """The Prometheus text of this process's counters, then the store's figures (`store_families`' input):
    `None` when the store could not be read, which `code3_store_up 0` says."""
    from prometheus_client import CollectorRegistry, generate_latest

    enable()
    snapshot = CollectorRegistry(auto_describe=False)
    snapshot.register(_StoreCollector(store))
    return generate_latest(_metrics.registry) + generate_latest(snapshot)  # type: ignore[union-attr]


class _ConnectionCollector:
    """This process's PostgreSQL connections, read from its pools at scrape time (adapters.pg_pool.connection_stats):
    a lost connection is one the pool found broken (a terminated backend, a restarted server) and replaced."""

    def collect(self) -> Any:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        from adapters.pg_pool import connection_stats

        stats = connection_stats()
        lost = CounterMetricFamily("code3_db_reconnects", "Database connections found lost and re-established")
        lost.add_metric([], stats["lost"])
        yield lost
        failed = CounterMetricFamily("code3_db_connect_failures", "Attempts to connect to the database that failed")
        failed.add_metric([], stats["failed"])
        yield failed
        opened = GaugeMetricFamily("code3_db_connections_open", "PostgreSQL connections this process holds now")
        opened.add_metric([], stats["open"])
        yield opened


class _StoreCollector:
    """The store's figures as gauges and counters, built from one snapshot read at scrape time."""

    def __init__(self, store: dict[str, Any] | None) -> None:
        self.store = store

    def collect(self) -> Any:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        up = GaugeMetricFamily("code3_store_up", "1 when the event store and views answered this scrape")
        up.add_metric([], 0 if self.store is None else 1)
        yield up
        if self.store is None:
            return
        head = GaugeMetricFamily("code3_log_head", "Notification id of the newest event in the log")
        head.add_metric([], self.store["head"])
        yield head
        lag = GaugeMetricFamily("code3_projection_lag_events", "Events the projection is behind the log head",
                                labels=["projection"])
        for name, behind in self.store["lag"].items():
            lag.add_metric([name], behind)
        yield lag
        failing = GaugeMetricFamily("code3_projection_failing_rounds",
                                    "Rounds in a row a follower stopped on a transient failure (the forge away or "
                                    "rate-limiting); 0 when its last round went through", labels=["projection"])
        for name, rounds in self.store.get("failing", {}).items():
            failing.add_metric([name], rounds)
        yield failing
        dead = GaugeMetricFamily("code3_dead_letters", "Events or deliveries given up on, by where they wait",
                                 labels=["queue"])
        for queue, count in self.store["dead_letters"].items():
            dead.add_metric([queue], count)
        yield dead
        paid = CounterMetricFamily("code3_payouts", "Bounties paid, by asset (from the store)", labels=["asset"])
        amount = CounterMetricFamily("code3_payout_amount", "Amount paid out in the asset's smallest unit",
                                     labels=["asset"])
        for asset, (count, total) in self.store["payouts"].items():
            paid.add_metric([asset], count)
            amount.add_metric([asset], total)
        yield paid
        yield amount
        overdue = GaugeMetricFamily("code3_payouts_overdue", "Bounties past their cooling end and not paid")
        overdue.add_metric([], self.store["overdue"])
        yield overdue


# --- the worker's loopback listener -------------------------------------------------------------------------------

def listen(port: int, token: bytes, render: Callable[[], bytes]) -> Any:
    """Serve GET /metrics on 127.0.0.1:`port` (0: any free port) in a daemon thread, behind the bearer `token`;
    the server (its `server_address` holds the port; `shutdown()` stops it)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] != "/metrics":
                return self._send(404, b"only /metrics here\n", "text/plain")
            scheme, _, given = self.headers.get("Authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token):
                return self._send(401, b"send `Authorization: Bearer <serve token>`\n", "text/plain",
                                  {"WWW-Authenticate": 'Bearer realm="code3"'})
            try:
                body = render()
            except Exception:
                log.exception("could not render the metrics")
                return self._send(500, b"could not render the metrics; see the worker's log\n", "text/plain")
            self._send(200, body, CONTENT_TYPE)

        def _send(self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for name, value in {"Content-Type": kind, "Content-Length": str(len(body)), **(headers or {})}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: scrapes are not news
            return

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="code3-metrics", daemon=True).start()
    return server
