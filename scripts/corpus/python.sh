#!/usr/bin/env bash
# Python part of the corpus (issue 19): pinned sdists from PyPI, unpacked into $CORPUS_DIR/python/<name>-<version>/
# (each sdist's own top folder, so click's sources sit under src/click/ as in its repository).
#   --ci   only the two clicks the test suite compares (tests/realcode/test_python.py)
# Idempotent: a package already unpacked (its .complete marker present) is not fetched again.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CORPUS_DIR="${CORPUS_DIR:-${CODE3_CORPUS_DIR:-$ROOT/.cache/corpus}}"
PIP="${PIP:-$ROOT/.venv/bin/python -m pip}"
[ -x "$ROOT/.venv/bin/python" ] || PIP="python3 -m pip"

# click 8.2.1 is the newest 8.2.x (`pip index versions click`); the drift benchmark compares it with 8.1.8
PACKAGES=(click==8.1.8 click==8.2.1)
if [ "${1:-}" != "--ci" ]; then
    PACKAGES+=(rich==15.0.0 requests==2.34.2)
fi

OUT="$CORPUS_DIR/python"
mkdir -p "$OUT"
for spec in "${PACKAGES[@]}"; do
    name="${spec%%==*}"
    version="${spec##*==}"
    target="$OUT/$name-$version"
    [ -e "$target/.complete" ] && continue
    tmp="$(mktemp -d "$OUT/.fetch-$name-XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    if ! $PIP download --quiet --no-deps --no-binary :all: --dest "$tmp" "$spec" >&2; then
        echo "corpus/python.sh: pip could not download $spec" >&2
        exit 1
    fi
    archive="$(find "$tmp" -maxdepth 1 -name '*.tar.gz' | head -n 1)"
    [ -n "$archive" ] || { echo "corpus/python.sh: no sdist for $spec in $tmp" >&2; exit 1; }
    tar -xzf "$archive" -C "$tmp"
    unpacked="$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)"
    [ -n "$unpacked" ] || { echo "corpus/python.sh: $archive holds no folder" >&2; exit 1; }
    rm -rf "$target"
    mv "$unpacked" "$target"
    touch "$target/.complete"
    rm -rf "$tmp"
    trap - EXIT
    echo "corpus/python.sh: $spec -> $target" >&2
done
