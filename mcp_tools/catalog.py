"""The tool catalogue: names, the handler each calls, annotations and the profiles that expose it.

Declared once; the server registers from it and the tests check it against the seed's names.
Handlers are named by module path and imported on first call, which keeps `code3 mcp` start-up
close to a bare MCP server's.
"""

from __future__ import annotations

from dataclasses import dataclass

PROFILES = ("client-local", "client-remote", "server", "all")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    handler: str  # "module:function"
    profiles: frozenset[str]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = True


def _p(*names: str) -> frozenset[str]:
    return frozenset((*names, "all"))


TOOLS: dict[str, ToolSpec] = {t.name: t for t in (
    ToolSpec("spec_mcp.specify", "mcp_tools.specs:specify", _p("client-local", "client-remote"),
             open_world=False),
    ToolSpec("spec_mcp.plan", "mcp_tools.specs:plan", _p("client-local"), open_world=False),
    ToolSpec("spec_mcp.tasks", "mcp_tools.specs:tasks", _p("client-local"), open_world=False),
    ToolSpec("spec_mcp.publish_issue_with_metadata", "mcp_tools.publish:publish_issue_with_metadata",
             _p("client-remote")),
    ToolSpec("server_mcp.accept_task", "mcp_tools.work:accept_task", _p("server")),
    ToolSpec("server_mcp.accept_best_task", "mcp_tools.work:accept_best_task", _p("server"), idempotent=False),
    ToolSpec("server_mcp.fork_and_prepare", "mcp_tools.work:fork_and_prepare", _p("server")),
    ToolSpec("server_mcp.open_pr", "mcp_tools.work:open_pr", _p("server")),
    ToolSpec("server_mcp.comment_issue", "mcp_tools.work:comment_issue", _p("server"), idempotent=False),
    ToolSpec("server_mcp.submit_pr", "mcp_tools.work:submit_pr", _p("server")),
    ToolSpec("server_mcp.claim_payout", "mcp_tools.settle:claim_payout", _p("server")),
    ToolSpec("add", "mcp_tools.demo_add:add", _p("client-local", "client-remote", "server"),
             read_only=True, open_world=False),
)}


def tools_for(profile: str) -> list[ToolSpec]:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    return [t for t in TOOLS.values() if profile in t.profiles]
