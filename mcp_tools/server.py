"""The MCP server: registers the catalogue's tools (per profile) over the plain handlers.

Tool functions are thin: a typed signature that the SDK turns into the input schema, then a call
into a handler in a worker thread. Services (store, forge, chain, key) are built on the first call,
so a misconfigured identity is a tool error the client can read, not a crash at start-up.
"""

from __future__ import annotations

import importlib
import json
import logging
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from mcp_tools.catalog import TOOLS, tools_for

log = logging.getLogger("code3.mcp")

INSTRUCTIONS = (
    "Code3 runs open-source bounties: spec_mcp.* tools write and publish a feature spec with an on-chain "
    "bounty; server_mcp.* tools let a worker accept it, prepare a fork, open and submit a PR, and claim "
    "the payout after the merge's cooling period. Failures carry {code, message, hint}: follow the hint."
)
VALIDATION_HINT = "fix the arguments as the message says; tools/list gives each tool's input schema"


class Runtime:
    """Builds the services once, on first use, and runs handlers one at a time off the event loop."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._services: Any = None
        self._lock = threading.Lock()

    def run(self, fn: Callable[[Any], Any]) -> Any:
        """Run `fn(services)` under the same lock as the tools (the HTTP fronts use it)."""
        with self._lock:
            if self._services is None:
                self._services = self._factory()
            return fn(self._services)

    def call(self, handler: str, kwargs: dict[str, Any]) -> CallToolResult:
        from domain.errors import Code3Error

        module, func = handler.split(":")
        target = getattr(importlib.import_module(module), func)
        if module == "mcp_tools.demo_add":  # needs no services
            return CallToolResult(content=[TextContent(type="text", text=target(**kwargs))])
        try:
            result = self.run(lambda services: target(services, **kwargs))
        except Code3Error as exc:
            log.info("tool %s failed: %s", handler, exc.code.value)
            return _result(exc.as_dict(), is_error=True)
        except Exception:
            log.exception("tool %s raised an unexpected exception", handler)
            return _result({"code": "E_INTERNAL", "message": "internal error; the server log (stderr) has details",
                            "hint": "retry; if it persists, report it with the server log"}, is_error=True)
        return _result(result)


def _result(data: dict[str, Any], is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
                          structured_content=data, is_error=is_error)


async def structured_argument_errors(ctx: Any, call_next: Any) -> Any:
    """The SDK reports bad arguments as plain text; give them the contract's {code, message, hint} shape."""
    result = await call_next(ctx)
    if getattr(ctx, "method", None) != "tools/call":
        return result
    if isinstance(result, dict):  # the runner hands middleware the serialised result
        result = CallToolResult.model_validate(result)
    if (isinstance(result, CallToolResult) and result.is_error and result.structured_content is None
            and result.content and isinstance(result.content[0], TextContent)):
        text = result.content[0].text
        code = "E_VALIDATION" if "validation error" in text or "Unknown tool" in text else "E_INTERNAL"
        return _result({"code": code, "message": text, "hint": VALIDATION_HINT}, is_error=True)
    return result


def build_server(factory: Callable[[], Any], profile: str = "all", runtime: Runtime | None = None) -> MCPServer:
    from code3 import __version__

    server: MCPServer = MCPServer("code3", version=__version__, instructions=INSTRUCTIONS,
                                  middleware=[structured_argument_errors])
    runtime = runtime or Runtime(factory)
    for spec in tools_for(profile):
        fn = _FUNCTIONS[spec.name]
        annotations = ToolAnnotations(readOnlyHint=spec.read_only, destructiveHint=spec.destructive,
                                      idempotentHint=spec.idempotent, openWorldHint=spec.open_world)
        server.add_tool(_bind(runtime, spec.handler, fn), name=spec.name, description=fn.__doc__,
                        annotations=annotations)
    return server


