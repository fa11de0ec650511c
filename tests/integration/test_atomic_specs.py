"""Feature directories are written all or nothing, and concurrent `specify` calls each get their own number.

The crash tests run the write in a subprocess whose `adapters.files.checkpoint` calls `os._exit` at the
k-th step, for every k; after the crash the next call's recovery must leave the old or the new version,
never a mix, and no staging directory behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from adapters import files
from adapters.files import locked, recover, replace_dir
from adapters.keystore import Keystore
from code3.settings import Settings

CRASHED = 17
OLD = {"spec.md": "old spec\n", "plan.md": "old plan\n", "notes/kept.md": "a user's own file\n"}
NEW = {"spec.md": "new spec\n", "plan.md": "new plan\n", "research.md": "research\n", "contracts/README.md": "c\n"}
ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    """A bare environment for the child, with the test's own CODE3_HOME (never the user's)."""
    return {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "CODE3_HOME": os.environ["CODE3_HOME"]}

CRASH_AT = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    from adapters import files

    target, steps = int(sys.argv[1]), []

    def crash(step):
        steps.append(step)
        if len(steps) == target:
            os._exit({crashed})

    files.checkpoint = crash
    {body}
    print(json.dumps(steps))
""")


def snapshot(directory: Path) -> dict[str, str] | None:
    if not directory.exists():
        return None
    return {p.relative_to(directory).as_posix(): p.read_text() for p in sorted(directory.rglob("*")) if p.is_file()}


def lay_out(directory: Path, content: dict[str, str]) -> None:
    for rel, text in content.items():
        (directory / rel).parent.mkdir(parents=True, exist_ok=True)
        (directory / rel).write_text(text)


