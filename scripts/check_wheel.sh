#!/usr/bin/env bash
# A plain (not editable) install works: build the wheel, install it into a fresh virtual environment,
# run the demo from an empty directory, and `code3 doctor` on Aptos against a node that does not answer —
# it must fail on the node (exit 1, the node named), never on a file missing from the wheel.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

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
