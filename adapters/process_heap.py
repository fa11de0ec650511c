"""The garbage collector's policy for long-running processes (`code3 serve`, `code3 mcp`, `code3 worker`).

CPython's full (generation 2) collection walks every tracked object and holds the GIL meanwhile: in a serve that
holds the MCP SDK's models, pydantic schemas and the aggregate cache, each took 60-90 ms and came every few
seconds under 100 calls/s, which was the whole p99 of `add` and of a board read (benchmarks/concurrency.py:
p99 of `add` 54-105 ms before, 12.5 ms after). After start, what was built to start (modules, schemas, the app)
lives as long as the process: `gc.freeze()` takes it out of every collection; cycles made later are collected
as before. The thresholds stay CPython's: a larger first generation (tried: 20 000) made each middle-generation
pass 90 ms long instead.
"""

from __future__ import annotations

import gc


def settle_after_start() -> None:
    """Collect once, then freeze what survives (the start's objects) out of every later collection."""
    gc.collect()
    gc.freeze()
