#!/usr/bin/env bash
# One command to run every test: installs what is missing, then lint, type check and the test suites.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
exec npm test --silent
