"""The bounty page (`/bounties/<id>`): its timeline, PRs, mirrored labels and comments, and a signed export."""

from __future__ import annotations

from typing import Any

from starlette.routing import BaseRoute


def routes(web: Any) -> list[BaseRoute]:
    return []
