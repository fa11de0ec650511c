"""The tool families and the profiles that expose them.

`declared()` imports every family's handler modules, whose `@tool` declarations fill the registry;
a profile is a slice of it, named for the seed server it stands in for.
"""

from __future__ import annotations

from mcp_tools.declare import REGISTRY, ToolDecl

PROFILES = ("client-local", "client-remote", "server", "all")


def declared() -> dict[str, ToolDecl]:
    from mcp_tools import add_demo  # noqa: F401  (seed 003)
    from mcp_tools.lifecycle import publish, settle, specs, work  # noqa: F401  (seed 001)

    return REGISTRY


def tools_for(profile: str) -> list[ToolDecl]:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    return [t for t in declared().values() if profile in t.profiles]
