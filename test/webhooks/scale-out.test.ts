// Two `chessport serve` instances on one PostgreSQL deliver every signal between them: for every user whose
// games changed, a verified delivery carries the user's last change. The deliveries each instance made and any
// duplicate webhook-ids are counted and reported (at least once allows duplicates; the leases make them rare).
// PostgreSQL only: runs in the PostgreSQL pass of `npm test`, or alone with TEST_POSTGRES_URL. One instance runs
// in the test's process (serveInProcess), the other as a `chessport serve` child process: the webhook metrics
// count per process (src/platform/metrics.ts), and what each instance delivered is read from its /metrics.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openStore, type Store } from '../../src/store/index.ts';
import { record } from '../helpers/dialects.ts';
import { cliJson, type Env, type Server, startServer } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { postgresEnv } from '../helpers/scale-out.ts';
import { STORE_DIALECT, TEST_POSTGRES_URL } from '../helpers/stores.ts';
import { type Receiver, startReceiver, subscribe } from '../helpers/webhook-receiver.ts';

const USERS = 16;
const ROUNDS = 6;

function skip(): string | false {
  if (!TEST_POSTGRES_URL) return 'TEST_POSTGRES_URL is not set: two instances need one PostgreSQL';
  if (process.env.npm_lifecycle_event === 'test' && STORE_DIALECT !== 'postgres')
    return 'PostgreSQL-only: runs in the PostgreSQL pass of npm test';
  return false;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('webhooks from two instances on one PostgreSQL', { skip: skip() }, () => {
  let env: Env;
  let store: Store;
  let servers: (InProcessServer | Server)[] = [];
  let receiver: Receiver;

  before(async () => {
    env = postgresEnv({ WEBHOOK_ALLOW_PRIVATE: '1' });
    await cliJson(env, ['apps', 'add', 'app']);
    receiver = await startReceiver();
    await subscribe(env, 'app', receiver);
    // Two in this process would each report the deliveries of both on /metrics: one is a child process.
    servers = [await serveInProcess(env), await startServer(env)];
    // The writers: this process, through the store, as `chessport import` writes.
    store = await openStore(env.databaseUrl);
  });
  after(async () => {
    for (const server of servers) await server.stop();
    await store?.close();
    await receiver?.close();
    env?.cleanup();
  });

  test('every user’s last change is delivered; duplicates are counted', async (t) => {
    const app = (await store.accounts.findApp('app'))?.id as string;
    const users = [];
    for (let i = 0; i < USERS; i++) {
      const user = await store.accounts.addUser({ login: `user${i}` });
      const { token } = await store.tokens.issue({
        userId: user.id,
        appId: app,
        scopes: ['user.read', 'games.read'],
        expiresAt: null,
      });
      // The id the app knows the user by, from /me.
      const me = await fetch(`${servers[0]?.base}/api/v1/me`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const pairwise = ((await me.json()) as { data: { id: string } }).data.id;
      users.push({ user, pairwise, db: await store.databases.add({ ownerId: user.id, name: 'Games' }) });
    }
    let n = 0;
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(
        users.map(({ db }) =>
          store.games.insert(
            db,
            Array.from({ length: 3 }, () => record(++n, { contentHash: `scale-${n}` })),
          ),
        ),
      );
      await sleep(200 + Math.random() * 600);
    }
    // Each user's id as the app sees it is in the deliveries; which user is which does not matter here: the
    // last change of each is what a delivery must carry.
    const lastChanges = await store.db
      .selectFrom('games')
      .select((eb) => ['owner_id', eb.fn.max('updated_at').as('at')])
      .groupBy('owner_id')
      .execute();
    assert.equal(lastChanges.length, USERS);
    await receiver.waitFor(
      () => {
        const latest = new Map<string, string>();
        for (const r of receiver.delivered()) {
          if ((latest.get(r.event.data.user) ?? '') < r.event.timestamp)
            latest.set(r.event.data.user, r.event.timestamp);
        }
        if (latest.size < USERS) return false;
        const covered = [...latest.values()].sort();
        const needed = lastChanges.map((c) => new Date(Number(c.at)).toISOString()).sort();
        return needed.every((at, i) => (covered[i] ?? '') >= at);
      },
      60_000,
      'a delivery of every user’s last change',
    );
    await sleep(2000);
    const delivered = receiver.delivered();
    assert.equal(receiver.received.length, delivered.length, 'every request verified and answered 2xx');
    const counts = new Map<string, number>();
    for (const r of delivered) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
    const duplicates = [...counts.values()].reduce((sum, c) => sum + c - 1, 0);
    const perInstance = await Promise.all(
      servers.map(async (server) => {
        const metrics = await fetch(`${server.base}/metrics`).then((res) => res.text());
        return Number(
          /^chessport_webhook_attempts_total\{outcome="delivered"\} (\d+)/m.exec(metrics)?.[1] ?? 0,
        );
      }),
    );
    assert.equal(
      perInstance.reduce((a, b) => a + b, 0),
      delivered.length,
      'each delivery made by one instance',
    );
    t.diagnostic(
      `${delivered.length} deliveries for ${USERS} users x ${ROUNDS} rounds of writes; by instance: ${perInstance.join(' + ')}; duplicate webhook-ids: ${duplicates}`,
    );
  });
});
