#!/usr/bin/env bash
# The PostgreSQL pass of `npm test`: the suites that run the service on a store (HTTP, import, webhooks) once
# more, each test store a fresh database on TEST_POSTGRES_URL (test/helpers/stores.ts). The store suites
# (test/store) already ran on both dialects in the first pass; the chess suites use no store. The files and
# their order are scripts/run-tests.ts's: the suites of these folders that use no store of the pass (a
# PostgreSQL cluster of their own, or no store at all) ran in the first pass and do not run again.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TEST_POSTGRES_URL:-}" ]; then
  echo "# SKIP the PostgreSQL pass: TEST_POSTGRES_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test);" \
    "the API, CLI-command and import suites ran on SQLite only"
  exit 0
fi
echo "# the PostgreSQL pass: API, CLI-command and import suites on $(node -e 'const u = new URL(process.argv[1]); u.password = ""; console.log(u.toString())' "$TEST_POSTGRES_URL")"
CHESSPORT_TEST_STORE=postgres node scripts/run-tests.ts postgres

# A named part once more through a PgBouncer in transaction mode (test/helpers/pgbouncer.ts, 4 server
# connections per database; docs/operations.md "Behind a pooler"): the servers and the CLI reach each test
# store through it with PG_POOL_MODE=transaction, their LISTEN connection directly (test/helpers/stores.ts).
# The feed's reads (its games imported by the CLI), long-polls woken across two instances through their direct
# LISTEN, webhooks delivered by two instances. test/api/pooler.test.ts (in the pass above) runs its own.
if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then
  echo "# SKIP the PgBouncer part of the PostgreSQL pass: pgbouncer is not installed (Debian: apt-get install pgbouncer)"
  exit 0
fi
bouncer=$(node test/helpers/pgbouncer.ts "$TEST_POSTGRES_URL")
field() { node -e 'console.log(JSON.parse(process.argv[1])[process.argv[2]])' "$bouncer" "$1"; }
bouncer_pid=$(field pid)
bouncer_dir=$(field dir)
trap 'kill "$bouncer_pid" 2>/dev/null || true; rm -rf "$bouncer_dir"' EXIT
echo "# the PostgreSQL pass, its pooled part: through PgBouncer in transaction mode on $(field url)"
TEST_PGBOUNCER_URL=$(field url) CHESSPORT_TEST_STORE=postgres node scripts/run-tests.ts --only \
  test/api/long-poll-postgres.test.ts test/api/changes.test.ts test/webhooks/scale-out.test.ts
