#!/usr/bin/env bash
# Every test tool (`make test-tools`, and .ci/run before `make test`): first the ones that need no root
# (scripts/install_user_tools.sh, which `make test` runs by itself: npm packages, Node 22, the Move grammar), then
# the ones from Debian that need root (apt-get, through sudo when not root):
#   - Go (`go/ast`, to cross-check Go exports; the Go corpus tests), `golang-go`, when `go` is not on PATH;
#   - Chromium and its driver (`chromium`, `chromium-driver`: Selenium drives /usr/bin/chromium through
#     /usr/bin/chromedriver in tests/e2e/test_web_browser.py).
# Strict: an apt install that fails fails the script (and CI). Re-running is cheap: nothing is fetched when
# everything is already there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { echo "install_test_tools: $*" >&2; }

bash "$ROOT/scripts/install_user_tools.sh"

# apt_install WHAT PACKAGE...: through sudo when not root; without apt-get the tests that need WHAT skip (or fail
# under CODE3_REQUIRE_TEST_TOOLS=1), saying which packages install it.
apt_install() {
    local what="$1"
    shift
    if ! command -v apt-get >/dev/null 2>&1; then
        log "no apt-get: install $* yourself, or the $what will skip"
        return 0
    fi
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    log "apt-get install $*"
    if ! $sudo apt-get install -y -qq "$@" >/dev/null 2>&1; then
        $sudo apt-get update -qq >/dev/null
        $sudo apt-get install -y -qq "$@" >/dev/null
    fi
}

if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/lib/go/bin/go ]; then
    apt_install "Go cross-checks" golang-go
fi
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    apt_install "browser tests" chromium chromium-driver
fi
log "ok"
