#!/usr/bin/env bash
# Writes package-lock.json anew from package.json, whole for every platform, as `npm ci` wants it: every
# optional package of every platform (Biome's and esbuild's binaries), which `npm ci` insists on even where it
# installs none of them. Run it after changing package.json, and after a merge (take either side's lock, then
# this), then commit the lock; CI (.ci/run) fails on a lock that `npm ci` refuses.
#
# npm resolves in a folder of its own that holds package.json (and the workspaces' package.json) and the lock
# but no node_modules, so that what is
# installed here (this platform's packages only) cannot shape the lock. Versions the lock has that package.json
# still allows are kept; what is new or changed is resolved from the registry. Without "resolved" URLs, as the
# lock has always been: the registry a machine is configured with is where its packages come from.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CHESSPORT_NO_INSTALL=1 source "$root/scripts/env.sh" # Node.js >= 22.18 on PATH, nothing installed
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root/package.json" "$work/"
# The workspaces' manifests too (packages/*), which the lock records as packages of the project.
for manifest in "$root"/packages/*/package.json; do
  [ -f "$manifest" ] || continue
  dir=$work/${manifest#"$root"/}
  mkdir -p "$(dirname "$dir")" && cp "$manifest" "$dir"
done
if [ -f "$root/package-lock.json" ]; then cp "$root/package-lock.json" "$work/"; fi
(cd "$work" && npm install --package-lock-only --ignore-scripts --no-audit --no-fund --loglevel=error \
  --omit-lockfile-registry-resolved)
cp "$work/package-lock.json" "$root/package-lock.json"
echo "package-lock.json written (npm $(npm -v), Node.js $(node -v)); check it: a fresh clone's npm ci" >&2
