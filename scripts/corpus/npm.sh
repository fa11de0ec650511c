#!/usr/bin/env bash
# JavaScript/TypeScript part of the corpus (issue 19): pinned npm packages installed with their dependencies and
# without running their scripts into $CORPUS_DIR/npm/<name>@<version>/ (the package itself under
# node_modules/<name>/, its dependencies beside it, so Node's loader resolves them as in a real install).
#   --ci   only the two expresses the test suite compares (tests/realcode/test_javascript.py)
# Idempotent: a package already installed (its .complete marker present) is not fetched again.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CORPUS_DIR="${CORPUS_DIR:-${CODE3_CORPUS_DIR:-$ROOT/.cache/corpus}}"

# express 4.22.3 is the newest 4.x and 5.3.0 the newest 5.x (`npm view express versions`); the drift benchmark
# compares them. rxjs ships its TypeScript sources (src/), measured for TypeScript class members.
PACKAGES=(express@4.22.3 express@5.3.0)
if [ "${1:-}" != "--ci" ]; then
    PACKAGES+=(got@16.1.0 lodash@4.18.1 rxjs@7.8.2)
fi

command -v npm >/dev/null 2>&1 || { echo "corpus/npm.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
OUT="$CORPUS_DIR/npm"
mkdir -p "$OUT"
for spec in "${PACKAGES[@]}"; do
    name="${spec%@*}"
    target="$OUT/$spec"
    [ -e "$target/.complete" ] && continue
    tmp="$(mktemp -d "$OUT/.fetch-$name-XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    echo '{"private": true}' > "$tmp/package.json"
    if ! npm install --prefix "$tmp" --ignore-scripts --no-audit --no-fund --loglevel=error --save-exact \
            "$spec" >&2; then
        echo "corpus/npm.sh: npm could not install $spec" >&2
        exit 1
    fi
    [ -f "$tmp/node_modules/$name/package.json" ] || { echo "corpus/npm.sh: $spec not in $tmp" >&2; exit 1; }
    rm -rf "$target"
    mv "$tmp" "$target"
    touch "$target/.complete"
    trap - EXIT
    echo "corpus/npm.sh: $spec -> $target/node_modules/$name" >&2
done
