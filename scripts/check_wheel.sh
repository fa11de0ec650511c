#!/usr/bin/env bash
# A plain (not editable) install works: build the wheel, install it into a fresh virtual environment,
# run the demo from an empty directory, and `code3 doctor` on Aptos against a node that does not answer —
# it must fail on the node (exit 1, the node named), never on a file missing from the wheel.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# keys and secrets go to a CODE3_HOME of the check's own: the user's ~/.config/code3 is never read or written
export CODE3_HOME="$WORK/home"

"$ROOT/.venv/bin/python" -m pip wheel -q --no-deps -w "$WORK/dist" "$ROOT" >/dev/null
"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --upgrade pip >/dev/null
"$WORK/venv/bin/python" -m pip install -q "$WORK"/dist/code3-*.whl >/dev/null
echo "check_wheel: installed $(ls "$WORK"/dist) into a fresh venv"

mkdir -p "$WORK/empty" && cd "$WORK/empty"
"$WORK/venv/bin/code3" demo >"$WORK/demo.log" 2>&1 || { cat "$WORK/demo.log"; echo "check_wheel: code3 demo failed" >&2; exit 1; }
echo "check_wheel: code3 demo passed from the wheel"

set +e
CODE3_CHAIN=aptos CODE3_APTOS_NODE_URL=http://127.0.0.1:9/v1 CODE3_APTOS_MODULE_ADDRESS=0x1 \
    "$WORK/venv/bin/code3" doctor >"$WORK/doctor.log" 2>&1
status=$?
set -e
if [ "$status" -ne 1 ] || grep -q -e Traceback -e FileNotFoundError "$WORK/doctor.log" \
        || ! grep -qi "127.0.0.1:9" "$WORK/doctor.log"; then
    cat "$WORK/doctor.log"
    echo "check_wheel: code3 doctor (aptos, unreachable node) must exit 1 naming the node; it exited $status" >&2
    exit 1
fi
echo "check_wheel: code3 doctor fails on the unreachable node, as it should"

# `code3 mcp` from the wheel lists every tool: the first start builds the tools/list manifest from the installed
# sources and keeps it, the second reads it (mcp_tools.manifest); both answer the same list, every tool with an
# output schema except those whose seed answers text (mcp_tools.catalog.TEXT_ANSWERS). The driver keeps stdin
# open until the answer arrives (a server that reads end-of-file stops without answering what is in flight).
for start in first second; do
    count=$(CODE3_CACHE_DIR="$WORK/cache" "$WORK/venv/bin/python" - "$WORK/venv/bin/code3" "$WORK/mcp-$start" <<'PY'
import json, subprocess, sys
code3, out = sys.argv[1], sys.argv[2]
with open(out + ".err", "w") as err:
    proc = subprocess.Popen([code3, "mcp", "--profile", "all"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=err, text=True)
    def ask(message):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        while "id" in message:
            answer = json.loads(proc.stdout.readline())
            if answer.get("id") == message["id"]:
                return answer
    ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
         "capabilities": {}, "clientInfo": {"name": "check_wheel", "version": "1"}}})
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"]["tools"]
    proc.stdin.close()
    proc.wait(timeout=30)
from mcp_tools.catalog import TEXT_ANSWERS  # the installed wheel's: the tools whose seed answers text
assert len(tools) >= 34, tools
assert all(bool(t.get("outputSchema")) is (t["name"] not in TEXT_ANSWERS) for t in tools), tools
with open(out + ".json", "w") as listing:
    json.dump(tools, listing, sort_keys=True)
print(len(tools))
PY
) || { cat "$WORK/mcp-$start.err"; echo "check_wheel: code3 mcp ($start start) did not list the tools" >&2; exit 1; }
done
cmp -s "$WORK/mcp-first.json" "$WORK/mcp-second.json" || { echo "check_wheel: the kept manifest lists other tools" >&2; exit 1; }
ls "$WORK"/cache/tools-*.json >/dev/null || { echo "check_wheel: no manifest was kept" >&2; exit 1; }
echo "check_wheel: code3 mcp lists $count tools from the wheel, the second start from its kept manifest"
