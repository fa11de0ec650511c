#!/usr/bin/env bash
# Go and Rust part of the corpus (issue 19): Debian's source packages of cobra 1.6.1 (golang-github-spf13-cobra-dev,
# sources under /usr/share/gocode/src/) and serde 1.0.152 (librust-serde-dev, under /usr/share/cargo/registry/),
# installed with apt-get and copied into $CORPUS_DIR/debian/<name>-<version>/ — copies, not symlinks: the parser
# never follows a symlink out of the project root.
#   --ci   the same two packages (both are small)
# Idempotent: a package already installed is not installed again (apt-get update runs only when an install
# fails), a copy already made (its .complete marker present) is not made again.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CORPUS_DIR="${CORPUS_DIR:-${CODE3_CORPUS_DIR:-$ROOT/.cache/corpus}}"

# name version debian-package source-directory
PACKAGES=(
    "cobra 1.6.1 golang-github-spf13-cobra-dev /usr/share/gocode/src/github.com/spf13/cobra"
    "serde 1.0.152 librust-serde-dev /usr/share/cargo/registry/serde-1.0.152"
)

installed_version() {  # the upstream version dpkg has installed ("" when not installed)
    dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null \
        | awk '$1 == "installed" { v = $2; sub(/^[0-9]+:/, "", v); sub(/-[^-]*$/, "", v); print v }'
}

missing=()
for entry in "${PACKAGES[@]}"; do
    read -r _name version package _src <<<"$entry"
    [ "$(installed_version "$package")" = "$version" ] || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 || { echo "corpus/debian.sh: apt-get is needed for ${missing[*]}" >&2; exit 1; }
    SUDO=()
    [ "$(id -u)" = 0 ] || SUDO=(sudo -n)
    export DEBIAN_FRONTEND=noninteractive
    if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; then
        "${SUDO[@]}" apt-get update -q >&2 || { echo "corpus/debian.sh: apt-get update failed" >&2; exit 1; }
        "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
            || { echo "corpus/debian.sh: apt-get could not install ${missing[*]}" >&2; exit 1; }
    fi
fi

OUT="$CORPUS_DIR/debian"
mkdir -p "$OUT"
for entry in "${PACKAGES[@]}"; do
    read -r name version package src <<<"$entry"
    got="$(installed_version "$package")"
    if [ "$got" != "$version" ]; then
        echo "corpus/debian.sh: $package is $got, the corpus pins $version" >&2
        exit 1
    fi
    [ -d "$src" ] || { echo "corpus/debian.sh: $package has no $src" >&2; exit 1; }
    target="$OUT/$name-$version"
    [ -e "$target/.complete" ] && continue
    tmp="$(mktemp -d "$OUT/.copy-$name-XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    cp -R --dereference "$src/." "$tmp/"
    rm -rf "$target"
    mv "$tmp" "$target"
    chmod 0755 "$target"
    touch "$target/.complete"
    trap - EXIT
    echo "corpus/debian.sh: $package $version -> $target" >&2
done
