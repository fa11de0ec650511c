"""A start-up from a kept tools/list manifest, in a fresh interpreter: every tool listed, no family imported
until its first call (the manifest's own checks are tests/unit/test_tools_manifest.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from mcp_tools import manifest
from mcp_tools.catalog import HANDLER_MODULES, declared

ROOT = Path(__file__).resolve().parents[2]


LAZY = textwrap.dedent("""
    import asyncio, json, sys
    from pathlib import Path
    from mcp import Client
    from mcp_tools import manifest
    from mcp_tools.catalog import HANDLER_MODULES
    from mcp_tools.server import build_server
    from tests.answers import error_of

    def loaded():
        return sorted(m for m in HANDLER_MODULES if m in sys.modules)

    async def main():
        report = {}
        server = build_server(lambda: None, profile="all", version="t", tools=manifest.cached(Path(sys.argv[1])))
        async with Client(server, mode="legacy") as client:
            report["listed"] = len((await client.list_tools()).tools)
            report["after_list"] = loaded()
            added = await client.call_tool("add", {"a": 5, "b": 3})
            report["add"] = added.content[0].text
            report["after_add"] = loaded()
            refused = await client.call_tool("server_mcp.accept_task", {"task_id": 7})
            report["refused"] = error_of(refused)
            report["after_refusal"] = loaded()
        print(json.dumps(report))

    asyncio.run(main())
""")


def test_a_start_up_from_a_kept_manifest_lists_every_tool_and_imports_a_family_on_its_first_call(
        tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    manifest.cached(cache)  # as the first start after an install or an edit leaves it
    script = tmp_path / "lazy.py"
    script.write_text(LAZY)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, str(script), str(cache)], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["listed"] == len(declared())
    assert report["after_list"] == []
    assert report["add"] == "The sum of 5 + 3 = 8"
    assert report["after_add"] == ["mcp_tools.add_demo"]
    assert report["refused"]["code"] == "E_VALIDATION" and "task_id" in report["refused"]["message"]
    assert "mcp_tools.lifecycle.work" in report["after_refusal"]
    assert set(report["after_refusal"]) < set(HANDLER_MODULES)
