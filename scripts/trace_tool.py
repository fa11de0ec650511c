"""Which of Code3's modules one publish crosses, from the tool's arguments to its saved events.

Run from a checkout: `.venv/bin/python scripts/trace_tool.py`. It builds a throw-away embedded project (its own
CODE3_HOME), specifies a feature, then records every function of Code3's six layers that runs during one
`spec_mcp.publish_issue_with_metadata` call, and prints the modules by layer and the events the call saved.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from types import FrameType
from typing import Any

LAYERS = ("domain", "adapters", "projections", "mcp_tools", "scheduler", "code3")
ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="code3-trace-"))
    os.environ["CODE3_HOME"] = str(work / "home")
    project = work / "project"
    project.mkdir()
    from adapters.event_store import iter_log
    from adapters.keystore import Keystore
    from code3.settings import Settings
    from code3.wiring import build_services
    from mcp_tools.lifecycle import publish, specs

    Keystore(Settings(project=project).keystore_dir).new("alice")
    s = build_services(Settings(project=project, identity="alice"))
    s.chain.mint(s.signer.address, "USDT", 10_000_000)  # type: ignore[attr-defined]
    s.forge.create_repo("acme/app")  # type: ignore[attr-defined]
    spec = specs.specify(s, "Users can export their to-do list as CSV")
    before = max((n for n, _ in iter_log(s.store)), default=0)
    seen: dict[str, set[str]] = defaultdict(set)

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call":
            name = frame.f_globals.get("__name__", "")
            if name.split(".")[0] in LAYERS:
                seen[name].add(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        publish.publish_issue_with_metadata(s, repo="acme/app", feature_id=spec["feature_id"],
                                            spec_path=spec["paths"]["spec"], amount="1000000", network="local")
    finally:
        sys.setprofile(None)
    events = [type(e).__qualname__ for n, e in iter_log(s.store) if n > before]
    s.close()
    for layer in LAYERS:
        modules = sorted(m for m in seen if m.split(".")[0] == layer)
        print(f"{layer:12} {len(modules):3} modules: {', '.join(modules)}")
    print(f"total        {len(seen):3} modules, {sum(len(f) for f in seen.values())} functions")
    print(f"events saved: {len(events)}: {', '.join(events)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