def _bind(runtime: Runtime, handler: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """The tool function the SDK sees: `fn`'s signature, running the handler in a worker thread."""
    import functools

    if handler.startswith("mcp_tools.demo_add:"):  # pure arithmetic: no thread hop

        @functools.wraps(fn)
        async def direct(**kwargs: Any) -> CallToolResult:
            return runtime.call(handler, kwargs)

        return direct

    @functools.wraps(fn)
    async def tool(**kwargs: Any) -> CallToolResult:
        return await anyio.to_thread.run_sync(runtime.call, handler, kwargs)

    return tool


# --- signatures (the input schemas of the Code3 seed) -------------------------------------------
# Only the signature and docstring of these are used (by `_bind`): the bodies never run.

FeatureId = Annotated[str, Field(description="feature id, NNN-slug (e.g. 003-web-ai-agent)")]
Overwrite = Annotated[bool, Field(description="replace existing files instead of failing with E_EXISTS")]


def specify(feature_description: Annotated[str, Field(description="what the feature should do")],
            feature_id: Annotated[str | None, Field(description="NNN-slug; generated when omitted")] = None,
            allow_overwrite: Overwrite = False) -> CallToolResult:
    """Create specs/<NNN-slug>/spec.md from a feature description."""
    ...


def plan(feature_id: FeatureId,
         tech_constraints: Annotated[str | None, Field(description="technical constraints for the plan")] = None,
         allow_overwrite: Overwrite = False) -> CallToolResult:
    """Write plan.md, research.md, data-model.md, contracts/ and quickstart.md for a specified feature."""
    ...


def tasks(feature_id: FeatureId, allow_overwrite: Overwrite = False) -> CallToolResult:
    """Write tasks.md (TDD order, parallel and dependency marks) from the plan's artifacts."""
    ...


def publish_issue_with_metadata(
    repo: Annotated[str, Field(description="owner/repo")],
    feature_id: FeatureId,
    spec_path: Annotated[str, Field(description="path of spec.md relative to the project")],
    amount: Annotated[str, Field(description="bounty amount in the asset's smallest unit, as a string")],
    asset: Annotated[str, Field(description="asset symbol")] = "USDT",
    network: Annotated[str | None, Field(description="chain network; this server's when omitted")] = None,
    labels: Annotated[list[str] | None, Field(description="issue labels")] = None,
    assignees: Annotated[list[str] | None, Field(description="issue assignees")] = None,
    deadline_seconds: Annotated[int | None, Field(description="optional: the bounty expires (and is refunded) "
                                                              "if not merged this many seconds after publishing")]
    = None,
) -> CallToolResult:
    """Publish the spec as an issue with code3/v1 metadata and create its on-chain bounty (idempotent on issue_hash)."""
    ...


def accept_task(task_id: Annotated[str, Field(description="owner/repo#123")]) -> CallToolResult:
    """Accept a task: accept_bounty on chain and mark the issue in-progress."""
    ...


def accept_best_task(
    min_amount: Annotated[str, Field(description="smallest amount to consider")] = "0",
    strategy: Annotated[Literal["max_amount", "max_amount_per_effort"], Field(description="how to rank")]
    = "max_amount",
) -> CallToolResult:
    """Choose the best open task (largest amount by default) and accept it."""
    ...


def fork_and_prepare(repo: Annotated[str, Field(description="owner/repo")],
                     issue_json: Annotated[dict[str, Any], Field(description="the issue's code3/v1 metadata")]
                     ) -> CallToolResult:
    """Fork, clone, create branch feat/NNN-slug, generate missing spec artifacts, push the branch."""
    ...


def open_pr(repo: Annotated[str, Field(description="owner/repo (the upstream)")],
            branch: Annotated[str, Field(description="branch of your fork, e.g. feat/003-web-ai-agent")],
            title: str, body: str) -> CallToolResult:
    """Open a pull request from your fork's branch (pending workspace changes are committed and pushed)."""
    ...


def comment_issue(issue_url: str, body: str) -> CallToolResult:
    """Post a comment on an issue (a human-readable status mirror)."""
    ...


def submit_pr(bounty_id: str, pr_url: str,
              commit_sha: Annotated[str | None, Field(description="the PR head; read from the PR when omitted")]
              = None) -> CallToolResult:
    """Record submit_pr(bounty_id, pr_url, commit_sha) on chain (idempotent on pr_url)."""
    ...


def claim_payout(bounty_id: str) -> CallToolResult:
    """Claim the bounty after its cooling period (winner only)."""
    ...


def add(a: Annotated[float, Field(description="first number")],
        b: Annotated[float, Field(description="second number")]) -> CallToolResult:
    """Add two numbers together and return the result"""
    ...


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "spec_mcp.specify": specify, "spec_mcp.plan": plan, "spec_mcp.tasks": tasks,
    "spec_mcp.publish_issue_with_metadata": publish_issue_with_metadata,
    "server_mcp.accept_task": accept_task, "server_mcp.accept_best_task": accept_best_task,
    "server_mcp.fork_and_prepare": fork_and_prepare, "server_mcp.open_pr": open_pr,
    "server_mcp.comment_issue": comment_issue, "server_mcp.submit_pr": submit_pr,
    "server_mcp.claim_payout": claim_payout, "add": add,
}
assert set(_FUNCTIONS) == set(TOOLS), "every catalogued tool needs a signature"
