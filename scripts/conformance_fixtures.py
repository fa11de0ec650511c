"""The diagnostic tools the MCP conformance suite's server scenarios call (`test_simple_text`, `test_logging_tool`,
...), for the conformance run only (scripts/conformance.sh): added to the bare SDK server and to Code3's serve by
scripts/conformance_server.py, never to a Code3 a user runs.

Each does what the suite's scenario looks for and nothing more. `test_logging_tool` logs twice: through the SDK's
`ctx.info` (the SDK's own per-request log opt-in) and through a Python logger under `code3.` (what Code3's front
forwards, mcp_tools/client_logging.py), so the no-log-without-logLevel check exercises whichever front serves it.
"""


import logging
from typing import Any

import anyio

log = logging.getLogger("code3.conformance")

MISSING_CAPABILITY = -32021  # the 2026-07-28 MissingRequiredClientCapabilityError


def fixture_tools() -> list[Any]:
    """The diagnostic tools, as the SDK's `Tool`s (built from plain functions, as any SDK server builds them)."""
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.tools import Tool
    from mcp.shared.exceptions import MCPError
    from pydantic import BaseModel

    async def test_simple_text() -> str:
        """Returns a simple text result."""
        return "This is a simple text response for testing."

    async def test_error_handling() -> str:
        """Always fails (isError)."""
        raise ValueError("This tool intentionally returns an error for testing")

    async def test_logging_tool(ctx: Context) -> str:
        """Logs three messages while it runs."""
        for step in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            log.info(step)
            await ctx.info(step)
        return "Logging test completed"

    async def test_tool_with_logging(ctx: Context) -> str:
        """Logs three messages about 50 ms apart (the 2025-11-25 scenario's name for the same fixture)."""
        for n, step in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
            if n:
                await anyio.sleep(0.05)
            log.info(step)
            await ctx.info(step)
        return "Logging test completed"

    async def test_tool_with_progress(ctx: Context) -> str:
        """Reports progress 0, 50, 100."""
        for done in (0, 50, 100):
            await ctx.report_progress(done, 100, f"{done}%")
        return "Progress test completed"

    class Answer(BaseModel):
        answer: str = ""

    async def test_streaming_elicitation(ctx: Context) -> str:
        """Asks the client for an answer (elicitation), as the request's own stream allows."""
        try:
            result = await ctx.elicit("Please answer", Answer)
        except MCPError as exc:  # a stateless request has no back-channel: the SDK refuses to send the request
            return f"elicitation not available on this request: {exc.error.message}"
        return f"elicitation {result.action}"

    async def test_missing_capability(ctx: Context) -> str:
        """Needs the client's sampling capability: refused with -32021 when the client did not declare it."""
        capabilities = ctx.client_capabilities
        if capabilities is None or capabilities.sampling is None:
            raise MCPError(MISSING_CAPABILITY, "the client did not declare the sampling capability this tool needs",
                           {"requiredCapabilities": {"sampling": {}}})
        return "sampling declared"

    functions = (test_simple_text, test_error_handling, test_logging_tool, test_tool_with_logging,
                 test_tool_with_progress, test_streaming_elicitation, test_missing_capability)
    return [Tool.from_function(fn, name=fn.__name__, description=fn.__doc__) for fn in functions]
