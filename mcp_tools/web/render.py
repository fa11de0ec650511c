"""Pages rendered on the server from the package's Jinja2 templates, with the headers every page carries.

Every page is read-only HTML from `templates/` (autoescaped; an undefined name is an error, not an empty
string) with the stylesheet and script from `static/`: no CDN, no remote font, nothing from the internet.
The headers forbid what a read-only page never needs: scripts and styles from elsewhere, framing, being
sniffed as another type, sending its URL (a login code) on as a Referer, and caching.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from starlette.responses import HTMLResponse

from domain.bounties.amounts import display

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
SECURITY_HEADERS = (
    (b"content-security-policy", b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                 b"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
)
NO_STORE = (b"cache-control", b"no-store")
# the main navigation: (href, label, key); a page says which is its own (`nav=key`); W2's pages add theirs
NAV_LINKS: list[tuple[str, str, str]] = [("/", "Bounties", "board")]


@functools.cache
def environment() -> Any:
    """The one Jinja2 environment (built on first use: jinja2 is imported only by a serve that shows a page)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=jinja2.select_autoescape(["html"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["human"] = display
    env.filters["when"] = when
    env.filters["duration"] = duration
    env.globals["nav_links"] = NAV_LINKS
    return env


def when(seconds: int | float | None) -> str:
    """A unix time as people read it, in UTC: 2026-11-27 03:55 UTC."""
    if seconds is None:
        return "—"
    return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%d %H:%M UTC")


def duration(seconds: int | float | None) -> str:
    """A length of time, at most two units: '6 d 23 h', '5 min', 'now' for what is over."""
    if seconds is None:
        return "—"
    left = int(seconds)
    if left <= 0:
        return "now"
    days, rest = divmod(left, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "min"), (secs, "s")]
    shown = [f"{n} {unit}" for n, unit in parts if n][:2]
    return " ".join(shown)


def percent(bps: int) -> str:
    """Basis points as a percentage: 6000 → '60%', 3333 → '33.33%'."""
    return f"{int(bps) / 100:g}%"


def shares(relative: list[int]) -> list[str]:
    """A split's relative shares as percentages of their sum (the contract divides by the sum)."""
    total = sum(int(s) for s in relative)
    return [f"{int(s) * 100 / total:.4g}%" if total else "0%" for s in relative]


def page(template: str, status: int = 200, headers: dict[str, str] | None = None, **context: Any) -> HTMLResponse:
    """`template` rendered with `context`, as an HTML response."""
    html = environment().get_template(template).render(**context)
    return HTMLResponse(html, status_code=status, headers=headers)


def with_headers(send: Any, static: bool = False) -> Any:
    """`send` that adds the security headers (and no-store, for anything but the static files) to the response."""

    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            extra = [*SECURITY_HEADERS] if static else [*SECURITY_HEADERS, NO_STORE]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return wrapped
