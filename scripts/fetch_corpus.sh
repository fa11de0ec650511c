#!/usr/bin/env bash
# The pinned corpus of real packages the parsers are measured on (issue 19), fetched from the registries this
# machine reaches (PyPI, npm, Debian) into .cache/corpus/ — never committed: nothing from a public repository
# goes into the project. Each language's fetcher is scripts/corpus/<language>.sh; this runs them all.
#   scripts/fetch_corpus.sh          the whole corpus (make bench)
#   scripts/fetch_corpus.sh --ci     the CI-sized subset the test suite asserts on (.ci/run)
# Idempotent: a package already in the cache is not fetched again. Exits non-zero when a fetch fails, as pip does.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CORPUS_DIR="${CODE3_CORPUS_DIR:-$ROOT/.cache/corpus}"
mkdir -p "$CORPUS_DIR"
for fetcher in "$ROOT"/scripts/corpus/*.sh; do
    [ -e "$fetcher" ] || continue
    bash "$fetcher" "$@"
done
echo "fetch_corpus: ok ($CORPUS_DIR)" >&2
