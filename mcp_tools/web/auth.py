"""Who may see the web page: one-time login codes (as Jupyter's), and the session cookie they buy.

`code3 serve --print-url` runs in another process than the serve, so the code it mints is checked without
shared memory: an HMAC, under a key derived from the serve token, over the serve's port, a random nonce and
an expiry (`CODE_TTL_S`). A code is good once: its nonce is recorded in `web_login_codes` beside the views
when it is used, so a second use is refused, also after a restart of the serve. The session cookie
(`code3_session_<port>`, several serves on one host keep their own) carries its expiry and an HMAC under
another key derived from the token: it is checked on the server, and `serve --rotate-token`, which changes
the token, ends every session at once. No code, cookie value or token is ever logged.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Any

CODE_TTL_S = 600  # a printed URL is good for ten minutes
DEFAULT_SESSION_HOURS = 12.0
MAX_SESSION_HOURS = 24 * 30.0
NONCE_BYTES = 16
SCHEMA = """
CREATE TABLE IF NOT EXISTS web_login_codes (nonce TEXT PRIMARY KEY, expires_at BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS web_login_codes_expiry ON web_login_codes (expires_at);
"""


def cookie_name(port: int) -> str:
    return f"code3_session_{port}"


def _key(token: bytes, purpose: bytes) -> bytes:
    """A key for one purpose, derived from the serve token (a new token, new keys: old codes and cookies fail)."""
    return hmac.new(token, b"code3-web\0" + purpose, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, *parts: object) -> str:
    return _b64(hmac.new(key, "\n".join(str(p) for p in parts).encode(), hashlib.sha256).digest())


# --- login codes ------------------------------------------------------------------------------------------------------

def mint_code(token: bytes, port: int, now: float | None = None, ttl_s: int = CODE_TTL_S) -> str:
    """A login code for the serve on `port`: `<expiry>.<nonce>.<mac>`, URL-safe."""
    expires = int((time.time() if now is None else now) + ttl_s)
    nonce = _b64(secrets.token_bytes(NONCE_BYTES))
    return f"{expires}.{nonce}.{_mac(_key(token, b'login'), port, expires, nonce)}"


@dataclass(frozen=True)
class Verdict:
    """A checked code or cookie: `ok`, or why not (`reason`, shown to the person, never the value itself)."""

    ok: bool
    reason: str = ""
    nonce: str = ""
    expires: int = 0


def check_code(code: str, token: bytes, port: int, now: float | None = None) -> Verdict:
    """The code's signature and expiry (not yet whether it was used: `consume` records that)."""
    parts = code.split(".")
    if len(code) > 200 or len(parts) != 3 or not parts[0].isdigit():
        return Verdict(False, "the login code is malformed")
    expires, nonce, mac = int(parts[0]), parts[1], parts[2]
    if not hmac.compare_digest(mac, _mac(_key(token, b"login"), port, expires, nonce)):
        return Verdict(False, "the login code is not valid for this serve (another port, or the token was rotated)")
    if expires <= (time.time() if now is None else now):
        return Verdict(False, "the login code has expired (codes are good for 10 minutes)")
    try:
        if len(_unb64(nonce)) != NONCE_BYTES:
            return Verdict(False, "the login code is malformed")
    except ValueError:
        return Verdict(False, "the login code is malformed")
    return Verdict(True, nonce=nonce, expires=expires)


def consume(views: Any, verdict: Verdict, now: float | None = None) -> bool:
    """Record the code's nonce as used; False when it was used before (by this serve or an earlier one)."""
    views.ensure(SCHEMA)
    moment = int(time.time() if now is None else now)
    with views.transaction() as cur:
        cur.execute("DELETE FROM web_login_codes WHERE expires_at < ?", (moment - 60,))
        cur.execute("INSERT INTO web_login_codes (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING",
                    (verdict.nonce, verdict.expires))
        return bool(cur.rowcount == 1)


# --- session cookies --------------------------------------------------------------------------------------------------

def session_hours(value: str | None) -> float:
    """CODE3_WEB_SESSION_HOURS: a positive number of hours, at most 30 days (default 12)."""
    if value is None or not value.strip():
        return DEFAULT_SESSION_HOURS
    try:
        hours = float(value)
    except ValueError:
        raise ValueError(f"CODE3_WEB_SESSION_HOURS={value[:20]!r} is not a number of hours") from None
    if not 0 < hours <= MAX_SESSION_HOURS:
        raise ValueError(f"CODE3_WEB_SESSION_HOURS must be above 0 and at most {MAX_SESSION_HOURS:g}")
    return hours


def new_session(token: bytes, port: int, hours: float, now: float | None = None) -> tuple[str, int]:
    """A cookie value `<expiry>.<id>.<mac>` and its lifetime in seconds (the cookie's Max-Age)."""
    max_age = int(hours * 3600)
    expires = int((time.time() if now is None else now) + max_age)
    sid = _b64(secrets.token_bytes(12))
    return f"{expires}.{sid}.{_mac(_key(token, b'session'), port, expires, sid)}", max_age


def check_session(value: str, token: bytes, port: int, now: float | None = None) -> Verdict:
    parts = value.split(".")
    if len(value) > 200 or len(parts) != 3 or not parts[0].isdigit():
        return Verdict(False, "the session cookie is malformed")
    expires, sid, mac = int(parts[0]), parts[1], parts[2]
    if not hmac.compare_digest(mac, _mac(_key(token, b"session"), port, expires, sid)):
        return Verdict(False, "the session is not valid for this serve (the token was rotated, or another serve's)")
    if expires <= (time.time() if now is None else now):
        return Verdict(False, "the session has expired")
    return Verdict(True, expires=expires)


def session_cookie(scope: dict[str, Any], port: int) -> str | None:
    """This serve's session cookie from the request's Cookie headers, None when absent."""
    name = cookie_name(port)
    for key, raw in scope.get("headers", []):
        if key != b"cookie":
            continue
        for pair in raw.decode("latin-1").split(";"):
            k, sep, v = pair.strip().partition("=")
            if sep and k == name:
                return v.strip().strip('"')
    return None


def set_cookie_header(port: int, value: str, max_age: int) -> str:
    return f"{cookie_name(port)}={value}; Max-Age={max_age}; Path=/; HttpOnly; SameSite=Strict"


def login_url(host: str, port: int, code: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/login?code={code}"
