"""The tools/list answer derived from the declarations and kept on disk, so that a start-up lists every tool
without importing every family: importing the five families and building their 34 SDK tools costs about
0.3 s, half again the SDK's own start-up. A tool's family is imported on the tool's first call.

The file is keyed by a hash of the project's sources and of the Python, SDK and pydantic versions, so an edit
or an upgrade rebuilds it. A file that is missing, unreadable or not what this module writes is rebuilt, never
trusted: every entry is validated, and the module a tool's family is imported from must be one the catalog
names. Without a usable directory the manifest is built in memory each start (slower, same answers).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.server.mcpserver.tools import Tool
from mcp.types import Tool as ListedTool

from mcp_tools.catalog import HANDLER_MODULES, PROFILES

log = logging.getLogger("code3.mcp")

FORMAT = 1  # bump when the file's shape changes
KEEP = 4  # manifests kept per directory (other versions, other checkouts); the oldest beyond are removed
PACKAGES = ("domain", "adapters", "projections", "mcp_tools", "scheduler", "code3")
ROOT = Path(__file__).resolve().parent.parent  # where PACKAGES live: the checkout, or site-packages


@dataclass(frozen=True)
class Entry:
    """One declared tool: as tools/list shows it, the profiles that expose it, the module that declares it."""

    name: str
    module: str
    profiles: frozenset[str]
    listed: ListedTool

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "module": self.module, "profiles": sorted(self.profiles),
                "listed": self.listed.model_dump(by_alias=True, mode="json", exclude_none=True)}

    @classmethod
    def from_json(cls, data: Any) -> Entry:
        """An entry read back from disk; ValueError for anything this module would not have written."""
        if not isinstance(data, dict) or set(data) != {"name", "module", "profiles", "listed"}:
            raise ValueError("an entry is not an object with name, module, profiles and listed")
        name, module, profiles = data["name"], data["module"], data["profiles"]
        if module not in HANDLER_MODULES:
            raise ValueError(f"entry {str(name)[:80]!r} names a module the catalog does not")
        if not isinstance(profiles, list) or not profiles or not set(profiles) <= set(PROFILES):
            raise ValueError(f"entry {str(name)[:80]!r} names an unknown profile")
        listed = ListedTool.model_validate(data["listed"])
        if listed.name != name:
            raise ValueError(f"entry {str(name)[:80]!r} lists another tool")
        return cls(name, module, frozenset(profiles), listed)


def listed(tool: Tool) -> ListedTool:
    """A built SDK tool as tools/list answers it (the fields `MCPServer.list_tools` gives)."""
    return ListedTool(name=tool.name, title=tool.title, description=tool.description, input_schema=tool.parameters,
                      output_schema=tool.output_schema, annotations=tool.annotations, icons=tool.icons,
                      _meta=tool.meta)


# keywords whose values are data, not schemas: a `title` inside them is the data's own
@functools.cache
def build() -> tuple[Entry, ...]:
    """Every declared tool, from its declaration: imports every family (the slow path this file avoids)."""
    from mcp_tools.binding import Runtime, sdk_tool
    from mcp_tools.catalog import declared

    runtime = Runtime(_no_services)
    entries = []
    for decl in declared().values():
        module = decl.handler.__module__
        if module not in HANDLER_MODULES:
            raise RuntimeError(f"{decl.name} is declared in {module}, which mcp_tools.catalog.HANDLER_MODULES "
                               "does not name: add it there")
        entries.append(Entry(decl.name, module, decl.profiles, listed(sdk_tool(runtime, decl))))
    return tuple(entries)


def _no_services() -> Any:
    raise RuntimeError("a manifest's tools are listed, never run")


def fingerprint(root: Path = ROOT) -> str:
    """What the listed schemas depend on: the project's sources and the versions that turn them into schemas
    (about 5 ms for Code3's ~1 MB of sources)."""
    from importlib.metadata import version

    digest = hashlib.blake2b(digest_size=16)
    digest.update(json.dumps([FORMAT, sys.version, version("mcp"), version("pydantic"),
                              version("pydantic-core")]).encode())
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def cached(directory: Path | None) -> tuple[Entry, ...]:
    """The manifest kept in `directory` when it is current, else built and kept there (best effort)."""
    if directory is None:
        return build()
    key = fingerprint()
    path = directory / f"tools-{key}.json"
    try:
        return _read(path, key)
    except FileNotFoundError:
        log.info("no tools manifest for these sources yet: building %s", path)
    except (OSError, ValueError) as exc:  # a torn, foreign or tampered file: rebuilt, never trusted
        log.warning("rebuilding the tools manifest %s: %s", path, exc)
    entries = build()
    try:
        _write(directory, path, key, entries)
    except OSError as exc:
        log.warning("could not keep the tools manifest in %s (%s); each start will build it", directory, exc)
    return entries


def _read(path: Path, key: str) -> tuple[Entry, ...]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
        raise ValueError("not a manifest of these sources")
    tools = data.get("tools")
    if not isinstance(tools, list):
        raise ValueError("no list of tools")
    entries = tuple(Entry.from_json(item) for item in tools)
    if len({e.name for e in entries}) != len(entries):
        raise ValueError("a tool is listed twice")
    return entries


def _write(directory: Path, path: Path, key: str, entries: tuple[Entry, ...]) -> None:
    """Written whole under a temporary name and renamed into place: a reader sees the old file or the new one."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    body = json.dumps({"format": FORMAT, "key": key, "tools": [e.to_json() for e in entries]}, ensure_ascii=False)
    fd, temporary = tempfile.mkstemp(prefix=".tools-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(body)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _prune(directory, path)


def _prune(directory: Path, current: Path) -> None:
    """Keep the KEEP most recent manifests (other installs may share the directory); remove the rest."""
    others: list[tuple[int, Path]] = []
    for path in directory.glob("tools-*.json"):
        try:
            if path != current:
                others.append((path.stat().st_mtime_ns, path))
        except FileNotFoundError:  # another process pruned it first
            continue
    for _, stale in sorted(others, reverse=True)[KEEP - 1:]:
        stale.unlink(missing_ok=True)
