"""Issue 19's diff and batch reports: diff scoped to the spec's module (other modules' files, new ones too, and
tests are not its API), stale specs, no hidden spec for a dot-directory, why a module is degraded, baselines
from another parser version, and derive's unresolved imports by reason. Real files, the tree-sitter parser,
the event store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from domain.knowledge.module_scope import Scope, is_test_file
from domain.knowledge.skeleton import Import
from domain.knowledge.spec_document import parse_front, render_front
from mcp_tools.codenexus.derive import derive_relationships, unresolved_reason
from mcp_tools.reverse_spec.batch import run_batch
from mcp_tools.reverse_spec.diff import check_drift
from mcp_tools.reverse_spec.generate import generate
from mcp_tools.services import Services
from tests.integration.test_reverse_spec_tools import services_for, write


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.fixture
def s(project: Path) -> Iterator[Services]:
    services = services_for(project)
    yield services
    services.close()


def items(report: dict) -> set[tuple[str, str, str]]:  # type: ignore[type-arg]
    return {(i["change"], i["path"], i["name"]) for i in report["items"]}


ROOTED = {"root.py": "def top() -> int:\n    return 1\n",
          "doc/gen.py": "def generate_docs() -> None:\n    pass\n",
          "lib/util.py": "def helper(x: int) -> int:\n    return x\n"}


def test_diff_of_a_batch_module_leaves_out_its_subdirectories_even_new_ones(s: Services, project: Path) -> None:
    write(project, ROOTED)
    run_batch(s)
    assert parse_front((project / "specs/_root.spec.md").read_text())["scope"] == "directory"
    write(project, {"doc/more.py": "def more_docs() -> None:\n    pass\n",  # a new file of another module
                    "doc/gen.py": "def generate_docs(fmt: str) -> None:\n    pass\n",
                    "newdir/fresh.py": "def fresh() -> None:\n    pass\n",  # a new module, no spec yet
                    "root.py": "def top() -> int:\n    return 1\n\n\ndef second() -> int:\n    return 2\n"})
    report = check_drift(s, "specs/_root.spec.md", ".")
    assert items(report) == {("added", "root.py", "second")}, report["items"]
    assert report["scope"]["directoryOnly"] is True
    assert report["scope"]["otherModules"] == ["doc", "lib"]
    # doc/gen.py, doc/more.py, lib/util.py; newdir/ has no spec yet, but a batch module is its own directory
    assert report["scope"]["leftOut"] == {"other module": 3, "subdirectory": 1}
    assert report["stale"] is False


def test_an_old_batch_spec_without_scope_is_known_by_the_index_beside_it(s: Services, project: Path) -> None:
    write(project, ROOTED)
    run_batch(s)
    spec = project / "specs/_root.spec.md"
    spec.write_text(spec.read_text().replace('scope: "directory"\n', ""))  # as batch wrote it before issue 19
    assert "scope" not in parse_front(spec.read_text())
    write(project, {"newdir/fresh.py": "def fresh() -> None:\n    pass\n"})
    report = check_drift(s, "specs/_root.spec.md", ".")
    assert report["items"] == [] and report["scope"]["directoryOnly"] is True
    assert report["scope"]["leftOut"] == {"other module": 2, "subdirectory": 1}


def test_diff_of_a_directory_spec_leaves_out_other_specs_modules_and_counts_its_own_new_files(
        s: Services, project: Path) -> None:
    write(project, {"pkg/core.py": "def core() -> None:\n    pass\n",
                    "pkg/sub/inner.py": "def inner() -> None:\n    pass\n"})
    spec = generate(s, "pkg")["specPath"]
    generate(s, "pkg/sub")  # another module below pkg: its own spec
    write(project, {"pkg/sub/added.py": "def sub_added() -> None:\n    pass\n",
                    "pkg/sub/inner.py": "def inner(x: int) -> None:\n    pass\n",
                    "pkg/deep/new.py": "def deep_new() -> None:\n    pass\n"})
    report = check_drift(s, spec, "pkg")
    # pkg/sub's files (the new one too) are pkg/sub's; pkg/deep has no spec of its own: pkg's, so it counts
    assert items(report) == {("added", "pkg/deep/new.py", "deep_new")}, report["items"]
    assert report["scope"] == {"target": "pkg", "directoryOnly": False, "otherModules": ["pkg/sub"],
                               "testsAsApi": False, "include": [], "exclude": [], "leftOut": {"other module": 2}}


def test_test_files_are_not_api_unless_asked(s: Services, project: Path) -> None:
    write(project, {"m/api.py": "def api() -> None:\n    pass\n",
                    "m/test_api.py": "def test_api() -> None:\n    pass\n"})
    spec = generate(s, "m")["specPath"]
    tests = {"m/test_api.py": "def test_renamed() -> None:\n    pass\n",
             "m/api_test.py": "def test_more() -> None:\n    pass\n",
             "m/tests/helpers.py": "def fixture() -> None:\n    pass\n",
             "m/__tests__/a.js": "export function itWorks() {}\n",
             "m/b.test.ts": "export function checks(): void {}\n",
             "m/c.spec.js": "export function specced() {}\n",
             "m/x_test.go": "package m\n\nfunc Helper() {}\n"}
    write(project, tests)
    report = check_drift(s, spec, "m")
    assert report["items"] == [] and report["hasDrift"] is False, report["items"]
    assert report["scope"]["leftOut"] == {"test": 7}
    assert report["baselineHash"] == report["currentHash"]  # the API hash leaves tests out too
    with_tests = check_drift(s, spec, "m", tests_as_api=True)
    found = items(with_tests)
    assert ("added", "m/test_api.py", "test_renamed") in found and ("added", "m/x_test.go", "Helper") in found
    assert ("added", "m/b.test.ts", "checks") in found and ("added", "m/tests/helpers.py", "fixture") in found


def test_the_one_test_rule() -> None:
    for path in ("a/x_test.go", "test_a.py", "pkg/a_test.py", "tests/x.py", "a/tests/b/c.rs", "src/__tests__/a.js",
                 "a.test.ts", "a.test.js", "a.spec.ts", "b.spec.tsx", "c.test.mjs"):
        assert is_test_file(path), path
    for path in ("a/testing.go", "contest.py", "attest_x.py", "latest/x.py", "a.spec.md", "spec.ts", "src/test.py",
                 "protests/x.py"):
        assert not is_test_file(path), path
    scope = Scope.of("src", ["src/sub", "other"], include=["src/*.py"], exclude=["*_gen.py"])
    assert scope.others == ("src/sub",)
    assert [scope.reason_out(p) for p in ("src/a.py", "src/sub/b.py", "src/a_gen.py", "src/a.go", "lib/a.py")] == \
        [None, "other module", "excluded", "excluded", "outside"]


def test_include_and_exclude_narrow_the_diff(s: Services, project: Path) -> None:
    write(project, {"m/a.py": "def a() -> None:\n    pass\n", "m/gen_b.py": "def b() -> None:\n    pass\n"})
    spec = generate(s, "m")["specPath"]
    write(project, {"m/a.py": "def a2() -> None:\n    pass\n", "m/gen_b.py": "def b2() -> None:\n    pass\n"})
    assert {i[2] for i in items(check_drift(s, spec, "m", exclude=["m/gen_*"]))} == {"a", "a2"}
    assert {i[2] for i in items(check_drift(s, spec, "m", include=["m/gen_*"]))} == {"b", "b2"}


def test_a_spec_whose_module_is_gone_is_stale_in_diff_and_batch(s: Services, project: Path) -> None:
    write(project, {"keep/k.py": "def k() -> None:\n    pass\n", "gone/g.py": "def g() -> None:\n    pass\n"})
    run_batch(s)
    (project / "gone/g.py").unlink()
    (project / "gone").rmdir()
    report = check_drift(s, "specs/gone.spec.md", "gone")
    assert report["stale"] is True and "module is gone" in report["recommendation"]
    assert items(report) == {("removed", "gone/g.py", "g")}
    from domain.errors import Code3Error

    before = (project / "specs/gone.spec.md").read_bytes()
    with pytest.raises(Code3Error) as refused:  # accepting would leave an empty baseline that hides the loss
        check_drift(s, "specs/gone.spec.md", "gone", accept=True)
    assert "module is gone" in refused.value.message and "prune" in refused.value.hint
    assert (project / "specs/gone.spec.md").read_bytes() == before
    answer = run_batch(s)
    assert answer["staleSpecs"] == ["specs/gone.spec.md"] and answer["pruned"] == []
    assert (project / "specs/gone.spec.md").is_file()
    pruned = run_batch(s, prune=True)
    assert pruned["pruned"] == ["specs/gone.spec.md"] and not (project / "specs/gone.spec.md").exists()
    assert run_batch(s)["staleSpecs"] == []
    assert (project / "specs/keep.spec.md").is_file()


def test_a_missing_source_path_that_is_not_the_spec_s_module_is_still_not_found(s: Services, project: Path) -> None:
    write(project, {"keep/k.py": "def k() -> None:\n    pass\n"})
    spec = generate(s, "keep")["specPath"]
    from domain.errors import Code3Error

    with pytest.raises(Code3Error) as info:
        check_drift(s, spec, "elsewhere")
    assert "目标路径不存在" in info.value.message


def test_a_dot_directory_gets_a_visible_spec_and_an_old_hidden_one_is_stale(s: Services, project: Path) -> None:
    write(project, {".devcontainer/setup.py": "def setup() -> None:\n    pass\n", "app/a.py": "def a() -> None:\n"
                    "    pass\n"})
    hidden = render_front({"type": "module-spec", "version": 1, "sourceTarget": ".devcontainer",
                           "relatedFiles": [".devcontainer/setup.py"], "scope": "directory"})
    write(project, {"specs/.devcontainer.spec.md": hidden + "\n# old\n"})
    answer = run_batch(s)
    names = sorted(p.name for p in (project / "specs").iterdir())
    assert "dot-devcontainer.spec.md" in names and ".devcontainer" in answer["order"]
    assert not [n for n in names if n.startswith(".") and n != ".devcontainer.spec.md"]
    assert answer["staleSpecs"] == ["specs/.devcontainer.spec.md"]  # superseded by the visible one


def test_batch_says_why_each_module_is_degraded(s: Services, project: Path) -> None:
    write(project, {"ok/a.py": "def a() -> None:\n    pass\n", "empty/b.py": "import os\n",
                    "broken/c.py": "def c() -> None:\n    pass\n\n\ndef d(:\n", "broken/e.py": "def e() -> None:\n"
                    "    pass\n"})
    answer = run_batch(s)
    assert set(answer["degraded"]) == set(answer["degradedReasons"]) == {"ok", "empty", "broken"}, answer
    reasons = answer["degradedReasons"]
    assert all(r.startswith("offline writer") for r in reasons.values())
    assert "1 of 2 file(s) do not parse" in reasons["broken"] and "no exports" in reasons["empty"]
    assert reasons["ok"] == "offline writer (no model configured)"


def test_a_baseline_from_another_parser_is_rederived_for_unchanged_files(s: Services, project: Path) -> None:
    write(project, {"m/same.py": "def same(a: int) -> int:\n    return a\n",
                    "m/edited.py": "def edited() -> None:\n    pass\n"})
    spec = generate(s, "m")["specPath"]
    path = project / spec
    text = path.read_text()
    current = parse_front(text)["parserVersion"]
    assert current
    # an older parser read `same` differently (a signature it no longer gives): not drift, the bytes are the same
    old = text.replace(f'parserVersion: "{current}"', 'parserVersion: "0ld0ld0ld0ld"').replace(
        "def same(a: int) -> int", "def same(a)")
    assert old != text
    path.write_text(old)
    write(project, {"m/edited.py": "def edited() -> None:\n    pass\n\n\ndef extra() -> None:\n    pass\n"})
    report = check_drift(s, spec, "m")
    assert items(report) == {("added", "m/edited.py", "extra")}, report["items"]
    assert report["parserVersion"] == {"baseline": "0ld0ld0ld0ld", "current": current, "rederivedFiles": 1}
    assert "baseline from parser 0ld0ld0ld0ld" in report["warnings"][0]
    accepted = check_drift(s, spec, "m", accept=True)
    assert accepted["accepted"] and parse_front(path.read_text())["parserVersion"] == current
    clean = check_drift(s, spec, "m")
    assert clean["items"] == [] and clean["warnings"] == [] and clean["parserVersion"]["rederivedFiles"] == 0


def test_derive_breaks_unresolved_imports_down_by_reason(s: Services, project: Path) -> None:
    write(project, {"app/main.py": "import os\nimport requests\nfrom .missing import x\nfrom . import util\n",
                    "app/util.py": "def u() -> None:\n    pass\n",
                    "web/a.js": "import x from './nothing.js'\nimport y from '../../above.js'\n"
                                "import z from 'lodash'\n"})
    answer = derive_relationships(s)
    reasons = answer["unresolved_by_reason"]
    assert sum(reasons.values()) == answer["unresolved_imports"]
    assert reasons["external"] == 3 and reasons["not_found"] == 2 and reasons["outside_root"] == 1, reasons
    assert unresolved_reason("a/b.js", Import(specifier="`./x/${name}`", relative=True)) == "dynamic"
    assert unresolved_reason("a/b.py", Import(specifier="...far", relative=True)) == "outside_root"
    assert unresolved_reason("a/b.py", Import(specifier="conf/key", relative=True, resolved="conf/key")) == "refused"


def test_every_prepare_page_of_a_big_tree_carries_files_beside_the_context(
        s: Services, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks.reverse_spec import make_project
    from mcp_tools.reverse_spec.prepare import page, prepare_answer

    make_project(project, 30, 10)
    monkeypatch.setenv("CODE3_MAX_ANSWER_BYTES", "32768")
    whole = prepare_answer(s, ".")
    assert len(whole["context"]["text"]) > 2 * 32768  # the context alone would fill more than two pages
    offset = context_offset = 0
    pages = []
    while True:
        answer = page(whole, offset, context_offset)
        pages.append(answer)
        more = answer.get("continuation")
        if more is None:
            break
        offset, context_offset = more["offset"], more["contextOffset"]
    assert pages[0]["filePaths"] and pages[0]["context"]["text"]  # the first page: files and context both
    assert all(p["filePaths"] for p in pages if p is not pages[-1] or p["filePaths"])
    assert [f for p in pages for f in p["filePaths"]] == whole["filePaths"]
    assert "".join(p["context"]["text"] for p in pages) == whole["context"]["text"]


REQUEST_JS = """'use strict';
var http = require('http');
var req = Object.create(http.IncomingMessage.prototype);
module.exports = req;

