"""The serve token: the bearer token every route of `code3 serve` but the webhook and the probes needs.

It is `CODE3_SERVE_TOKEN`, or generated once into `CODE3_HOME/projects/<key>/serve_token` (0600 in a 0700
directory, outside the work tree). `code3 serve --rotate-token` writes a new one into that file and a running
serve picks it up at its next request (`LiveToken`), refusing the old one and ending every web session.
"""

from __future__ import annotations

import logging
import secrets
import threading
from pathlib import Path

log = logging.getLogger("code3.serve")

TOKEN_FILE = "serve_token"
MIN_TOKEN_LENGTH = 16


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
