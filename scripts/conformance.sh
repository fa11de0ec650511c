#!/usr/bin/env bash
# The MCP conformance suite (npm @modelcontextprotocol/conformance, 0.2.0-alpha.12) against Code3 and a bare SDK server.
#
#   scripts/conformance.sh        every server scenario of both requirement sets (2025-11-25, 2026-07-28), against
#                                 `code3 serve` (stateful), `code3 serve --stateless`, and a bare MCP SDK server in
#                                 both modes; prints the table (also in .cache/conformance/table.md) and exits 1
#                                 when a scenario passes on the bare server and fails on Code3 in the same mode
#
# Every server gets the suite's diagnostic tools (scripts/conformance_fixtures.py, through
# scripts/conformance_server.py; never in a Code3 a user runs). The scenarios that need the suite's own fixture
# resources, prompts or multi-round tools fail on both (the table shows it); the gate compares like with like.
# The suite needs Node 22 (scripts/node22.sh); it is installed once under .cache/node/conformance. The suite cannot
# send headers: it talks to Code3 through a loopback proxy that adds the serve token (tests/tools/token_proxy.py).
# Each run's output is kept in .cache/conformance/<requirements>/<target>.log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/.cache/node/conformance"
LOGS="$ROOT/.cache/conformance"
PY="${PY:-$ROOT/.venv/bin/python}"
SUITE_VERSION="${CONFORMANCE_VERSION:-0.2.0-alpha.12}"
REQUIREMENTS=(2025-11-25 2026-07-28)
TARGETS=(code3-stateful code3-stateless bare-stateful bare-stateless)
# shellcheck source=scripts/node22.sh
source "$ROOT/scripts/node22.sh"

log() { echo "conformance: $*" >&2; }

# --- install (idempotent) -----------------------------------------------------------------------------------------
node22_install
PACKAGE_JSON="$PREFIX/node_modules/@modelcontextprotocol/conformance/package.json"
installed="$( [ -f "$PACKAGE_JSON" ] && "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' \
              "$PACKAGE_JSON" || true)"
if [ "$installed" != "$SUITE_VERSION" ]; then
    command -v npm >/dev/null 2>&1 || { log "npm is needed to install the suite (apt-get install npm)"; exit 2; }
    log "npm install @modelcontextprotocol/conformance@$SUITE_VERSION into $PREFIX"
    mkdir -p "$PREFIX"
    npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/conformance@$SUITE_VERSION" >/dev/null
fi
export PATH="$NODE22_BIN:$PREFIX/node_modules/.bin:$PATH"

# --- the servers -----------------------------------------------------------------------------------------------------
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
    for _ in $(seq 1 600); do
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

CODE3_SERVE_TOKEN="conformance-$("$PY" -c 'import secrets; print(secrets.token_hex(16))')"
export CODE3_SERVE_TOKEN  # the serves' token, and the one the proxies add
declare -A URL
start() {  # start target $1: sets URL[$1] to the URL the suite talks to
    local target="$1" out="$WORK/$1.out" err="$WORK/$1.err"
    case "$target" in
        code3-*)
            local flags=(--port 0)
            [ "$target" = code3-stateless ] && flags+=(--stateless)
            mkdir -p "$WORK/$target/project"
            CODE3_HOME="$WORK/$target/home" CODE3_PROJECT="$WORK/$target/project" \
                "$PY" "$ROOT/scripts/conformance_server.py" code3 "${flags[@]}" >"$out" 2>"$err" &
            PIDS+=($!)
            local serve
            serve="$(ready_line "$out" listening "$!")"
            "$PY" "$ROOT/tests/tools/token_proxy.py" --upstream "$serve" >"$WORK/$target.proxy.out" \
                2>"$WORK/$target.proxy.err" &
            PIDS+=($!)
            URL[$target]="$(ready_line "$WORK/$target.proxy.out" listening "$!")/mcp"
            ;;
        bare-*)
            local flags=()
            [ "$target" = bare-stateless ] && flags+=(--stateless)
            "$PY" "$ROOT/scripts/conformance_server.py" bare "${flags[@]}" >"$out" 2>"$err" &
            PIDS+=($!)
            URL[$target]="$(ready_line "$out" mcp "$!")"
            ;;
    esac
    log "$target at ${URL[$target]}"
}
for target in "${TARGETS[@]}"; do start "$target"; done

# --- the requirement sets ----------------------------------------------------------------------------------------------
for requirements in "${REQUIREMENTS[@]}"; do
    mkdir -p "$LOGS/$requirements"
    for target in "${TARGETS[@]}"; do
        log "requirements $requirements against $target"
        (cd "$WORK" && timeout 900 conformance server --url "${URL[$target]}" --requirements "$requirements" \
            --timeout 20000) >"$LOGS/$requirements/$target.log" 2>&1 || true
    done
done

"$PY" - "$LOGS" "${REQUIREMENTS[@]}" <<'PYTHON'
"""The table: one row per (requirement set, server scenario), a cell per target: passed/total checks."""
import re
import sys
from pathlib import Path

logs, sets = Path(sys.argv[1]), sys.argv[2:]
targets = ["code3-stateful", "code3-stateless", "bare-stateful", "bare-stateless"]
line = re.compile(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed")
unscored = re.compile(r"^  [✓✗] (\S+) \((\w[\w-]*)\)")
rows, worse = [], []
for requirements in sets:
    results, notes = {}, {}
    for target in targets:
        path = logs / requirements / f"{target}.log"
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        for raw in text.splitlines():
            if (m := line.match(raw)):
                ok, name, passed, failed = m.group(1) == "✓", m.group(2), int(m.group(3)), int(m.group(4))
                results.setdefault(name, {})[target] = (ok, passed, passed + failed)
            elif (m := unscored.match(raw)):
                notes[m.group(1)] = m.group(2)
    for name, by_target in results.items():
        def cell(target):
            if target not in by_target:
                return "—"
            ok, passed, total = by_target[target]
            return f"{'pass' if ok else 'FAIL'} {passed}/{total}"
        label = f"{name} ({notes[name]}, not scored)" if name in notes else name
        rows.append((requirements, label, *(cell(t) for t in targets)))
        if name not in notes:
            for mode in ("stateful", "stateless"):
                code3, bare = by_target.get(f"code3-{mode}"), by_target.get(f"bare-{mode}")
                if bare and bare[0] and not (code3 and code3[0]):
                    worse.append(f"{requirements} {name} ({mode})")
header = ("requirements", "scenario", "Code3 stateful", "Code3 stateless", "bare SDK stateful", "bare SDK stateless")
widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
table = ["| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |" for r in [header, *rows]]
table.insert(1, "| " + " | ".join("-" * w for w in widths) + " |")
(logs / "table.md").write_text("\n".join(table) + "\n", encoding="utf-8")
print("\n".join(table))
if worse:
    print(f"\nconformance: passes on the bare SDK server but not on Code3 ({len(worse)}): " + ", ".join(worse),
          file=sys.stderr)
    sys.exit(1)
print("\nconformance: Code3 passes every scenario the bare SDK server passes, in both modes", file=sys.stderr)
PYTHON