def run_crashing(body: str, k: int, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = CRASH_AT.format(crashed=CRASHED, body=body)
    return subprocess.run([sys.executable, "-c", script, str(k)], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env=_env())


def count_steps(parent: Path, name: str, content: dict[str, str] | None) -> list[str]:
    """The steps of one write, recorded in-process on a scratch copy."""
    scratch = parent / "scratch"
    if content is not None:
        lay_out(scratch / name, content)
    steps: list[str] = []
    original = files.checkpoint
    files.checkpoint = steps.append
    try:
        with locked(scratch):
            replace_dir(scratch, name, NEW)
    finally:
        files.checkpoint = original
    return steps


def test_a_crash_at_any_step_of_an_overwrite_leaves_the_old_or_the_new_directory(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    steps = count_steps(tmp_path, "001-x", OLD)
    assert len(steps) >= 8, steps  # staged, every file, sealed, aside, renamed in, removed
    expected_new = {**OLD, **NEW}
    seen = []
    body = f"files.write_files(Path({str(specs / '001-x')!r}), {NEW!r})"
    for k in range(1, len(steps) + 1):
        if specs.exists():
            subprocess.run(["rm", "-rf", str(specs)], check=True)
        lay_out(specs / "001-x", OLD)
        crashed = run_crashing(body, k, tmp_path)
        assert crashed.returncode == CRASHED, crashed.stderr
        with locked(specs):
            recover(specs, "001-x")
        after = snapshot(specs / "001-x")
        assert after in (OLD, expected_new), f"crash after step {k} ({steps[k - 1]}) left {after}"
        assert sorted(p.name for p in specs.iterdir()) == ["001-x"], f"leftovers after step {k}"
        seen.append("old" if after == OLD else "new")
    assert seen[0] == "old" and seen[-1] == "new", seen


def test_a_crash_while_creating_a_directory_leaves_nothing_or_the_whole_directory(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    steps = count_steps(tmp_path, "002-y", None)
    body = f"files.create_dir_atomically(Path({str(specs)!r}), '002-y', {NEW!r})"
    for k in range(1, len(steps) + 1):
        subprocess.run(["rm", "-rf", str(specs)], check=True)
        specs.mkdir()
        crashed = run_crashing(body, k, tmp_path)
        assert crashed.returncode == CRASHED, crashed.stderr
        with locked(specs):
            recover(specs, "002-y")
        assert snapshot(specs / "002-y") in (None, NEW), f"crash after step {k} ({steps[k - 1]})"
        assert [p.name for p in specs.iterdir()] in ([], ["002-y"])


def _project(tmp_path: Path) -> Settings:
    settings = Settings(project=tmp_path)
    Keystore(settings.keystore_dir).new("default")
    return settings


def test_a_crash_inside_the_plan_tool_is_healed_by_the_next_call(tmp_path: Path) -> None:
    settings = _project(tmp_path)
    setup = textwrap.dedent(f"""
        from code3.settings import Settings
        from code3.wiring import build_services
        from mcp_tools.lifecycle import specs
        s = build_services(Settings(project=Path({str(tmp_path)!r})))
    """)
    done = subprocess.run([sys.executable, "-c", "from pathlib import Path\n" + setup + textwrap.dedent("""
        specs.specify(s, "Users can tag to-dos", feature_id="001-tags")
        specs.plan(s, "001-tags")
    """)], cwd=tmp_path, capture_output=True, text=True, env=_env())
    assert done.returncode == 0, done.stderr
    directory = settings.project / "specs" / "001-tags"
    before = snapshot(directory)
    body = setup.strip() + '\nspecs.plan(s, "001-tags", "Python 3.11", allow_overwrite=True)'
    crashed = run_crashing(body, 4, tmp_path)  # mid-way: after the old version is staged and a few files
    assert crashed.returncode == CRASHED, crashed.stderr
    from code3.wiring import build_services
    from mcp_tools.lifecycle import specs

    s = build_services(settings)
    try:
        answer = specs.tasks(s, "001-tags")  # the next call recovers first, then reads a whole plan
        assert answer["success"] is True
        after = {k: v for k, v in (snapshot(directory) or {}).items() if k != "tasks.md"}
        assert after == before or "Python 3.11" in after["plan.md"]
        assert not [p for p in (settings.project / "specs").iterdir() if p.name.startswith(".")]
    finally:
        s.close()


@pytest.mark.parametrize("callers", [6])
def test_concurrent_specify_calls_each_get_their_own_number(tmp_path: Path, callers: int) -> None:
    _project(tmp_path)
    go = tmp_path / "go"
    script = textwrap.dedent(f"""
        import json, sys, time
        from pathlib import Path
        from code3.settings import Settings
        from code3.wiring import build_services
        from mcp_tools.lifecycle import specs
        s = build_services(Settings(project=Path({str(tmp_path)!r})))
        while not Path({str(go)!r}).exists():
            time.sleep(0.005)
        print(json.dumps(specs.specify(s, sys.argv[1])))
        s.close()
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, f"Feature number {i} for the board"], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=_env())
             for i in range(callers)]
    time.sleep(1.0)  # let every process reach the starting line
    go.touch()
    answers = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        answers.append(json.loads(out))
    numbers = sorted(int(a["feature_id"][:3]) for a in answers)
    assert numbers == list(range(1, callers + 1)), answers
    listed = sorted(p.name for p in (tmp_path / "specs").iterdir())
    assert listed == sorted(a["feature_id"] for a in answers)


def test_an_explicit_999_id_leaves_generated_ids_at_three_digits(tmp_path: Path) -> None:
    from code3.wiring import build_services
    from mcp_tools.lifecycle import specs

    s = build_services(Settings(project=tmp_path))
    try:
        assert specs.specify(s, "Users can tag to-dos")["feature_id"] == "001-users-tag-dos"
        assert specs.specify(s, "Something far away", feature_id="999-x")["feature_id"] == "999-x"
        assert specs.specify(s, "Web AI agent project management")["feature_id"] == "002-web-ai-agent"
        plan = specs.plan(s, "002-web-ai-agent")  # the generated id is one plan, tasks and publish accept
        assert plan["paths"]["plan"] == "specs/002-web-ai-agent/plan.md"
    finally:
        s.close()
