#!/usr/bin/env bash
# The tree-sitter Move grammar tests/unit/test_move_abi.py parses move/sources/bounty.move with, built once into
# .cache/tree-sitter-move (a prerequisite of `make test`, and run by scripts/install_test_tools.sh).
# PyPI's sdist of tree-sitter-move (pinned, checked by its sha256) carries the generated parser, src/parser.c and
# src/scanner.c; they are compiled here with the machine's C compiler and loaded by the test with ctypes. The sdist
# is not pip-installed: its package ships a macOS binary that breaks the import. Strict: a failed fetch or build fails
# the script (and `make test`), so the parse test cannot go green by skipping.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { echo "build_move_grammar: $*" >&2; }

MOVE_GRAMMAR_VERSION="0.0.2"  # tests/unit/test_move_abi.py loads this version's build
MOVE_GRAMMAR_SHA256="62d7a979b1f464bbbf6c3bbd39e01bfdfe51c6ba3c889fd4824cc505b4ed628a"
MOVE_GRAMMAR_DIR="$ROOT/.cache/tree-sitter-move"
MOVE_GRAMMAR="$MOVE_GRAMMAR_DIR/tree-sitter-move-$MOVE_GRAMMAR_VERSION.so"
[ -f "$MOVE_GRAMMAR" ] && exit 0
CC="${CC:-$(command -v gcc || command -v cc || true)}"
if [ -z "$CC" ]; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO="sudo"
        export DEBIAN_FRONTEND=noninteractive
        log "apt-get install gcc"
        if ! $SUDO apt-get install -y -qq gcc >/dev/null 2>&1; then
            $SUDO apt-get update -qq >/dev/null
            $SUDO apt-get install -y -qq gcc >/dev/null
        fi
        CC=gcc
    else
        log "no C compiler (gcc or cc) and no apt-get: install one to build the tree-sitter Move grammar"
        exit 1
    fi
fi
PIP="$ROOT/.venv/bin/python -m pip"
[ -x "$ROOT/.venv/bin/python" ] || PIP="python3 -m pip"
mkdir -p "$MOVE_GRAMMAR_DIR"
work="$(mktemp -d "$MOVE_GRAMMAR_DIR/.build-XXXXXX")"
trap 'rm -rf "$work"' EXIT
log "pip download tree-sitter-move==$MOVE_GRAMMAR_VERSION (sdist) and build $MOVE_GRAMMAR"
# --require-hashes: pip checks the archive against the pin before it prepares (runs) anything of it
echo "tree-sitter-move==$MOVE_GRAMMAR_VERSION --hash=sha256:$MOVE_GRAMMAR_SHA256" > "$work/requirements.txt"
$PIP download --quiet --no-deps --no-binary :all: --require-hashes -r "$work/requirements.txt" --dest "$work" >&2
archive="$work/tree_sitter_move-$MOVE_GRAMMAR_VERSION.tar.gz"
[ -f "$archive" ] || { log "tree-sitter-move $MOVE_GRAMMAR_VERSION: no sdist in $work"; exit 1; }
tar -xzf "$archive" -C "$work" "tree_sitter_move-$MOVE_GRAMMAR_VERSION/src"
src="$work/tree_sitter_move-$MOVE_GRAMMAR_VERSION/src"
"$CC" -O1 -shared -fPIC -std=c11 -I"$src" "$src/parser.c" "$src/scanner.c" -o "$work/move.so"
mv "$work/move.so" "$MOVE_GRAMMAR"  # last, so a half-done build is never taken for the grammar
