"""The JSON-RPC errors of /mcp that the SDK would not answer as Code3 does, reshaped before they leave.

- A POST body that is not JSON (-32700) or not a JSON-RPC message (-32600) is answered by the front itself
  (`json_rpc_problem`), the same way in both protocol eras.
- The errors the SDK's HTTP transport answers itself (a missing or unknown session, an Accept it cannot serve,
  routing headers that do not match the body) get seed 002's `data: {type, details, timestamp}`
  (`error_data_on`), as every Code3 JSON-RPC error carries (`mcp_tools.dialects`). Errors of requests the
  server handles get theirs from `mcp_tools.server.error_data`.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_tools.dialects import INVALID_REQUEST, PARSE_ERROR, error_data, gist, with_data


def json_rpc_problem(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC error for a POST body that is not JSON (-32700, id null) or not one JSON-RPC message
    (-32600, with its id when it has a usable one); None for a message the SDK should handle."""
    from mcp.types import jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, too deep, or an oversized integer literal
        return {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "Parse error",
                                                       "data": error_data(PARSE_ERROR, "the body is not JSON")}}
    try:
        jsonrpc_message_adapter.validate_python(decoded, by_name=False)
    except (ValidationError, RecursionError):
        request_id = decoded.get("id") if isinstance(decoded, dict) else None
        if not (isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool))):
            request_id = None
        message = "Invalid Request: not a JSON-RPC 2.0 message"
        return {"jsonrpc": "2.0", "id": request_id,
                "error": {"code": INVALID_REQUEST, "message": message, "data": error_data(INVALID_REQUEST, message)}}
    return None


def error_data_on(send: Any) -> Any:
    """`send` with seed 002's `data: {type, details, timestamp}` added to the JSON-RPC errors the SDK's HTTP
    transport answers itself (a missing or unknown session, an Accept it cannot serve, routing headers that
    do not match the body): small JSON bodies with a 4xx status. Errors of requests the server handles get
    their data from `mcp_tools.server.error_data`."""
    held: dict[str, Any] | None = None
    chunks: list[bytes] = []

    async def wrapped(message: dict[str, Any]) -> None:
        nonlocal held
        if message["type"] == "http.response.start" and message.get("status", 200) >= 400:
            headers = {k.lower(): v for k, v in message.get("headers", [])}
            if headers.get(b"content-type", b"").startswith(b"application/json"):
                held = message
                return
        if held is not None and message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = _with_error_data(b"".join(chunks))
            kept = [(k, v) for k, v in held.get("headers", []) if k.lower() != b"content-length"]
            await send({**held, "headers": [*kept, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            held = None
            return
        await send(message)

    return wrapped


def _with_error_data(body: bytes) -> bytes:
    try:
        message = json.loads(body)
    except ValueError:
        return body
    error = message.get("error") if isinstance(message, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), int):
        return body
    said = str(error.get("message", ""))
    data = with_data(error["code"], said, error.get("data"))
    if data is None:
        return body
    return json.dumps({**message, "error": {**error, "message": gist(said, data["details"]), "data": data}}).encode()
