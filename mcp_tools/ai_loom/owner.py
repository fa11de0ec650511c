"""The owner's commands on annotations, run from `code3 loom` on the owner's machine and never offered as a tool
or a REST route: lowering a sensitivity (everywhere else one only rises) and showing a comment opened, secret
and unshared internal ones included. Kept apart from `tools` so no front can list or route them by mistake.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from domain.knowledge.annotation import Annotation
from mcp_tools.ai_loom import access
from mcp_tools.ai_loom.errors import loom_errors
from mcp_tools.services import Services


@loom_errors
def lower(s: Services, id: str, to: str, by: str) -> dict[str, Any]:
    """Lower an annotation's sensitivity: the owner's act at the CLI (`code3 loom lower`), never a tool or a
    route (there a sensitivity only rises). Recorded as SensitivityLowered naming `by`; the answer carries
    no text (a sealed one stays sealed in the log)."""
    at, seen = datetime.now(UTC), {"from": "", "lowered": False}

    def change(current: Annotation | None) -> Annotation | None:
        live = access.live(current, id)
        seen.update({"from": live.sensitivity, "lowered": live.lower(to=to, by=by, at=at)})
        return live if seen["lowered"] else None

    lowered = access.live(access.write(s, id, change), id)
    return {"id": lowered.ann_id, "from": seen["from"], "to": lowered.sensitivity, "lowered": seen["lowered"],
            "by": by}


@loom_errors
def reveal(s: Services, id: str) -> dict[str, Any]:
    """One annotation with its comment opened, secret and internal ones included: for the owner's CLI
    (`code3 loom show --reveal`) only, never a tool or a route."""
    annotation = access.load(s, id)
    view = access.current(s, annotation, access.text(s, annotation.file_path))
    view["comment"] = annotation.view(access.sealer(s), reveal=True)["comment"]
    return view
