"""tests/tools_needed.py: a missing test tool skips with what is missing and how to install it, fails under
CODE3_REQUIRE_TEST_TOOLS=1, and the pins the tests check are the ones the install script installs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests import tools_needed
from tests.tools_needed import need_tool

ROOT = Path(__file__).resolve().parents[2]
USER_SCRIPT = ROOT / "scripts" / "install_user_tools.sh"


def test_a_missing_tool_skips_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODE3_REQUIRE_TEST_TOOLS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="frob is missing: apt-get install frob"):
        need_tool(False, "frob is missing: apt-get install frob")


def test_a_missing_tool_fails_under_code3_require_test_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODE3_REQUIRE_TEST_TOOLS", "1")
    with pytest.raises(pytest.fail.Exception, match=r"frob is missing.*CODE3_REQUIRE_TEST_TOOLS=1"):
        need_tool(False, "frob is missing: apt-get install frob")


@pytest.mark.parametrize("value", ["1", ""])
def test_a_present_tool_neither_skips_nor_fails(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CODE3_REQUIRE_TEST_TOOLS", value)
    need_tool(True, "never said")


def test_without_npm_an_npm_package_skips_saying_how_to_get_npm(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    monkeypatch.delenv("CODE3_REQUIRE_TEST_TOOLS", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm, no node
    with pytest.raises(pytest.skip.Exception, match=r"npm/node are not on PATH: .*apt-get install nodejs npm"):
        tools_needed.need_npm_package(tmp_path / "node_modules" / "tool", "1.0.0")
    with pytest.raises(pytest.skip.Exception, match=r"node is not on PATH .*apt-get install nodejs npm"):
        tools_needed.typescript_sdk()


def test_an_npm_package_missing_or_at_another_version_skips_saying_make_test_installs_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CODE3_REQUIRE_TEST_TOOLS", raising=False)
    monkeypatch.setattr(tools_needed, "need_npm", lambda: None)  # npm is here
    package = tmp_path / "node_modules" / "@scope" / "tool"
    with pytest.raises(pytest.skip.Exception, match=r"npm @scope/tool is not installed .*`make test` installs it"):
        tools_needed.need_npm_package(package, "1.2.3")
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "@scope/tool", "version": "1.2.4"}))
    with pytest.raises(pytest.skip.Exception, match=r"npm @scope/tool 1.2.4 is installed, the tests pin 1.2.3"):
        tools_needed.need_npm_package(package, "1.2.3")
    assert tools_needed.need_npm_package(package, "1.2.4") == package


def test_the_pins_the_tests_check_are_the_ones_the_install_script_installs() -> None:
    pins = dict(re.findall(r'^([A-Z0-9_]+_VERSION)="([^"]+)"', USER_SCRIPT.read_text(), re.MULTILINE))
    names = ("TS_SDK_VERSION", "AXE_VERSION", "INSPECTOR_VERSION", "CLAUDE_CODE_VERSION", "CONFORMANCE_VERSION")
    assert pins == {name: getattr(tools_needed, name) for name in names}


def test_make_test_installs_the_user_tools_and_lists_its_skips_and_ci_requires_every_tool() -> None:
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "bash scripts/install_user_tools.sh" in recipe
    assert re.search(r"pytest .*-r[a-zA-Z]*s[a-zA-Z]*\b.*--durations=25", recipe)
    assert "\nexport CODE3_REQUIRE_TEST_TOOLS=1\n" in (ROOT / ".ci" / "run").read_text()
