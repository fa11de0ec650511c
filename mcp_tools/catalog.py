"""The tool families, the modules that declare them, and the profiles that expose them.

A family's `@tool` declarations fill the registry when its modules are imported: `declared()` imports them
all (what the tools/list manifest is derived from), `declaration()` only the one a tool's first call needs.
A profile is a slice of the registry, named for the seed server it stands in for.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
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

# Every module that declares tools. A manifest entry's module must be one of these before it is imported.
HANDLER_MODULES: tuple[str, ...] = (
    "mcp_tools.add_demo",  # seed 003
    "mcp_tools.ai_loom.tools",  # seed 004
    "mcp_tools.codenexus.tools", "mcp_tools.codenexus.extras", "mcp_tools.codenexus.derive",  # seed 002
    "mcp_tools.codenexus.renames",
    "mcp_tools.lifecycle.specs", "mcp_tools.lifecycle.publish", "mcp_tools.lifecycle.remote_artifacts",  # seed 001
    "mcp_tools.lifecycle.work", "mcp_tools.lifecycle.settle",
    "mcp_tools.reverse_spec.prepare", "mcp_tools.reverse_spec.generate", "mcp_tools.reverse_spec.batch",  # seed 000
    "mcp_tools.reverse_spec.diff",
)
# The modules that add resources and prompts to a profile (`@extension`): imported whenever a server is built,
# so they import their families' handlers only when a resource or prompt is asked for.
FRONT_MODULES: tuple[str, ...] = ("mcp_tools.codenexus.front",)


def declared() -> dict[str, ToolDecl]:
    """Every declared tool (imports every family)."""
    for module in HANDLER_MODULES:
        import_module(module)
    return REGISTRY


def declaration(name: str, module: str) -> ToolDecl:
    """The tool `name`, declared in `module` (one of HANDLER_MODULES): imports that module only."""
    if module not in HANDLER_MODULES:
        raise LookupError(f"{module} is not a module of mcp_tools.catalog.HANDLER_MODULES")
    import_module(module)
    if name not in REGISTRY:
        raise LookupError(f"{module} declares no tool {name}")
    return REGISTRY[name]


def extensions_for(profile: str) -> list[Callable[[Any, Any], None]]:
    for module in FRONT_MODULES:
        import_module(module)
    return [register for profiles, register in EXTENSIONS if profile in profiles]
