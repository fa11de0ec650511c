"""The owner's commands on annotations, run from `code3 loom` on the owner's machine and never offered as a tool
or a REST route: lowering a sensitivity (everywhere else one only rises) and showing a comment opened, secret
and unshared internal ones included. Kept apart from `tools` so no front can list or route them by mistake.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mcp_tools.ai_loom import access
from mcp_tools.ai_loom.errors import loom_errors
from mcp_tools.services import Services


@loom_errors
def lower(s: Services, id: str, to: str, by: str) -> dict[str, Any]:
    """Lower an annotation's sensitivity: the owner's act at the CLI (`code3 loom lower`), never a tool or a
    route (there a sensitivity only rises). Recorded as SensitivityLowered naming `by`; the answer carries
    no text (a sealed one stays sealed in the log)."""
    at = datetime.now(UTC)
    annotation, lowered = access.step(s, id, lambda a: a.lower(to=to, by=by, at=at))
    was = annotation.lowered_from if lowered else annotation.sensitivity  # not lowered: it was at `to` already
    return {"id": annotation.ann_id, "from": was, "to": annotation.sensitivity, "lowered": lowered, "by": by}


@loom_errors
def reveal(s: Services, id: str) -> dict[str, Any]:
    """One annotation with its comment opened, secret and internal ones included: for the owner's CLI
    (`code3 loom show --reveal`) only, never a tool or a route."""
    annotation = access.load(s, id)
    view = access.current(s, annotation, access.text(s, annotation.file_path))
    view["comment"] = annotation.view(access.sealer(s), reveal=True)["comment"]
    return view
