#!/usr/bin/env bash
# The PostgreSQL pass of `npm test`: the suites that run the service on a store (HTTP, import, webhooks) once
# more, each test store a fresh database on TEST_POSTGRES_URL (test/helpers/stores.ts). The store suites
# (test/store) already ran on both dialects in the first pass; the chess suites use no store.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TEST_POSTGRES_URL:-}" ]; then
  echo "# SKIP the PostgreSQL pass: TEST_POSTGRES_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test);" \
    "the API, CLI-command and import suites ran on SQLite only"
  exit 0
fi
echo "# the PostgreSQL pass: API, CLI-command and import suites on $(node -e 'const u = new URL(process.argv[1]); u.password = ""; console.log(u.toString())' "$TEST_POSTGRES_URL")"
CHESSPORT_TEST_STORE=postgres exec node --test --test-concurrency=2 'test/api/*.test.ts' 'test/cli/cli.test.ts' 'test/import/*.test.ts' 'test/webhooks/*.test.ts'
