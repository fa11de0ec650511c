"""Paths a hostile repository plants (issue 18, classes 3 and 7): a symlinked `specs/`, a spec file that is a
symlink out, a dependency spec behind a symlink, imports of keys and `.git/config`, a 90-level directory,
single files that are binary or too large, and the modes of what Code3 creates under `.code3/` whatever the
umask. Every one goes through the project's resolver (adapters/paths.py)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.paths import ProjectPaths
from adapters.private_files import loose_modes
from code3.settings import Settings
from code3.wiring import build_services
from domain.errors import Code, Code3Error
from domain.knowledge.spec_document import render_front
from mcp_tools.codenexus import resources
from mcp_tools.codenexus.derive import derive_relationships
from mcp_tools.codenexus.tools import add_tag
from mcp_tools.lifecycle import specs
from mcp_tools.reverse_spec.batch import run_batch
from mcp_tools.reverse_spec.prepare import prepare
from mcp_tools.services import Services


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write(root, {"src/a.py": "def f():\n    return 1\n", "lib/b.py": "from src.a import f\n\ndef g():\n"
                 "    return f()\n"})
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    return out


@pytest.fixture
def s(project: Path) -> Iterator[Services]:
    services = build_services(Settings(project=project))
    yield services
    services.close()


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_batch_refuses_a_specs_directory_that_leads_outside_before_writing_anything(
        s: Services, project: Path, outside: Path) -> None:
    (project / "specs").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Code3Error) as caught:
        run_batch(s, ".")
    assert caught.value.code == Code.UNAUTHORIZED and "outside the project" in caught.value.message
    assert str(outside) not in caught.value.message and str(project) not in caught.value.message
    assert tree(outside) == {}, "nothing was written through the symlink"


def test_batch_refuses_a_specs_directory_that_is_the_state_directory_s(s: Services, project: Path) -> None:
    keys = project / ".code3" / "keys"
    keys.mkdir(parents=True, exist_ok=True)
    before = tree(keys)
    (project / "specs").symlink_to(keys, target_is_directory=True)
    with pytest.raises(Code3Error) as caught:
        run_batch(s, ".")
    assert caught.value.code == Code.UNAUTHORIZED and "private" in caught.value.message
    assert tree(keys) == before


def test_a_spec_file_that_is_a_symlink_out_fails_its_module_only(s: Services, project: Path, outside: Path) -> None:
    victim = outside / "victim.txt"
    victim.write_text("precious\n")
    (project / "specs").mkdir()
    (project / "specs" / "src.spec.md").symlink_to(victim)
    answer = run_batch(s, ".")
    assert [f["module"] for f in answer["failed"]] == ["src"]
    assert "outside the project" in answer["failed"][0]["error"]
    assert "lib" in answer["successful"]
    assert victim.read_text() == "precious\n"
    assert str(outside) not in json.dumps(answer)


def test_dependency_specs_behind_a_symlink_never_reach_the_context(s: Services, project: Path,
                                                                    outside: Path) -> None:
    front = render_front({"type": "module-spec", "version": 1, "sourceTarget": "src", "relatedFiles": ["src/a.py"]})
    write(outside, {"stolen.spec.md": front + "\n# Stolen\n\nTOP-SECRET-TEXT-FROM-OUTSIDE\n"})
    (project / "specs").mkdir()
    (project / "specs" / "linked").symlink_to(outside, target_is_directory=True)
    (project / "specs" / "file.spec.md").symlink_to(outside / "stolen.spec.md")
    answer = prepare(s, "lib")
    assert answer["mergedSkeleton"]["internalImports"] == ["src/a.py"]
    assert "TOP-SECRET-TEXT-FROM-OUTSIDE" not in answer["context"]["text"]
    assert answer["context"]["parts"]["dependencySpecs"] == 0
    write(project, {"specs/src.spec.md": front + "\n# Src\n\nthe real one\n"})
    assert "the real one" in prepare(s, "lib")["context"]["text"], "a spec inside the project is still read"


def test_derive_never_records_keys_secrets_or_git_files(s: Services, project: Path) -> None:
    write(project, {".code3/keys/default.key": "{}", ".git/config": "[core]\n", "conf/serve_token": "t" * 20,
                    "conf/ok.h": "int ok;\n",
                    "src/main.c": '#include "../.code3/keys/default.key"\n#include "../.git/config"\n'
                                  '#include "../conf/serve_token"\n#include "../conf/ok.h"\nint main(void);\n'})
    answer = derive_relationships(s)
    out = resources.file_relationships(s, "src/main.c")["outgoing_relationships"]
    assert [r["target"] for r in out] == ["conf/ok.h"]
    assert answer["created"] == 2 and answer["unresolved_imports"] >= 3  # lib/b.py -> src/a.py too
    listed = json.dumps(resources.file_relationships(s, "conf/ok.h"))
    assert "default.key" not in listed and ".git" not in listed and "serve_token" not in listed


def test_a_90_level_directory_fails_its_module_and_the_batch_goes_on(s: Services, project: Path) -> None:
    deep = "/".join(f"level_{i:02d}" for i in range(90))
    write(project, {f"{deep}/x.py": "def x():\n    return 0\n"})
    answer = run_batch(s, ".")
    failed = {f["module"]: f["error"] for f in answer["failed"]}
    assert any(m.startswith("level_00/level_01") for m in failed), answer["failed"]
    assert {"src", "lib"} <= set(answer["successful"])
    text = json.dumps(answer)
    assert str(project) not in text and "/tmp" not in text
    assert (project / "specs" / "_index.spec.md").is_file()


def test_single_file_prepare_says_binary_and_too_large(s: Services, project: Path) -> None:
    write(project, {"bin/blob.py": b"\x00\x01\x02 not text", "big/huge.py": "x = 1\n" * 200_000})
    with pytest.raises(Code3Error) as binary:
        prepare(s, "bin/blob.py")
    assert "binary" in binary.value.message and "不支持的语言" not in binary.value.message
    with pytest.raises(Code3Error) as large:
        prepare(s, "big/huge.py")
    assert "too large" in large.value.message and "不支持的语言" not in large.value.message
    with pytest.raises(Code3Error) as unsupported:
        write(project, {"doc/x.unknownlang": "text\n"})
        prepare(s, "doc/x.unknownlang")
    assert "不支持的语言" in unsupported.value.message


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_state_created_by_prepare_add_tag_and_batch_is_private_under_umask_022(project: Path, umask_022: None) -> None:
    services = build_services(Settings(project=project))
    try:
        prepare(services, "src")
        add_tag(services, "src/a.py", ["core"])
        run_batch(services, "src")
    finally:
        services.close()
    state = project / ".code3"
    for name in ("skeletons.sqlite", "project_id", "reverse-spec", "reverse-spec/checkpoint.json"):
        assert (state / name).exists(), name
    assert loose_modes(state) == []
    assert stat.S_IMODE(state.stat().st_mode) == 0o700


def test_the_resolver_walk_follows_no_symlink_and_skips_state_and_secrets(project: Path, outside: Path) -> None:
    write(outside, {"far.spec.md": "x"})
    write(project, {"specs/a.spec.md": "a", "specs/sub/b.spec.md": "b", "specs/.code3/c.spec.md": "c",
                    "specs/.git/d.spec.md": "d", "specs/serve_token": "t", "specs/x.key": "k"})
    (project / "specs" / "out").symlink_to(outside, target_is_directory=True)
    (project / "specs" / "loop").symlink_to(project / "specs", target_is_directory=True)
    (project / "specs" / "far.spec.md").symlink_to(outside / "far.spec.md")
    paths = ProjectPaths(project)
    assert list(paths.walk("specs", suffix=".spec.md")) == ["specs/a.spec.md", "specs/sub/b.spec.md"]
    assert list(paths.walk("specs")) == ["specs/a.spec.md", "specs/sub/b.spec.md"]


def test_the_lifecycle_spec_writes_refuse_a_specs_directory_or_feature_that_leads_out(
        s: Services, project: Path, outside: Path) -> None:
    (project / "specs").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Code3Error) as caught:
        specs.specify(s, "Export the list as CSV")
    assert caught.value.code == Code.UNAUTHORIZED and tree(outside) == {}
    (project / "specs").unlink()
    (project / "specs").mkdir()
    (project / "specs" / "007-planted").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Code3Error):
        specs.specify(s, "Export the list as CSV", feature_id="007-planted", allow_overwrite=True)
    with pytest.raises(Code3Error):
        specs.plan(s, "007-planted")
    assert tree(outside) == {}


def test_tasks_never_reads_a_planted_symlink_into_the_model_s_input(s: Services, project: Path,
                                                                     outside: Path) -> None:
    (outside / "stolen.md").write_text("TOP-SECRET-TEXT-FROM-OUTSIDE\n")
    fid = specs.specify(s, "Export the list as CSV")["feature_id"]
    specs.plan(s, fid)
    (project / "specs" / fid / "notes.md").symlink_to(outside / "stolen.md")
    seen: list[dict[str, str]] = []
    real_tasks = s.writer.tasks

    def spy(feature_id: str, inputs: dict[str, str]) -> str:
        seen.append(inputs)
        return real_tasks(feature_id, inputs)

    s.writer.tasks = spy  # type: ignore[method-assign]
    specs.tasks(s, fid)
    assert seen and "plan.md" in seen[0] and "notes.md" not in seen[0]
    assert all("TOP-SECRET" not in text for text in seen[0].values())


def test_an_unexpected_failure_names_no_absolute_path(s: Services, project: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_tools.reverse_spec import batch as batch_module

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(36, "File name too long", str(project / "specs" / ("x" * 300)))

    monkeypatch.setattr(batch_module, "write_private", broken)
    with pytest.raises(Code3Error) as caught:
        batch_module.batch(s)
    assert caught.value.code == Code.INTERNAL and "File name too long" in caught.value.message
    assert str(project) not in caught.value.message and "/tmp" not in caught.value.message
    assert "specs/xxx" in caught.value.message


def test_planted_fifos_are_skipped_or_refused_and_nothing_waits_on_them(s: Services, project: Path) -> None:
    import threading

    from mcp_tools.ai_loom import tools as loom

    for rel in ("src/pipe.py", "web/.gitignore", "specs/pipe.spec.md"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(project / rel)
    (project / "web" / "page.ts").write_text("export const x = 1;\n")
    outcome: dict[str, object] = {}

    def run() -> None:
        outcome["prepare"] = prepare(s, ".")["filePaths"]
        outcome["batch"] = run_batch(s, ".")["failed"]
        outcome["derive"] = derive_relationships(s)["files_scanned"]
        for name, call in (("prepare-fifo", lambda: prepare(s, "src/pipe.py")),
                           ("annotate-fifo", lambda: loom.annotate(s, filePath="src/pipe.py", startLine=1,
                                                                   endLine=1, comment="c"))):
            try:
                call()
            except Code3Error as exc:
                outcome[name] = exc.message
        outcome["done"] = True

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    assert outcome.get("done"), f"a call waited on a FIFO: {outcome}"
    assert "src/pipe.py" not in outcome["prepare"] and "web/page.ts" in outcome["prepare"]  # type: ignore[operator]
    assert outcome["batch"] == []
    assert "not a regular file" in str(outcome["prepare-fifo"]) and "not a regular file" in str(
        outcome["annotate-fifo"])
