"""Live updates (`/live`): server-sent events following the event log."""

from __future__ import annotations

from typing import Any

from starlette.routing import BaseRoute


def routes(web: Any) -> list[BaseRoute]:
    return []
