"""The tools/list manifest (mcp_tools.manifest): derived from the declarations through the same binding as the
tools that run, kept on disk keyed by the sources, rebuilt (never trusted) when torn, foreign or tampered with,
and what lets a start-up list every tool while importing no family."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from mcp.server.mcpserver import MCPServer

from mcp_tools import manifest
from mcp_tools.binding import Runtime, sdk_tool
from mcp_tools.catalog import HANDLER_MODULES, declaration, declared

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
