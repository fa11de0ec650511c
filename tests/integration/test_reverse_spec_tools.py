"""The reverse-spec handlers on real files, the tree-sitter parser and the event store (SQLite).

The model is either the offline writer, a counting stand-in of the LLM port, or the real anthropic client
against the loopback Anthropic API (tests/fakes/anthropic_server.py).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.llm.anthropic_llm import AnthropicLLM, anthropic_policy
from adapters.llm.port import Completion
from code3.settings import Settings
from code3.wiring import build_services, ensure_identity, llm
from domain.errors import Code3Error
from domain.knowledge.spec_document import parse, parse_front
from mcp_tools.lifecycle import audit
from mcp_tools.reverse_spec.batch import run_batch
from mcp_tools.reverse_spec.diff import check_drift
from mcp_tools.reverse_spec.generate import generate
from mcp_tools.reverse_spec.prepare import prepare
from mcp_tools.services import Services
from tests.fakes.anthropic_server import SECTION_TITLES, FakeAnthropic

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "code"


class CountingLLM:
    """The LLM port, counting calls; answers the nine sections. `crash_at`: raise (as a kill would) on that call."""

    model = "counting-model"

    def __init__(self, crash_at: int | None = None) -> None:
        self.calls: list[str] = []
        self.crash_at = crash_at

    def complete(self, system: str, prompt: str, max_tokens: int = 8192) -> Completion:
        self.calls.append(prompt)
        if self.crash_at is not None and len(self.calls) == self.crash_at:
            raise KeyboardInterrupt("killed")
        text = "\n\n".join(f"## {i}. {t}\n\nabout it" for i, t in enumerate(SECTION_TITLES, 1))
        return Completion(text, self.model, 100, 50)

    def targets(self) -> list[str]:
        import re

        return [re.search(r"Target: `([^`]*)`", p).group(1) for p in self.calls]  # type: ignore[union-attr]


def services_for(project: Path, **env: str) -> Services:
    settings = Settings.from_env(env=env, project=project)
    ensure_identity(settings)
    return build_services(settings)


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


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


LAYERED = {
    "util/text.py": 'def clean(s: str) -> str:\n    """Strip it."""\n    return s.strip()\n',
    "core/engine.py": "from util.text import clean\n\n\nclass Engine:\n    def run(self, x: str) -> str:\n"
                      "        return clean(x)\n",
    "app/main.py": "from core.engine import Engine\nfrom util.text import clean\n\n\ndef main() -> None:\n"
                   "    print(clean(Engine().run(' x ')))\n",
    "cyc_a/a.py": "from cyc_b.b import g\n\n\ndef f() -> int:\n    return g()\n",
    "cyc_b/b.py": "from cyc_a.a import f\n\n\ndef g() -> int:\n    return 1\n",
}


# -- prepare --------------------------------------------------------------------------------------------------

RESOLVING = {"python", "typescript", "javascript", "go", "rust", "java", "c", "cpp", "ruby"}  # issue 11's list


@pytest.mark.parametrize("language", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_prepare_returns_the_fixture_skeletons_with_resolved_imports(project: Path, language: str) -> None:
    shutil.copytree(FIXTURES / language, project / language)
    from adapters.code_parser.treesitter import TreeSitterCodeParser

    expected = TreeSitterCodeParser(workers=1).scan(project, language)
    services = services_for(project)
    try:
        answer = prepare(services, language)
    finally:
        services.close()
    assert answer["filePaths"] == [f.path for f in expected.files]
    assert answer["skeletons"] == [f.model_dump(mode="json") for f in expected.files]
    assert answer["mergedSkeleton"]["files"] == len(expected.files)
    assert answer["mergedSkeleton"]["exports"] == sum(len(f.exports) for f in expected.files) > 0
    resolved = [i["resolved"] for f in answer["skeletons"] for i in f["imports"] if i["resolved"]]
    if language in RESOLVING:
        assert resolved, "the fixture's project imports resolve to project paths"
    assert answer["context"]["estimatedTokens"] > 0 and answer["context"]["dropped"] == []
    json.dumps(answer)


def test_prepare_on_the_python_fixture_names_its_exports_and_imports(s: Services, project: Path) -> None:
    shutil.copytree(FIXTURES / "python", project, dirs_exist_ok=True)
    answer = prepare(s, "pkg/core.py")
    (core,) = answer["skeletons"]
    assert [(e["name"], e["kind"]) for e in core["exports"]] == [("LIMIT", "const"), ("Base", "class"),
                                                                ("Engine", "class"), ("fetch", "function")]
    assert {(i["specifier"], i["resolved"]) for i in core["imports"]} == {
        ("os", None), (".", "pkg/util.py"), (".util", "pkg/util.py")}
    absolute = prepare(s, str(project / "pkg" / "core.py"))
    assert absolute["filePaths"] == ["pkg/core.py"]


def test_prepare_answers_the_seed_text_for_a_missing_path(s: Services) -> None:
    with pytest.raises(Code3Error) as info:
        prepare(s, "src/nonexistent/")
    assert info.value.message == "目标路径不存在: src/nonexistent/"


def test_prepare_refuses_paths_outside_the_project(s: Services, tmp_path: Path) -> None:
    (tmp_path / "outside.py").write_text("x = 1\n")
    for value in ("../outside.py", str(tmp_path / "outside.py")):
        with pytest.raises(Code3Error) as info:
            prepare(s, value)
        assert info.value.code.value in ("E_UNAUTHORIZED", "E_VALIDATION")  # outside, or `..` refused


def test_prepare_of_an_unparseable_file_answers_the_seed_text_and_deep_falls_back(s: Services, project: Path) -> None:
    write(project, {"bad.py": "def f(:\n    pass\n"})
    with pytest.raises(Code3Error) as info:
        prepare(s, "bad.py")
    assert info.value.message.startswith("AST 解析失败，建议使用 --deep 模式")
    deep = prepare(s, "bad.py", deep=True)
    assert any("AST 解析失败" in w for w in deep["context"]["warnings"])
    assert "def f(:" in deep["context"]["text"]


def test_deep_prepare_adds_bodies_with_secrets_redacted(s: Services, project: Path) -> None:
    token = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"
    write(project, {"svc/client.py": f'def connect() -> str:\n    token = "{token}"\n    return token\n'})
    shallow = prepare(s, "svc")
    assert token not in json.dumps(shallow) and "return token" not in shallow["context"]["text"]
    deep = prepare(s, "svc", deep=True)
    assert "return token" in deep["context"]["text"]
    assert token not in json.dumps(deep)
    assert deep["context"]["redactions"]["github-token"] == 1


# -- generate -------------------------------------------------------------------------------------------------

def test_generate_offline_writes_a_spec_with_front_matter_sections_diagrams_and_baseline(s: Services,
                                                                                        project: Path) -> None:
    shutil.copytree(FIXTURES / "python", project, dirs_exist_ok=True)
    answer = generate(s, "pkg")
    assert answer["specPath"] == "specs/pkg.spec.md"
    assert answer["confidence"] == "medium" and answer["tokenUsage"]["totalTokens"] == 0
    assert any("offline writer" in w for w in answer["warnings"])
    text = (project / answer["specPath"]).read_text()
    front = parse_front(text)
    assert set(front) >= {"type", "version", "sourceTarget", "relatedFiles", "lastUpdated", "confidence",
                          "skeletonHash"}
    assert front["version"] == 1 and front["relatedFiles"] == ["pkg/__init__.py", "pkg/core.py", "pkg/util.py"]
    document = parse(text)
    assert len(document.sections) == 9 and "Engine" in document.sections["interface"]
    assert "classDiagram" in text and "graph LR" in text and "## File inventory" in text
    assert [f.path for f in document.baseline.files] == front["relatedFiles"]
    assert generate(s, "pkg", outputDir="docs/specs")["specPath"] == "docs/specs/pkg.spec.md"
    again = generate(s, "pkg")
    assert parse_front((project / again["specPath"]).read_text())["version"] == 2


def test_generate_through_claude_reports_token_usage_and_retries_a_429(s: Services, project: Path) -> None:
    fake = FakeAnthropic().start()
    try:
        s.llm = AnthropicLLM(fake.api_key, base_url=fake.url, model="claude-test",
                             policy=anthropic_policy(base_wait_s=0.01))
        shutil.copytree(FIXTURES / "python", project, dirs_exist_ok=True)
        fake.fail_next(429, retry_after=0.05)
        answer = generate(s, "pkg")
        assert fake.statuses == [429, 200]
        assert answer["confidence"] == "high" and answer["warnings"] == []
        usage = answer["tokenUsage"]
        assert usage["inputTokens"] > 0 and usage["outputTokens"] > 0 and not usage["estimated"]
        text = (project / answer["specPath"]).read_text()
        assert "Model-written intent of `pkg`" in text and parse_front(text)["model"] == "claude-test"
        assert fake.requests[-1]["model"] == "claude-test"
        assert "pkg/core.py" in fake.requests[-1]["messages"][0]["content"]
    finally:
        fake.stop()


@pytest.mark.parametrize(("status", "text"), [(429, "Claude API 返回 429: 速率限制"),
                                              (500, "Claude API 返回 500: 服务器内部错误"),
                                              (529, "Claude API 返回 529: 服务过载")])
def test_generate_reports_the_seed_text_when_retries_are_exhausted(s: Services, project: Path, status: int,
                                                                    text: str) -> None:
    fake = FakeAnthropic().start()
    try:
        s.llm = AnthropicLLM(fake.api_key, base_url=fake.url, policy=anthropic_policy(attempts=3, base_wait_s=0.01))
        write(project, {"m/a.py": "def a() -> int:\n    return 1\n"})
        fake.fail_next(status, times=3)
        with pytest.raises(Code3Error) as info:
            generate(s, "m")
        assert info.value.message == text
        assert fake.statuses == [status] * 3
        assert not (project / "specs" / "m.spec.md").exists()
    finally:
        fake.stop()


def test_a_required_llm_without_a_key_answers_the_seed_text(project: Path) -> None:
    write(project, {"m/a.py": "def a() -> int:\n    return 1\n"})
    services = services_for(project, CODE3_LLM="anthropic")
    try:
        with pytest.raises(Code3Error) as info:
            generate(services, "m")
        assert info.value.message == "未检测到 ANTHROPIC_API_KEY"
    finally:
        services.close()
    assert llm(Settings.from_env(env={}, project=project)) is None
    chosen = llm(Settings.from_env(env={"ANTHROPIC_API_KEY": "sk-ant-x", "CODE3_LLM_MODEL": "m1"}, project=project))
    assert isinstance(chosen, AnthropicLLM) and chosen.model == "m1" and "sk-ant-x" not in repr(chosen)


def test_an_unexpected_failure_is_an_internal_error_without_a_trace(s: Services, project: Path) -> None:
    write(project, {"m/a.py": "def a() -> int:\n    return 1\n"})

    class Broken:
        model = "broken"

        def complete(self, *args: object, **kwargs: object) -> Completion:
            raise RuntimeError("boom at line 3")

    s.llm = Broken()  # type: ignore[assignment]
    with pytest.raises(Code3Error) as info:
        generate(s, "m")
    assert info.value.message == "内部错误: boom at line 3" and "Traceback" not in info.value.message


def test_generated_specs_and_accepted_drift_are_in_the_audit_history(s: Services, project: Path) -> None:
    write(project, {"m/a.py": "def a() -> int:\n    return 1\n"})
    generate(s, "m")
    generate(s, "m")
    write(project, {"m/a.py": "def a(x: int) -> int:\n    return x\n"})
    check_drift(s, "specs/m.spec.md", "m", accept=True)
    history = audit.history(s, "specs/m.spec.md")
    assert [r["event"] for r in history] == ["Generated", "Regenerated", "DriftAccepted"]
    generated, _, accepted = history
    assert generated["data"]["model"] == "offline" and generated["data"]["who"] == s.signer.name
    assert generated["data"]["skeleton_hash"] == accepted["data"]["from_hash"] != accepted["data"]["to_hash"]
    assert accepted["data"]["medium"] == 1


# -- batch ----------------------------------------------------------------------------------------------------

def test_batch_orders_leaves_first_reports_cycles_and_writes_an_index(s: Services, project: Path) -> None:
    write(project, LAYERED)
    answer = run_batch(s)
    assert answer["order"] == ["util", "core", "app", "cyc_a", "cyc_b"]
    assert answer["cycles"] == [["cyc_a", "cyc_b"]] and answer["brokenEdges"] == [["cyc_a", "cyc_b"]]
    assert answer["successful"] == answer["order"] and answer["skipped"] == [] and answer["failed"] == []
    index = (project / answer["indexSpecPath"]).read_text()
    assert parse_front(index)["type"] == "architecture-index" and "cyc_a" in index and "```mermaid" in index
    for module in answer["order"]:
        assert (project / "specs" / f"{module}.spec.md").is_file()


def test_a_second_batch_regenerates_nothing_and_force_regenerates_all(s: Services, project: Path) -> None:
    write(project, LAYERED)
    s.llm = model = CountingLLM()
    run_batch(s)
    assert len(model.calls) == 5
    assert model.targets() == ["util", "core", "app", "cyc_a", "cyc_b"]
    assert "### specs/util.spec.md" in model.calls[1], "leaves first: core's context has util's fresh spec"
    again = run_batch(s)
    assert len(model.calls) == 5, "no module changed: no model call"
    assert again["successful"] == [] and again["skipped"] == again["order"] and not again["indexGenerated"]
    forced = run_batch(s, force=True)
    assert len(model.calls) == 10 and forced["successful"] == forced["order"]


def test_touching_a_leaf_regenerates_that_module_and_its_dependants_only(s: Services, project: Path) -> None:
    write(project, LAYERED)
    s.llm = model = CountingLLM()
    run_batch(s)
    model.calls.clear()
    with_shout = LAYERED["util/text.py"] + "\n\ndef shout(s: str) -> str:\n    return s.upper()\n"
    write(project, {"util/text.py": with_shout})
    answer = run_batch(s)
    assert model.targets() == ["util", "core", "app"]
    assert answer["skipped"] == ["cyc_a", "cyc_b"] and answer["indexGenerated"]
    model.calls.clear()
    write(project, {"util/text.py": with_shout.replace("return s.upper()", "return s.upper()  # same")})
    assert run_batch(s)["successful"] == [] and model.calls == [], "a body-only change is not an API change"


def test_an_interrupted_batch_resumes_where_it_stopped(s: Services, project: Path) -> None:
    write(project, LAYERED)
    s.llm = CountingLLM(crash_at=3)
    with pytest.raises(KeyboardInterrupt):
        run_batch(s)
    checkpoint = json.loads((project / ".code3" / "reverse-spec" / "checkpoint.json").read_text())
    assert sorted(checkpoint["roots"]["."]["modules"]) == ["core", "util"]
    s.llm = model = CountingLLM()
    answer = run_batch(s)
    assert model.targets() == ["app", "cyc_a", "cyc_b"]
    assert answer["skipped"] == ["util", "core"]


def test_batch_reports_progress_and_failed_modules(s: Services, project: Path) -> None:
    write(project, {**LAYERED, "broken/x.py": "def f(:\n"})
    seen: list[tuple[int, int, str]] = []
    answer = run_batch(s, progress=lambda done, total, message: seen.append((done, total, message)))
    assert [f["module"] for f in answer["failed"]] == ["broken"]
    assert answer["failed"][0]["error"].startswith("AST 解析失败")
    assert seen[-1][0] == seen[-1][1] == len(answer["order"]) + 1
    assert [d for d, _, _ in seen] == list(range(1, len(seen) + 1))


# -- diff -----------------------------------------------------------------------------------------------------

DIFF_SOURCE = '''"""Shapes."""
import os
import json


class Shape:
    """A shape."""

    def area(self, scale: int = 1) -> float:
        return 0.0

    def name(self) -> str:
        return "shape"


def make(kind: str, size: int) -> Shape:
    return Shape()


def remove_me() -> None:
    pass
'''


def test_diff_finds_each_kind_of_change(s: Services, project: Path) -> None:
    write(project, {"geo/shapes.py": DIFF_SOURCE})
    spec = generate(s, "geo")["specPath"]
    changed = (DIFF_SOURCE.replace("def remove_me() -> None:\n    pass\n", "def added() -> int:\n    return 1\n")
               .replace("def make(kind: str, size: int)", "def make(kind: str, size: float)")
               .replace("    def name(self) -> str:\n        return \"shape\"\n", "    def label(self) -> str:\n"
                        "        return \"shape\"\n"))
    write(project, {"geo/shapes.py": changed})
    report = check_drift(s, spec, "geo")
    found = {(i["severity"], i["change"], i["name"]) for i in report["items"]}
    assert found == {("high", "removed", "remove_me"), ("low", "added", "added"),
                     ("medium", "signature", "make"), ("medium", "member-removed", "Shape.name"),
                     ("medium", "member-added", "Shape.label")}
    assert report["hasDrift"] and report["summary"]["high"] == 1 and "regenerate" in report["recommendation"]


def test_diff_finds_nothing_for_a_reformat(s: Services, project: Path) -> None:
    write(project, {"geo/shapes.py": DIFF_SOURCE})
    spec = generate(s, "geo")["specPath"]
    reformatted = ('"""Shapes, reformatted."""\nimport json\nimport os\n\n\n# a new comment\nclass Shape:\n'
                   '    """A shape, described again."""\n\n    def area(\n        self,\n        scale: int = 1,\n'
                   '    ) -> float:\n        return 0.0  # zero\n\n    def name(self)  ->  str:\n'
                   '        return "shape"\n\n\ndef make(kind: str,\n         size: int) -> Shape:\n'
                   '    return Shape()\n\n\ndef remove_me() -> None:\n    pass\n')
    write(project, {"geo/shapes.py": reformatted})
    report = check_drift(s, spec, "geo")
    assert report["hasDrift"] is False and report["items"] == [], report["items"]
    noise = report["summary"]["filteredNoise"]
    assert noise["importOrder"] == 1 and noise["trailingCommas"] == 1 and noise["whitespace"] >= 1
    assert noise["comments"] >= 1 and noise["lineMoves"] >= 1


def test_accepting_drift_rewrites_the_baseline_in_place_and_keeps_the_prose(s: Services, project: Path) -> None:
    write(project, {"geo/shapes.py": DIFF_SOURCE})
    spec = generate(s, "geo")["specPath"]
    path = project / spec
    text = path.read_text().replace("## 1. Intent\n\n", "## 1. Intent\n\nA hand-written intent. ✍\n\n")
    path.write_text(text)
    write(project, {"geo/shapes.py": DIFF_SOURCE + "\n\ndef extra() -> None:\n    pass\n"})
    assert check_drift(s, spec, "geo")["summary"]["low"] == 1
    accepted = check_drift(s, spec, "geo", accept=True)
    assert accepted["accepted"] and accepted["hasDrift"]
    after = path.read_text()
    assert "A hand-written intent. ✍" in after
    assert after.split("## Diagrams")[0].split("---\n", 2)[2] == text.split("## Diagrams")[0].split("---\n", 2)[2]
    assert parse_front(after)["version"] == parse_front(text)["version"]
    assert parse_front(after)["skeletonHash"] == accepted["currentHash"]
    assert check_drift(s, spec, "geo")["hasDrift"] is False


def test_diff_of_a_file_that_is_not_a_spec_is_refused(s: Services, project: Path) -> None:
    write(project, {"notes.md": "# just notes\n", "m/a.py": "x = 1\n"})
    with pytest.raises(Code3Error) as info:
        check_drift(s, "notes.md", "m")
    assert "不是可比较的 spec" in info.value.message
    with pytest.raises(Code3Error) as info:
        check_drift(s, "specs/missing.spec.md", "m")
    assert info.value.message == "目标路径不存在: specs/missing.spec.md"


# -- the spec-kit tools through the same LLM port ---------------------------------------------------------------

def test_specify_plan_and_tasks_write_through_claude_with_the_code_base_as_context(project: Path) -> None:
    from mcp_tools.lifecycle import specs

    write(project, LAYERED)
    fake = FakeAnthropic().start()
    try:
        services = services_for(project, ANTHROPIC_API_KEY=fake.api_key, ANTHROPIC_BASE_URL=fake.url,
                                CODE3_SPEC_WRITER="anthropic")  # the opt-in: a key alone is no choice of a model
        try:
            spec = specs.specify(services, "Users can export their to-do list as CSV", feature_id="001-csv")
            specs.plan(services, "001-csv")
            specs.tasks(services, "001-csv")
        finally:
            services.close()
        assert fake.calls == 3
        first = fake.requests[0]["messages"][0]["content"]
        assert "Users can export their to-do list as CSV" in first and "core/engine.py" in first
        assert "[NEEDS CLARIFICATION" in first, "the offline writer's template is the frame"
        assert "(written by the model)" in (project / "specs" / "001-csv" / "plan.md").read_text()
        written = (project / spec["paths"]["spec"]).read_text()
        assert written.startswith("# Feature Specification: ") and "(written by the model)" in written, "the model's"
    finally:
        fake.stop()


def test_diff_on_the_typescript_fixture_finds_each_kind_and_ignores_a_reformat(s: Services, project: Path) -> None:
    shutil.copytree(FIXTURES / "typescript", project, dirs_exist_ok=True)
    engine = project / "src" / "engine.ts"
    original = engine.read_text()
    spec = generate(s, "src")["specPath"]
    reformatted = (original.replace("export interface Options {\n  name: string;", "export interface Options {\n"
                                    "  // the engine's name\n  name:   string;")
                   .replace("export function", "export  function")
                   .replace("constructor(opts: Options, public size: number)",
                            "constructor(\n    opts: Options,\n    public size: number,\n  )"))
    engine.write_text(reformatted)
    quiet = check_drift(s, spec, "src")
    assert quiet["items"] == [] and not quiet["hasDrift"], quiet["items"]
    changed = (original.replace("  size?: number;\n", "  size?: string;\n")
                       .replace("export let counter = 0;\n", "")
                       .replace("export type Mode = \"fast\" | \"slow\";", "export type Mode = \"fast\" | \"slow\";\n"
                                "export function extra(): void {}"))
    engine.write_text(changed)
    report = check_drift(s, spec, "src")
    found = {(i["severity"], i["change"], i["name"]) for i in report["items"]}
    assert ("high", "removed", "counter") in found
    assert ("low", "added", "extra") in found
    assert any(sev == "medium" and name == "Options.size" for sev, _, name in found), found


def test_a_secret_in_a_constant_never_reaches_an_answer_a_prompt_or_a_spec(s: Services, project: Path) -> None:
    key = "sk-ant-api03-" + "Xy7_Qw3-Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1"
    write(project, {"cfg/settings.py": f'API_KEY = "{key}"\n"""The key."""\n\n\ndef timeout() -> int:\n'
                                       "    return 3\n"})
    answer = prepare(s, "cfg")
    assert key not in json.dumps(answer) and answer["context"]["redactions"]["anthropic-key"] == 1
    assert "[REDACTED:anthropic-key]" in answer["skeletons"][0]["exports"][0]["signature"]
    s.llm = model = CountingLLM()
    spec = generate(s, "cfg")["specPath"]
    assert key not in (project / spec).read_text() and key not in "".join(model.calls)
    assert check_drift(s, spec, "cfg")["hasDrift"] is False, "baseline and source are redacted alike"


def test_a_batch_stops_when_the_model_fails_and_the_next_run_resumes(s: Services, project: Path) -> None:
    from tests.fakes.anthropic_server import default_responder

    write(project, LAYERED)
    fake = FakeAnthropic()

    def responder(request: dict) -> str:
        if len(fake.requests) == 1:  # the first module is written, then the API rate-limits past the retries
            fake.fail_next(429, times=2)
        return default_responder(request)

    fake.responder = responder
    fake.start()
    try:
        s.llm = AnthropicLLM(fake.api_key, base_url=fake.url, policy=anthropic_policy(attempts=2, base_wait_s=0.01))
        with pytest.raises(Code3Error) as info:
            run_batch(s)
        assert info.value.message == "Claude API 返回 429: 速率限制"
        assert "1 module(s) done" in info.value.hint and "resume" in info.value.hint
        assert (project / "specs" / "util.spec.md").exists() and not (project / "specs" / "core.spec.md").exists()
        resumed = run_batch(s)
        assert resumed["skipped"] == ["util"] and resumed["successful"] == ["core", "app", "cyc_a", "cyc_b"]
    finally:
        fake.stop()
    services = services_for(project, CODE3_LLM="anthropic")
    try:
        with pytest.raises(Code3Error) as info:
            run_batch(services, force=True)
        assert info.value.message == "未检测到 ANTHROPIC_API_KEY"
    finally:
        services.close()


def test_two_batches_at_once_do_the_work_once(project: Path) -> None:
    import threading
    import time as clock

    class SlowLLM(CountingLLM):
        def complete(self, system: str, prompt: str, max_tokens: int = 8192) -> Completion:
            clock.sleep(0.05)
            return super().complete(system, prompt, max_tokens)

    write(project, LAYERED)
    model = SlowLLM()
    first, second = services_for(project), services_for(project)
    first.llm = second.llm = model
    answers: list[dict] = []
    try:
        threads = [threading.Thread(target=lambda s=svc: answers.append(run_batch(s))) for svc in (first, second)]
        for thread in threads:
            thread.start()
            clock.sleep(0.02)
        for thread in threads:
            thread.join(60)
    finally:
        first.close()
        second.close()
    assert len(model.calls) == 5, "each module generated once"
    assert sorted(len(a["successful"]) for a in answers) == [0, 5]


def test_diff_on_the_go_fixture_finds_each_kind_and_ignores_gofmt(s: Services, project: Path) -> None:
    shutil.copytree(FIXTURES / "go", project, dirs_exist_ok=True)
    engine = project / "pkg" / "core" / "engine.go"
    original = engine.read_text()
    spec = generate(s, "pkg/core")["specPath"]
    engine.write_text(original.replace("func New(name string) *Engine {", "func New(\n\tname string,\n) *Engine {")
                      .replace("// Run runs once.", "// Run runs once, and only once."))
    assert check_drift(s, spec, "pkg/core")["items"] == []
    engine.write_text(original.replace("\tName    string\n", "\tName    []byte\n")
                      .replace("const MaxSize = 10\n", "")
                      .replace("type ID = string\n", "type ID = string\n\nfunc Extra() {}\n"))
    found = {(i["severity"], i["change"], i["name"]) for i in check_drift(s, spec, "pkg/core")["items"]}
    assert ("high", "removed", "MaxSize") in found and ("low", "added", "Extra") in found
    assert any(sev == "medium" and name == "Engine.Name" for sev, _, name in found), found
