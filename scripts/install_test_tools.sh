#!/usr/bin/env bash
# Tools the skeleton cross-checks and the skeleton benchmark need, installed idempotently and quietly:
#   - npm `typescript@5` (the TypeScript compiler API, to cross-check TS exports) and `repomix` (benchmark baseline)
#     under .cache/node of the repository;
#   - Go (`go/ast`, to cross-check Go exports), from Debian's golang-go when `go` is not on PATH.
# Re-running is cheap: nothing is fetched when everything is already there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE_PREFIX="$ROOT/.cache/node"

log() { echo "install_test_tools: $*" >&2; }

# --- npm packages ---------------------------------------------------------------------------------------------
if command -v npm >/dev/null 2>&1; then
    want=()
    [ -f "$NODE_PREFIX/node_modules/typescript/package.json" ] || want+=("typescript@5")
    [ -f "$NODE_PREFIX/node_modules/repomix/package.json" ] || want+=("repomix@1")
    if [ "${#want[@]}" -gt 0 ]; then
        log "npm install ${want[*]} into $NODE_PREFIX"
        mkdir -p "$NODE_PREFIX"
        npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error "${want[@]}" >/dev/null
    fi
else
    log "npm not found: TypeScript cross-checks and the repomix baseline will be skipped (apt-get install nodejs npm)"
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
log "ok"
