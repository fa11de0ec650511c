"""Reading a tool's failure from an answer, as every MCP client must: `isError: true`, the error in the text
content only, and no `structuredContent` (a client validates structuredContent against the tool's output
schema even on an error, and would hide the error behind its own).

Both helpers take the Python SDK's `CallToolResult` or the raw JSON-RPC `result` object (a dict).
"""

from __future__ import annotations

import json
from typing import Any


def error_text(result: Any) -> str:
    """The failure's text; asserts the answer is an error without structuredContent."""
    if isinstance(result, dict):
        is_error, structured, content = result.get("isError"), result.get("structuredContent"), result.get("content")
        items = [(c.get("type"), c.get("text")) for c in content or [] if isinstance(c, dict)]
    else:
        is_error, structured = result.is_error, result.structured_content
        items = [(getattr(c, "type", None), getattr(c, "text", None)) for c in result.content or []]
    assert is_error is True, f"not an error answer: {result!r}"
    assert structured is None, f"an error answer carries structuredContent: {structured!r}"
    assert len(items) == 1 and items[0][0] == "text" and isinstance(items[0][1], str), \
        f"an error answer is one text content: {result!r}"
    return items[0][1]


def error_of(result: Any) -> dict[str, Any]:
    """The failure as a dict: the JSON object of the JSON families (spec_mcp/server_mcp/add `{code, message,
    hint}`, ai-loom `{code, message[, hint]}`), or `{"text": text}` for reverse-spec's plain seed texts
    ("prepare 失败: …")."""
    text = error_text(result)
    try:
        data = json.loads(text)
    except ValueError:
        return {"text": text}
    if not isinstance(data, dict):
        return {"text": text}
    assert isinstance(data.get("code"), str) and isinstance(data.get("message"), str), \
        f"a JSON error without code and message: {text}"
    return data
