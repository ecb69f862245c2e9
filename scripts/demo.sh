#!/usr/bin/env bash
# One command to a running service: installs what is missing, seeds a demo store, prints a token, serves.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
exec node bin/chessport.js demo "$@"
