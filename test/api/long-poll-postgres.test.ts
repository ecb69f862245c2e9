// GET /changes?wait= on PostgreSQL across instances (issue 27): every instance hears a commit through its own
// LISTEN connection, and one that lost that connection reads again once it listens again, so a change that
// committed meanwhile still answers its waiting requests. The instances run in the test's process
// (serveInProcess), each on store connections of its own, LISTEN included; the imports that wake them write
// through yet another connection, as the CLI of another process would. Needs TEST_POSTGRES_URL; inside
// `npm test` it runs in the PostgreSQL pass only.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cliJson, type Env, FIXTURES, http, importPgn, issueToken } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { type FeedPage, logFrom, waitForChanges, waitingAtLeast } from '../helpers/long-poll.ts';
import { postgresEnv } from '../helpers/scale-out.ts';
import { POSTGRES_SKIP, queryStore, STORE_DIALECT, TEST_POSTGRES_URL } from '../helpers/stores.ts';
import { type TcpProxy, tcpProxy } from '../helpers/tcp-proxy.ts';

const ALICE_PGN = join(FIXTURES, 'api/alice.pgn');
const WAIT_S = 60;
/** An answer this long before its wait's end was woken by the change, whatever the import took. */
const WELL_BEFORE_MS = 10_000;

function skip(): string | false {
  if (!TEST_POSTGRES_URL) return POSTGRES_SKIP;
  if (process.env.npm_lifecycle_event === 'test' && STORE_DIALECT !== 'postgres')
    return 'PostgreSQL-only: runs in the PostgreSQL pass of npm test';
  return false;
}

async function headCursor(base: string, token: string): Promise<string> {
  const page = await http<FeedPage>(`${base}/api/v1`, '/changes?limit=500', { token });
  assert.equal(page.json.hasMore, false);
  return page.json.nextCursor;
}

/** Resolves once the store has n LISTEN connections of chessport (one per instance). */
async function listeners(env: Env, n: number): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    const [row] = await queryStore<{ count: number }>(
      env.databaseUrl,
      `select count(*)::int as count from pg_stat_activity
       where datname = current_database() and application_name = 'chessport change listener'`,
    );
    if (row?.count === n) return;
    if (Date.now() > until) throw new Error(`${row?.count} LISTEN connections, expected ${n}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Adds user alice and the app "desktop" to env's store; returns alice's games.read token of it. */
async function aliceReader(env: Env): Promise<string> {
  await cliJson(env, ['users', 'add', 'alice']);
  await cliJson(env, ['apps', 'add', 'desktop']);
  return issueToken(env, 'alice', 'desktop', 'games.read');
}

describe('GET /changes?wait= on two instances of one PostgreSQL', { skip: skip() }, () => {
  let env: Env;
  let servers: InProcessServer[] = [];
  let token = '';

  before(async () => {
    env = postgresEnv();
    token = await aliceReader(env);
    servers = await Promise.all([serveInProcess(env), serveInProcess(env)]);
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    env?.cleanup();
  });

  test('a CLI import wakes the requests waiting on either instance, each with the change', async (t) => {
    const cursor = await headCursor((servers[0] as InProcessServer).base, token);
    const waits = servers.flatMap((server) =>
      [1, 2].map(() =>
        waitForChanges(server.base, token, `wait=${WAIT_S}&cursor=${encodeURIComponent(cursor)}`),
      ),
    );
    // The count of waiting requests is the process's, both instances' together: all four wait.
    await waitingAtLeast((servers[0] as InProcessServer).base, waits.length);
    await listeners(env, 2);
    await importPgn(env, ALICE_PGN, 'alice', 'Both');
    const answers = await Promise.all(waits.map((w) => w.answer));
    const ids = answers.map((a) => a.json.data.map((item) => item.id).join());
    for (const [i, { status, json, at }] of answers.entries()) {
      assert.equal(status, 200);
      assert.ok(json.data.length > 0, `instance ${i >> 1}: the page has the change`);
      assert.ok(at - (waits[i]?.sentAt ?? 0) < WAIT_S * 1000 - WELL_BEFORE_MS, 'woken before its wait ended');
    }
    assert.equal(new Set(ids).size, 1, 'both instances answered the same page');
    const changedAt = Math.max(...(answers[0]?.json.data ?? []).map((item) => Date.parse(item.updatedAt)));
    t.diagnostic(
      `answered ${answers.map((a) => a.at - changedAt).join(', ')} ms after the change time of the import's transaction`,
    );
  });
});

describe('GET /changes?wait= when the LISTEN connection is lost', { skip: skip() }, () => {
  let env: Env;
  let proxy: TcpProxy;
  let server: InProcessServer;
  let output: { text(): string };
  let token = '';

  before(async () => {
    env = postgresEnv();
    token = await aliceReader(env);
    // The server reaches PostgreSQL only through a proxy that the test can cut; the CLI goes directly.
    const target = new URL(env.databaseUrl);
    proxy = await tcpProxy(target.hostname, Number(target.port || 5432));
    const proxied = new URL(env.databaseUrl);
    proxied.host = `127.0.0.1:${proxy.port}`;
    // Pooled connections frozen with the listener's are found silent soon too.
    // Its LISTEN connection too (the PgBouncer part of the PostgreSQL pass sets one of its own).
    server = await serveInProcess(env, {
      DATABASE_URL: proxied.toString(),
      DATABASE_LISTEN_URL: proxied.toString(),
      PG_ANSWER_TIMEOUT: '2s',
    });
    output = logFrom(server);
  });
  after(async () => {
    await server?.stop();
    await proxy?.close();
    env?.cleanup();
  });

  test('cut off: a change committed meanwhile answers the wait once the instance listens again', async () => {
    const cursor = await headCursor(server.base, token);
    const waiting = waitForChanges(server.base, token, `wait=60&cursor=${encodeURIComponent(cursor)}`);
    await waitingAtLeast(server.base, 1);
    await listeners(env, 1);
    await proxy.refuse();
    await listeners(env, 0);
    // Committed and notified while the instance cannot hear it.
    await importPgn(env, ALICE_PGN, 'alice', 'Unheard');
    await proxy.restore();
    const { status, json, at } = await waiting.answer;
    assert.equal(status, 200);
    assert.ok(json.data.length > 0);
    assert.ok(at - waiting.sentAt < 60_000 - 5000, 'answered before its wait ended');
    assert.match(output.text(), /change listener: connection lost/);
    assert.match(output.text(), /change listener: listening again/);
  });

  test('frozen without a word: the heartbeat finds it, and the change committed meanwhile answers the wait', async () => {
    const cursor = await headCursor(server.base, token);
    await listeners(env, 1);
    const before = output.text().match(/listening again/g)?.length ?? 0;
    const waiting = waitForChanges(server.base, token, `wait=60&cursor=${encodeURIComponent(cursor)}`);
    await waitingAtLeast(server.base, 1);
    await proxy.freeze();
    await importPgn(env, ALICE_PGN, 'alice', 'Frozen');
    const { status, json, at } = await waiting.answer;
    assert.equal(status, 200);
    assert.ok(json.data.length > 0);
    assert.ok(at - waiting.sentAt < 60_000 - 5000, 'answered before its wait ended');
    assert.equal(output.text().match(/listening again/g)?.length, before + 1);
  });
});
