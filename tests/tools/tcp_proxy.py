"""A loopback TCP proxy a test puts in front of PostgreSQL and cuts, to play a network outage or a failover.

`cut()` closes every forwarded connection and refuses new ones (each accepted socket is closed at once) until
`restore()`: the outage a client notices at once. `drop()` forwards nothing more in either direction and closes
nothing: a new connection is accepted and never answered, a query in flight waits for an answer that does not
come (a network that loses packets, a host gone without a word); `restore()` then closes what was open during
it. Loopback only, bounded (at most MAX_CONNECTIONS at a time, daemon threads), stopped by `close()`.
"""

from __future__ import annotations

import contextlib
import socket
import threading

MAX_CONNECTIONS = 32
CHUNK = 65536


class TcpProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1",
                 max_connections: int = MAX_CONNECTIONS) -> None:
        if target_host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the test proxy forwards to loopback only")
        self.target = (target_host, target_port)
        self.max_connections = max_connections  # a topology of many processes (tests/campaigns/topology.py) needs more
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._server.getsockname()[1])
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._cut = False
        self._dropping = False
        self._closed = False
        self.accepted = 0
        threading.Thread(target=self._accept, name="tcp-proxy-accept", daemon=True).start()

    def url(self, database_url: str) -> str:
        """`database_url` with its host and port replaced by this proxy's."""
        from urllib.parse import urlparse

        parsed = urlparse(database_url)
        auth = parsed.netloc.rpartition("@")[0]
        return parsed._replace(netloc=f"{auth}@127.0.0.1:{self.port}" if auth else f"127.0.0.1:{self.port}").geturl()

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            sockets, self._open = self._open, set()
        for sock in sockets:
            _close(sock)

    def drop(self) -> None:
        with self._lock:
            self._dropping = True

    def restore(self) -> None:
        with self._lock:
            self._cut = False
            dropped, self._dropping = self._dropping, False
            sockets = set(self._open) if dropped else set()
            self._open -= sockets
        for sock in sockets:
            _close(sock)

    def close(self) -> None:
        self._closed = True
        self.cut()
        _close(self._server)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                refuse = self._cut or len(self._open) >= 2 * self.max_connections
                if not refuse and self._dropping:
                    self._open.add(client)  # held silent until `restore` closes it
                    continue
            if refuse:
                _close(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self._lock:
                if self._cut:
                    _close(client)
                    _close(upstream)
                    continue
                self._open.update((client, upstream))
                self.accepted += 1
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), name="tcp-proxy-pump", daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(CHUNK):
                if not self._dropping:
                    dst.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._open.discard(src)
                self._open.discard(dst)
            _close(src)
            _close(dst)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