req.acceptsCharsets = function(){
  return this.charsets;
};

req.param = function param(name, defaultValue) {
  return defaultValue;
};
"""


def test_diff_sees_a_commonjs_method_s_changed_signature_as_express_4_to_5(s: Services, project: Path) -> None:
    """express's lib/request.js idiom (`req.x = function` on the object `module.exports` names): 4.x's
    `req.acceptsCharsets = function()` became `function(...charsets)` in 5.x and `req.param` went away."""
    write(project, {"lib/request.js": REQUEST_JS})
    spec = generate(s, "lib")["specPath"]
    write(project, {"lib/request.js": REQUEST_JS.replace("function(){", "function(...charsets){").split(
        "req.param")[0]})
    found = {(i["severity"], i["change"], i["name"]) for i in check_drift(s, spec, "lib")["items"]}
    assert ("medium", "signature", "acceptsCharsets") in found and ("high", "removed", "param") in found, found


def test_the_cli_knobs_exclude_tests_as_api_and_prune(project: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["CODE3_PROJECT"] = str(project)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "code3", "spec", *args], env=env, cwd=project,
                              capture_output=True, text=True, timeout=120)

    write(project, {"m/a.py": "def a() -> None:\n    pass\n", "gone/g.py": "def g() -> None:\n    pass\n"})
    assert run("batch", "--no-progress").returncode == 0
    write(project, {"m/test_a.py": "def test_a() -> None:\n    pass\n", "m/gen_b.py": "def b() -> None:\n    pass\n"})
    drifted = run("diff", "specs/m.spec.md", "m", "--tests-as-api")
    assert drifted.returncode == 1 and {i["name"] for i in json.loads(drifted.stdout)["items"]} == {"test_a", "b"}
    narrowed = run("diff", "specs/m.spec.md", "m", "--exclude", "m/gen_*")
    assert narrowed.returncode == 0, narrowed.stdout  # the test file is not API, gen_b.py is left out
    assert json.loads(narrowed.stdout)["scope"]["leftOut"] == {"excluded": 1, "test": 1}
    (project / "gone/g.py").unlink()
    listed = run("batch", "--no-progress")
    assert json.loads(listed.stdout)["staleSpecs"] == ["specs/gone.spec.md"]
    pruned = run("batch", "--no-progress", "--prune")
    assert json.loads(pruned.stdout)["pruned"] == ["specs/gone.spec.md"]
    assert not (project / "specs/gone.spec.md").exists()


def test_a_context_dropping_thousands_of_files_lists_twenty_and_one_entry_for_the_rest() -> None:
    from domain.knowledge.skeleton import Export, FileSkeleton, MergedSkeleton
    from mcp_tools.reverse_spec.context import MAX_LISTED, assemble

    files = [FileSkeleton(path=f"m/f{i:04d}.py", language="python", lines=1, sha256="0" * 64,
                          exports=[Export(name=f"f{i}", kind="function", signature=f"def f{i}() -> None",
                                          start_line=1, end_line=1)]) for i in range(1500)]
    merged = MergedSkeleton.build("m", files)
    context = assemble("m", merged, budget=2_000)
    whole = [d for d in context.dropped if d["kind"] == "skeleton-file"]
    kept = context.text.count("### m/f")
    assert len(whole) == MAX_LISTED + 1 and [d["label"] for d in whole[:2]] == ["m/f1499.py", "m/f1498.py"]
    more = 1500 - kept - MAX_LISTED
    assert whole[-1]["label"] == f"{more} more, dropped last first: from m/f{1499 - MAX_LISTED:04d}.py back to " \
                                 f"m/f{kept:04d}.py"
    assert all(isinstance(d["estimatedTokens"], int) and d["estimatedTokens"] > 0 for d in whole)


def test_prepare_and_the_batch_index_count_api_exports_without_tests(s: Services, project: Path) -> None:
    from mcp_tools.reverse_spec.prepare import prepare_answer

    write(project, {"m/api.py": "def api() -> None:\n    pass\n",
                    "m/test_api.py": "def test_api() -> None:\n    pass\n\n\ndef test_more() -> None:\n    pass\n"})
    answer = prepare_answer(s, "m")
    assert answer["mergedSkeleton"]["files"] == 2 and answer["mergedSkeleton"]["exports"] == 1
    assert len(answer["skeletons"][1]["exports"]) == 2  # the test file's skeleton itself is whole
    run_batch(s)
    assert "| 1 | `m` | 2 | 1 |" in (project / "specs/_index.spec.md").read_text()
