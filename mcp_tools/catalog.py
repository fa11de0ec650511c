"""The tool families and the profiles that expose them.

`declared()` imports every family's handler modules, whose `@tool` declarations fill the registry;
a profile is a slice of it, named for the seed server it stands in for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp_tools.declare import EXTENSIONS, REGISTRY, ToolDecl

# profile -> the serverInfo name and version it answers (None: Code3's own version)
PROFILES: dict[str, tuple[str, str | None]] = {
    "client-local": ("code3", None),
    "client-remote": ("code3", None),
    "server": ("code3", None),
    "reverse-spec": ("reverse-spec", "2.0.0"),
    "codenexus": ("CodeNexus", "1.0.0"),
    "ai-loom": ("ai-loom", None),
    "all": ("code3", None),
}


def declared() -> dict[str, ToolDecl]:
    from mcp_tools import add_demo  # noqa: F401  (seed 003)
    from mcp_tools.ai_loom import tools as loom  # noqa: F401  (seed 004)
    from mcp_tools.codenexus import derive, extras, front, renames, tools  # noqa: F401  (seed 002)
    from mcp_tools.lifecycle import publish, remote_artifacts, settle, specs, work  # noqa: F401  (seed 001)
    from mcp_tools.reverse_spec import batch, diff, generate, prepare  # noqa: F401  (seed 000)

    return REGISTRY


def tools_for(profile: str) -> list[ToolDecl]:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    return [t for t in declared().values() if profile in t.profiles]


def extensions_for(profile: str) -> list[Callable[[Any, Any], None]]:
    declared()
    return [register for profiles, register in EXTENSIONS if profile in profiles]
