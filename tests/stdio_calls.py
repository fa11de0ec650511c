"""Tool calls to a `code3 mcp` process over stdio as raw JSON-RPC lines, with exactly the environment given
(tests that plant state or strip variables need that), read as the client would read them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def call_tools(project: Path, env: dict[str, str], calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Handshake, then each (tool, arguments) in turn: the JSON-RPC answer of each (a result or an error)."""
    proc = subprocess.Popen([sys.executable, "-m", "code3", "mcp"], cwd=project, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None

    def ask(message: dict[str, Any]) -> dict[str, Any]:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        while "id" in message:
            answer = json.loads(proc.stdout.readline())
            if answer.get("id") == message["id"]:
                return answer
        return {}

    try:
        ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "tests", "version": "0"}}})
        ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return [ask({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": n, "arguments": a}})
                for i, (n, a) in enumerate(calls)]
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()  # type: ignore[union-attr]
