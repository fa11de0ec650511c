"""The bounty as an MCP resource template on the worker's profile, `code3://bounty/{bounty_id}`: the answer
`server_mcp.show_bounty` gives, for clients that attach resources to a conversation instead of calling tools.

Imported whenever a server is built: the handler module is imported on the first read. A refusal is a JSON-RPC
error (resources have no `isError` result): -32002 for a bounty that is not there (MCP's resource-not-found code),
-32602 for a malformed id, -32603 otherwise. Its message carries the lifecycle's code, message and hint (clients
such as Claude Code show a model only the message); `data` is seed 002's `{type, details, timestamp}`, as on every
JSON-RPC error a Code3 server sends (`mcp_tools.dialects`).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp.shared.exceptions import MCPError

from domain.errors import Code, Code3Error
from mcp_tools.declare import extension

URI = "code3://bounty/{bounty_id}"
_JSONRPC = {Code.NOT_FOUND: -32002, Code.VALIDATION: -32602}


def read(runtime: Any, bounty_id: str) -> str:
    """The bounty's show_bounty answer as JSON text, or the refusal as a JSON-RPC error."""
    from mcp_tools.lifecycle.bounty_view import show_bounty

    try:
        answer = runtime.run(lambda s: show_bounty(s, bounty_id=bounty_id))
    except Code3Error as exc:
        raise MCPError(_JSONRPC.get(exc.code, -32603), f"{exc.code.value}: {exc.message} (hint: {exc.hint})"
                       ) from None
    return json.dumps(answer, ensure_ascii=False)


@extension(profiles=("server",))
def register(server: Any, runtime: Any) -> None:
    @server.resource(URI, name="Bounty", mime_type="application/json",
                     description="A bounty with its issue (title, spec, tasks, comments, each marked with its "
                                 "author), metadata, state, amount, deadline and PRs: as server_mcp.show_bounty "
                                 "answers it")
    async def bounty(bounty_id: str) -> str:
        return str(await anyio.to_thread.run_sync(read, runtime, bounty_id))
