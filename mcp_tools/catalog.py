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
    "sponsor": ("code3", None),
    "knowledge": ("code3", None),
    "all": ("code3", None),
}
# Tools whose seed defines the answer as text (seed 003's `add`, seed 000's reverse-spec tools): no outputSchema
# and no structuredContent, so the text is what a client shows its model (Claude Code shows structuredContent
# instead of the text when there is one).
TEXT_ANSWERS: frozenset[str] = frozenset({"add", "prepare", "generate", "batch", "diff"})
INSTRUCTIONS_MAX = 2000  # Claude Code keeps the first 2 048 characters of a server's instructions

# What each profile tells the model at `initialize` (`instructions`): its own tools only, named in backticks
# (tests/e2e/test_protocol_features.py checks that every backticked tool name is one of the profile's, and that
# every tool of the profile is named).
_AMOUNTS = ("Amounts are digit strings in the asset's smallest unit (\"1000000\" is 1 USDT, 6 decimals); answers "
            "add the human value (amount_display). ")
_LIFECYCLE_ERRORS = "A failure answers isError with {code, message, hint} in its text: follow the hint."
_SPECIFY = "`spec_mcp.specify` writes a feature spec from a description into specs/<feature_id>/. "
_SPONSOR_LOCAL = "`spec_mcp.plan` writes the spec's plan artifacts and `spec_mcp.tasks` its tasks.md. "
_SPONSOR_REMOTE = ("`spec_mcp.publish_issue_with_metadata` publishes a spec as an issue with an on-chain bounty; "
                   "`spec_mcp.remote_plan` and `spec_mcp.remote_tasks` post plan and task artifacts on that issue. ")
_WORKER = ("A worker `server_mcp.accept_task` (or `server_mcp.accept_best_task`), reads the bounty with "
           "`server_mcp.show_bounty`, runs "
           "`server_mcp.fork_and_prepare`, `server_mcp.open_pr` and `server_mcp.submit_pr`, may "
           "`server_mcp.comment_issue` or `server_mcp.withdraw_task`, and calls `server_mcp.claim_payout` "
           "after the merge's cooling period. ")
_ADD = "`add` adds two numbers (a connectivity check). "
_REVERSE_SPEC = ("reverse-spec: `prepare` gives a path's skeleton and model context, `generate` "
                 "writes <target>.spec.md, `batch` writes a spec per module (dependencies first), `diff` reports "
                 "drift between a spec and its source. A failure is the text \"<tool> 失败: <reason>\".")
_CODENEXUS = ("CodeNexus: `add_tag`, `remove_tag`, `describe_tag`, `add_comment`, `create_relationship` and "
              "`remove_relationship` record metadata on files; `query_files` finds files by tags, comment words "
              "and relationships; `derive_relationships` derives imports from the code; `sync_renames` moves "
              "metadata with files git renamed. Failures are JSON-RPC errors whose data gives {type, details}.")
_AI_LOOM = ("ai-loom: `ai-loom.list_contexts` pages through the project's line-range annotations, "
            "`ai-loom.get_context` reads one with where its lines are now, `ai-loom.stitch` stitches them into a "
            "prompt within a character budget. Failures are {code: NOT_FOUND | VALIDATION_ERROR | INTERNAL, "
            "message}.")
_AI_LOOM_WRITE = "`ai-loom.annotate`, `ai-loom.edit` and `ai-loom.delete` write them."
INSTRUCTIONS: dict[str, str] = {
    "client-local": "Code3, the sponsor's local side. " + _SPECIFY + _SPONSOR_LOCAL + _ADD + _LIFECYCLE_ERRORS,
    "client-remote": ("Code3, the sponsor's remote side. " + _SPECIFY + _SPONSOR_REMOTE + _AMOUNTS + _ADD
                      + _LIFECYCLE_ERRORS),
    "server": "Code3, the worker's side of a bounty. " + _WORKER + _AMOUNTS + _ADD + _LIFECYCLE_ERRORS,
    "reverse-spec": _REVERSE_SPEC,
    "codenexus": _CODENEXUS,
    "ai-loom": _AI_LOOM,
    "sponsor": ("Code3, the sponsor's side of a bounty. " + _SPECIFY + _SPONSOR_LOCAL + _SPONSOR_REMOTE + _AMOUNTS
                + _ADD + _LIFECYCLE_ERRORS),
    "knowledge": " ".join([_REVERSE_SPEC, _CODENEXUS, _AI_LOOM]),
    "all": " ".join([
        "Code3 runs open-source bounties.",
        _SPECIFY + _SPONSOR_LOCAL + _SPONSOR_REMOTE + _WORKER + _AMOUNTS + _ADD + _LIFECYCLE_ERRORS,
        _REVERSE_SPEC, _CODENEXUS, _AI_LOOM, _AI_LOOM_WRITE]),
}

# Every module that declares tools. A manifest entry's module must be one of these before it is imported.
HANDLER_MODULES: tuple[str, ...] = (
    "mcp_tools.add_demo",  # seed 003
    "mcp_tools.ai_loom.tools",  # seed 004
    "mcp_tools.codenexus.tools", "mcp_tools.codenexus.extras", "mcp_tools.codenexus.derive",  # seed 002
    "mcp_tools.codenexus.renames",
    "mcp_tools.lifecycle.specs", "mcp_tools.lifecycle.publish", "mcp_tools.lifecycle.remote_artifacts",  # seed 001
    "mcp_tools.lifecycle.work", "mcp_tools.lifecycle.settle",
    "mcp_tools.lifecycle.bounty_view",
    "mcp_tools.reverse_spec.prepare", "mcp_tools.reverse_spec.generate", "mcp_tools.reverse_spec.batch",  # seed 000
    "mcp_tools.reverse_spec.diff",
)
# The modules that add resources and prompts to a profile (`@extension`): imported whenever a server is built,
# so they import their families' handlers only when a resource or prompt is asked for.
FRONT_MODULES: tuple[str, ...] = ("mcp_tools.codenexus.front", "mcp_tools.lifecycle.bounty_front")


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
