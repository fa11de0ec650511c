"""Every file-system call a tool makes under the project goes through the path resolver (issue 18, class 3),
seen at run time: an audit hook (tests/audit_watch.py) watches a representative call of every tool of the
reverse-spec, CodeNexus and ai-loom families (CodeNexus's resources too) and the lifecycle's spec writes and
publish, made through a real MCP client, on a project with planted symlinks (a specs entry, a source file, a
directory and a .gitignore that lead out of the project). It fails on any call under the project that the
resolver was not making, and on any call at all that reaches the directory the symlinks point at.

The allow-list, and why each entry is not the resolver's business:
- `.code3`, `.code3/*.sqlite*`: the state directory and its databases (event store, views, skeleton cache),
  opened by the storage adapters, never by a path a caller named;
- `.code3/project_id`, `.code3/.project_id.*.tmp`: CodeNexus's project id, state created 0600 (through a
  temporary sibling) by adapters/private_files.py;
- `.code3/reverse-spec`, `.code3/reverse-spec/*`: batch's checkpoint and its lock, state of its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.shared.exceptions import MCPError

from adapters.git import git
from adapters.keystore import Keystore
from adapters.paths import ProjectPaths
from code3.settings import Settings
from code3.wiring import build_services, ledger, local_forge
from mcp_tools.catalog import declared
from mcp_tools.server import build_server
from mcp_tools.services import Services
from tests.audit_watch import watching

ALLOWED = (".code3", ".code3/*.sqlite*", ".code3/project_id", ".code3/.project_id.*.tmp", ".code3/reverse-spec",
           ".code3/reverse-spec/*")
FAMILIES = ("reverse-spec", "codenexus")
REPO = "alice/todo-app"
SOURCES = {
    "src/app.py": "from src import util\n\n\ndef main():\n    return util.helper()\n",
    "src/util.py": "API_TOKEN = 'not-a-real-one'\n\n\ndef helper():\n    return 1\n",
    "src/__init__.py": "",
    "web/index.ts": "import { x } from './lib';\nexport function page(): number { return x; }\n",
    "web/lib.ts": "export const x = 1;\n",
}


def plant(project: Path, outside: Path) -> None:
    for rel, text in SOURCES.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    (outside / "evil.py").write_text("def stolen():\n    return 'outside'\n")
    (outside / "far.spec.md").write_text("---\ntype: module-spec\nrelatedFiles:\n  - \"src/util.py\"\n---\nfar\n")
    (outside / "gitignore").write_text("*.py\n")
    (project / "specs").mkdir()
    (project / "specs" / "linked").symlink_to(outside, target_is_directory=True)
    (project / "specs" / "far.spec.md").symlink_to(outside / "far.spec.md")
    (project / "src" / "evil.py").symlink_to(outside / "evil.py")
    (project / "lib").symlink_to(outside, target_is_directory=True)
    (project / "web" / ".gitignore").symlink_to(outside / "gitignore")


class Caller:
    def __init__(self, client: Any, portal: BlockingPortal) -> None:
        self.client, self.portal = client, portal
        self.called: dict[str, list[bool]] = {}

    def __call__(self, tool: str, args: dict[str, Any], *, ok: bool = True) -> Any:
        try:
            result = self.portal.call(self.client.call_tool, tool, args)
        except MCPError as exc:  # CodeNexus answers its refusals as JSON-RPC errors (seed 002)
            assert not ok, f"{tool}({args}) failed: {exc}"
            self.called.setdefault(tool, []).append(True)
            return None
        text = "".join(getattr(c, "text", "") for c in result.content)
        self.called.setdefault(tool, []).append(bool(result.is_error))
        if ok:
            assert not result.is_error, f"{tool}({args}) failed: {text}"
        return result.structured_content or (json.loads(text) if text.startswith("{") else text)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Path, Path, Services]]:
    project, outside = tmp_path / "proj", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    plant(project, outside)
    git("init", "-q", cwd=project)  # sync_renames asks git (in a subprocess) what moved
    git("add", "src", "web", cwd=project)
    git("commit", "-q", "-m", "sources", cwd=project)
    alice = Keystore(Settings(project=project).keystore_dir).new("alice")
    settings = Settings(project=project, identity="alice")
    chain = ledger(settings)
    chain.mint(alice.address, "USDT", 10_000)
    chain.close()
    forge = local_forge(settings, "alice")
    forge.create_repo(REPO)
    forge.close()
    s = build_services(settings)
    yield project, outside, s
    s.close()


def run_every_tool(call: Caller) -> None:
    call("prepare", {"targetPath": "src"})
    call("prepare", {"targetPath": "src/app.py", "deep": True})
    call("prepare", {"targetPath": "src/evil.py"}, ok=False)
    spec = call("generate", {"targetPath": "src"})["specPath"]
    call("batch", {})
    call("diff", {"specPath": spec, "sourcePath": "src"})
    call("add_tag", {"file_path": "src/app.py", "tags": ["core"]})
    call("add_comment", {"file_path": "src/app.py", "comment": "the entry point"})
    call("describe_tag", {"tag": "core", "description": "the core"})
    call("create_relationship", {"source_path": "src/app.py", "target_path": "src/util.py",
                                 "relationship_type": "calls"})
    call("create_relationship", {"source_path": "src/app.py", "target_path": "src/evil.py",
                                 "relationship_type": "calls"}, ok=False)
    call("query_files", {"tags": ["core"]})
    for uri in ("codenexus://file/src/app.py", "codenexus://relationships/src/app.py", "codenexus://tags"):
        call.portal.call(call.client.read_resource, uri)
    call("derive_relationships", {})
    call("sync_renames", {})
    call("remove_relationship", {"source_path": "src/app.py", "target_path": "src/util.py",
                                 "relationship_type": "calls"})
    call("remove_tag", {"file_path": "src/app.py", "tags": ["core"]})
    made = call("ai-loom.annotate", {"filePath": "src/util.py", "startLine": 4, "endLine": 5, "comment": "helper"})
    call("ai-loom.annotate", {"filePath": "src/evil.py", "startLine": 1, "endLine": 1, "comment": "x"}, ok=False)
    call("ai-loom.list_contexts", {})
    call("ai-loom.get_context", {"id": made["id"]})
    call("ai-loom.edit", {"id": made["id"], "comment": "the helper"})
    call("ai-loom.stitch", {})
    call("ai-loom.delete", {"id": made["id"]})
    feature = call("spec_mcp.specify", {"feature_description": "Export the list as CSV"})["feature_id"]
    call("spec_mcp.plan", {"feature_id": feature})
    call("spec_mcp.tasks", {"feature_id": feature})
    call("spec_mcp.publish_issue_with_metadata", {"repo": REPO, "feature_id": feature, "amount": "1000",
                                                  "asset": "USDT", "spec_path": f"specs/{feature}/spec.md"})


def test_every_tool_reaches_the_project_only_through_the_resolver(world: tuple[Path, Path, Services]) -> None:
    project, outside, s = world
    with start_blocking_portal() as portal, ExitStack() as stack:
        client = stack.enter_context(portal.wrap_async_context_manager(
            Client(build_server(lambda: s, profile="all", version="audit"), mode="legacy")))
        call = Caller(client, portal)
        with watching(project, outside, ALLOWED) as watch:
            run_every_tool(call)
    assert not watch.escaped, "reached the planted symlinks' target:\n" + _lines(watch.escaped)
    assert not watch.seen, "file-system calls under the project outside the resolver:\n" + _lines(watch.seen)
    assert watch.vouched > 50, "the resolver did the work (the hook saw it act)"
    wanted = {name for name, d in declared().items() if d.profiles & {*FAMILIES} or name.startswith("ai-loom.")}
    wanted |= {"spec_mcp.specify", "spec_mcp.plan", "spec_mcp.tasks", "spec_mcp.publish_issue_with_metadata"}
    assert wanted <= set(call.called), f"not called: {sorted(wanted - set(call.called))}"
    assert (outside / "evil.py").read_text() == "def stolen():\n    return 'outside'\n"


def test_the_hook_sees_a_call_that_skips_the_resolver(tmp_path: Path) -> None:
    project, outside = tmp_path / "p", tmp_path / "o"
    (project / "src").mkdir(parents=True)
    outside.mkdir()
    (project / "src" / "a.py").write_text("x = 1\n")
    (project / "src" / "out").symlink_to(outside, target_is_directory=True)
    (outside / "b.txt").write_text("b")
    paths = ProjectPaths(project)
    with watching(project, outside, ALLOWED) as watch:
        assert paths.read_text("src/a.py") == "x = 1\n"
        assert list(paths.walk("src")) == ["src/a.py"]
        assert not watch.seen and not watch.escaped and watch.vouched >= 2
        (project / "src" / "a.py").read_text()
        (project / "src" / "out" / "b.txt").read_text()
        (project / ".code3").mkdir()
    assert [(e, p) for e, p, _ in watch.seen] == [("open", "src/a.py")], "the allow-list let .code3 pass"
    assert [e for e, _, _ in watch.escaped] == ["open"]


def _lines(found: list[tuple[str, str, str]]) -> str:
    return "\n".join(f"  {event} {path}  ({where})" for event, path, where in found[:30])
