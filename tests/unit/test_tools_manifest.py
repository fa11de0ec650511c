"""The tools/list manifest (mcp_tools.manifest): derived from the declarations through the same binding as the
tools that run, kept on disk keyed by the sources, rebuilt (never trusted) when torn, foreign or tampered with,
and what lets a start-up list every tool while importing no family (that start-up, in a fresh interpreter:
tests/integration/test_tools_manifest.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp.server.mcpserver import MCPServer

from mcp_tools import manifest
from mcp_tools.binding import Runtime, sdk_tool
from mcp_tools.catalog import declaration, declared

ROOT = Path(__file__).resolve().parents[2]


def _dump(tools: object) -> dict[str, dict[str, object]]:
    return {t.name: t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in tools}  # type: ignore[attr-defined]


def _kept(directory: Path) -> list[Path]:
    return sorted(directory.glob("tools-*.json"))


def test_the_manifest_lists_each_tool_as_the_sdk_lists_it_built_from_its_declaration() -> None:
    runtime = Runtime(lambda: None)
    sdk = MCPServer("reference", tools=[sdk_tool(runtime, decl) for decl in declared().values()])
    from_sdk = _dump(anyio.run(sdk.list_tools))
    from_manifest = _dump(entry.listed for entry in manifest.build())
    assert set(from_manifest) == set(declared()) and len(from_manifest) >= 34
    assert from_manifest == from_sdk
    for entry in manifest.build():
        assert entry.module == declared()[entry.name].handler.__module__
        assert entry.profiles == declared()[entry.name].profiles


def test_a_kept_manifest_is_read_back_without_building(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = manifest.cached(tmp_path)
    [kept] = _kept(tmp_path)
    assert kept.name == f"tools-{manifest.fingerprint()}.json"
    assert kept.stat().st_mode & 0o777 == 0o600

    def no_build() -> None:
        raise AssertionError("a current manifest on disk must not be rebuilt")

    monkeypatch.setattr(manifest, "build", no_build)
    again = manifest.cached(tmp_path)
    assert _dump(e.listed for e in again) == _dump(e.listed for e in first)
    assert [(e.name, e.module, e.profiles) for e in again] == [(e.name, e.module, e.profiles) for e in first]


def _tamper_module(data: dict) -> None:
    data["tools"][0]["module"] = "intruder"


def _tamper_profile(data: dict) -> None:
    data["tools"][0]["profiles"] = ["root"]


def _tamper_listing(data: dict) -> None:
    data["tools"][0]["listed"]["name"] = "something.else"


def _tamper_schema(data: dict) -> None:
    data["tools"][0]["listed"]["inputSchema"] = "not a schema"


def _tamper_key(data: dict) -> None:
    data["key"] = "0" * 32


def _duplicate(data: dict) -> None:
    data["tools"].append(data["tools"][0])


@pytest.mark.parametrize("tamper", [_tamper_module, _tamper_profile, _tamper_listing, _tamper_schema, _tamper_key,
                                    _duplicate, "torn", "not json"])
def test_a_torn_foreign_or_tampered_manifest_is_rebuilt_and_never_imported_from(
        tamper: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    intruder = tmp_path / "intruder.py"
    intruder.write_text("raise SystemExit('the manifest made the server import a module the catalog does not name')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cache = tmp_path / "cache"
    manifest.cached(cache)
    [kept] = _kept(cache)
    text = kept.read_text()
    if tamper == "torn":
        kept.write_text(text[: len(text) // 2])
    elif tamper == "not json":
        kept.write_bytes(b"\x00\xff" * 10)
    else:
        data = json.loads(text)
        tamper(data)  # type: ignore[operator]
        kept.write_text(json.dumps(data))

    entries = manifest.cached(cache)
    assert _dump(e.listed for e in entries) == _dump(e.listed for e in manifest.build())
    assert [(e.name, e.module, e.profiles) for e in entries] == [(e.name, e.module, e.profiles)
                                                                 for e in manifest.build()]
    assert "intruder" not in sys.modules
    assert "rebuilding the tools manifest" in caplog.text
    assert json.loads(kept.read_text())["tools"] == json.loads(text)["tools"]  # written anew, whole


def test_a_tool_s_module_is_imported_only_when_the_catalog_names_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "intruder.py").write_text("raise SystemExit('imported a module the catalog does not name')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(LookupError, match="HANDLER_MODULES"):
        declaration("add", "intruder")
    assert "intruder" not in sys.modules
    with pytest.raises(LookupError, match="declares no tool"):
        declaration("no.such.tool", "mcp_tools.add_demo")
    assert declaration("add", "mcp_tools.add_demo").name == "add"


def test_without_a_usable_cache_directory_the_tools_are_still_served(tmp_path: Path) -> None:
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("")
    entries = manifest.cached(not_a_directory / "code3")
    assert {e.name for e in entries} == set(declared())
    assert manifest.cached(None) == manifest.build()


def test_the_fingerprint_changes_with_any_source_file_and_only_then(tmp_path: Path) -> None:
    for package in manifest.PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    handler = tmp_path / "mcp_tools" / "tools.py"
    handler.write_text("def f(a: int) -> int: ...\n")
    before = manifest.fingerprint(tmp_path)
    assert manifest.fingerprint(tmp_path) == before
    handler.write_text("def f(a: str) -> int: ...\n")
    edited = manifest.fingerprint(tmp_path)
    (tmp_path / "domain" / "values.py").write_text("")
    added = manifest.fingerprint(tmp_path)
    assert len({before, edited, added}) == 3


def test_manifests_of_other_sources_are_pruned_to_the_newest_few(tmp_path: Path) -> None:
    for i in range(6):
        old = tmp_path / f"tools-{i:032x}.json"
        old.write_text("{}")
        os.utime(old, ns=(i * 10**9, i * 10**9))
    manifest.cached(tmp_path)
    kept = {p.name for p in _kept(tmp_path)}
    assert f"tools-{manifest.fingerprint()}.json" in kept
    assert kept - {f"tools-{manifest.fingerprint()}.json"} == {f"tools-{i:032x}.json" for i in (5, 4, 3)}
    assert len(kept) == manifest.KEEP
