// chessport behind PgBouncer in transaction pooling mode (issue 34; docs/operations.md "Behind a pooler"):
// PG_POOL_MODE=transaction, the pool through a PgBouncer of 2 server connections, the LISTEN connection
// direct (DATABASE_LISTEN_URL). Instances that start at once apply the migrations once and leave no lock
// behind on the pooler's server connections; a write transaction keeps its lock_timeout; a CLI import wakes
// the long-polls of both instances. Needs TEST_POSTGRES_URL and pgbouncer; inside `npm test` it runs in the
// PostgreSQL pass only. The PgBouncer part of that pass (scripts/run-tests.ts) runs more suites through it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openStore } from '../../src/store/index.ts';
import {
  cli,
  cliJson,
  type Env,
  FIXTURES,
  http,
  importPgn,
  issueToken,
  type Server,
  startServer,
} from '../helpers/harness.ts';
import { type FeedPage, waitForChanges, waitingAtLeast } from '../helpers/long-poll.ts';
import { PGBOUNCER, PGBOUNCER_SKIP, type PgBouncer, startPgBouncer } from '../helpers/pgbouncer.ts';
import { postgresEnv } from '../helpers/scale-out.ts';
import { POSTGRES_SKIP, queryPostgres, STORE_DIALECT, TEST_POSTGRES_URL } from '../helpers/stores.ts';

const ALICE_PGN = join(FIXTURES, 'api/alice.pgn');
const WAIT_S = 60;

function skip(): string | false {
  if (!TEST_POSTGRES_URL) return POSTGRES_SKIP;
  if (!PGBOUNCER) return PGBOUNCER_SKIP;
  if (process.env.npm_lifecycle_event === 'test' && STORE_DIALECT !== 'postgres')
    return 'PostgreSQL-only: runs in the PostgreSQL pass of npm test';
  return false;
}

/** The connections of chessport's LISTEN (one per instance) on env's database: they bypass the pooler. */
async function listeners(env: Env): Promise<number> {
  const [row] = await queryPostgres<{ count: number }>(
    env.databaseUrl,
    `select count(*)::int as count from pg_stat_activity
     where datname = current_database() and application_name = 'chessport change listener'`,
  );
  return row?.count ?? 0;
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('two instances and the CLI behind PgBouncer in transaction mode', { skip: skip() }, () => {
  let bouncer: PgBouncer;
  let env: Env;
  let servers: Server[] = [];
  let token = '';

  before(async () => {
    bouncer = await startPgBouncer(TEST_POSTGRES_URL as string, { poolSize: 2 });
    env = postgresEnv();
    // The servers and the CLI through the pooler; env.databaseUrl stays direct, for the test's own looks.
    Object.assign(env.env, {
      DATABASE_URL: bouncer.pooled(env.databaseUrl),
      DATABASE_LISTEN_URL: env.databaseUrl,
      PG_POOL_MODE: 'transaction',
    });
    // Both start at once on the empty database: one applies the migrations, the other waits for its lock.
    servers = await Promise.all([startServer(env), startServer(env)]);
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['apps', 'add', 'desktop']);
    token = await issueToken(env, 'alice', 'desktop', 'games.read');
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    env?.cleanup();
    await bouncer?.stop();
  });

  test('the migrations ran once, and no advisory lock outlived their transaction', async () => {
    const migrations = await queryPostgres<{ name: string; n: number }>(
      env.databaseUrl,
      'select name, count(*)::int as n from kysely_migration group by name',
    );
    assert.ok(migrations.length > 0);
    assert.ok(migrations.every((m) => m.n === 1));
    const locks = await queryPostgres<{ n: number }>(
      env.databaseUrl,
      `select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database
       where l.locktype = 'advisory' and d.datname = current_database()`,
    );
    assert.equal(locks[0]?.n, 0, 'an advisory lock is held on a server connection of the pooler');
    // Every CLI command opens the store and takes the migrations' lock again: none waits for a stale one.
    for (let i = 0; i < 3; i++) {
      const listed = await cli(env, ['users', 'list']);
      assert.equal(listed.code, 0, listed.stderr);
    }
  });

  test('a CLI import through the pooler wakes a long-poll on each instance through its direct LISTEN', async (t) => {
    await until('both instances to listen', async () => (await listeners(env)) === 2);
    const head = await http<FeedPage>(`${servers[0]?.base}/api/v1`, '/changes?limit=500', { token });
    const cursor = encodeURIComponent(head.json.nextCursor);
    const waits = servers.map((server) =>
      waitForChanges(server.base, token, `wait=${WAIT_S}&cursor=${cursor}`),
    );
    for (const server of servers) await waitingAtLeast(server.base, 1);
    await importPgn(env, ALICE_PGN, 'alice', 'Pooled');
    const answers = await Promise.all(waits.map((w) => w.answer));
    const changedAt = Math.max(...(answers[0]?.json.data ?? []).map((item) => Date.parse(item.updatedAt)));
    for (const [i, { status, json, at }] of answers.entries()) {
      assert.equal(status, 200);
      assert.ok(json.data.length > 0, `instance ${i}: the page has the change`);
      // Woken by the notification, not by the end of its wait.
      assert.ok(
        at - (waits[i]?.sentAt ?? 0) < (WAIT_S - 10) * 1000,
        `instance ${i} answered at its wait's end`,
      );
    }
    t.diagnostic(
      `answered ${answers.map((a) => a.at - changedAt).join(', ')} ms after the change time of the import's transaction`,
    );
  });
});

describe('a write transaction through PgBouncer in transaction mode', { skip: skip() }, () => {
  test('keeps its lock_timeout (set_config for the transaction): a lock held elsewhere fails it in time', async () => {
    const bouncer = await startPgBouncer(TEST_POSTGRES_URL as string, { poolSize: 2 });
    const env = postgresEnv();
    const store = await openStore(bouncer.pooled(env.databaseUrl), {
      poolMode: 'transaction',
      lockTimeoutMs: 200,
    });
    const other = new pg.Client(env.databaseUrl);
    try {
      const user = await store.accounts.addUser({ login: 'alice' });
      await other.connect();
      await other.query('begin');
      await other.query('lock table users in exclusive mode');
      const failed = await store.accounts.setPasswordHash(user.id, 'x').then(
        () => 'it went through',
        (error: unknown) => error,
      );
      assert.equal((failed as { code?: unknown }).code, '55P03', String(failed));
      await other.query('rollback');
      await store.accounts.setPasswordHash(user.id, 'x');
      // The setting lasted for its transaction only: the pooler's server connections have the server's.
      const settings = await queryPostgres<{ value: string }>(
        bouncer.pooled(env.databaseUrl),
        `select current_setting('lock_timeout') as value`,
      );
      assert.equal(settings[0]?.value, '0');
    } finally {
      await other.end().catch(() => undefined);
      await store.close();
      env.cleanup();
      await bouncer.stop();
    }
  });
});
