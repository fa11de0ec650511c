"""The profiles that are unions of others, apart from the catalog so that `mcp_tools.declare` can expand a
declaration's profiles without importing the catalog (which imports it)."""

from __future__ import annotations

# Profiles that are the union of others: a tool, resource, prompt or completer declared for a member is exposed
# in the union too (`mcp_tools.declare` expands the profiles it is given), so no declaration names a union.
UNIONS: dict[str, tuple[str, ...]] = {
    "sponsor": ("client-local", "client-remote"),  # every tool a sponsor calls: specify to publish
    "knowledge": ("reverse-spec", "codenexus", "ai-loom"),  # the code-understanding families on one server
}
