"""`code3 mcp` over stdio keeps the tools/list manifest on its first start and reads it on the next
(mcp_tools.manifest); both starts list every declared tool."""

from __future__ import annotations

from pathlib import Path

from mcp_tools.catalog import declared
from tests.e2e.test_protocol_errors import StdioServer, request


def test_code3_mcp_keeps_the_manifest_on_its_first_start_and_reads_it_on_the_next(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    starts = []
    for _ in range(2):
        server = StdioServer(tmp_path, env={"CODE3_CACHE_DIR": str(cache)})
        server.handshake()
        listed = server.ask(request(2, "tools/list"))  # stdin stays open until the answer is read
        assert len(listed["result"]["tools"]) == len(declared())
        starts.append(server.close())
    assert "building" in starts[0] and "tools manifest" in starts[0]
    assert "tools manifest" not in starts[1]
    assert len(list(cache.glob("tools-*.json"))) == 1
