// Webhooks: commit-to-delivery latency and deliveries per second, from `chessport serve` to a local receiver
// (docs/performance.md#webhooks). Changes are written through the Store from this process, as a CLI import
// writes them; the receiver records when each delivery arrives.
// Usage: node bench/webhooks.ts [--samples N] [--users N]   (defaults 30 and 2000)
// On SQLite, and on PostgreSQL too when TEST_POSTGRES_URL names a server where a database may be created.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pairwiseId } from '../src/domain/pairwise.ts';
import { type Database, openStore, type Store } from '../src/store/index.ts';
import { record } from '../test/helpers/dialects.ts';
import { createTestDatabase, dropTestDatabase } from '../test/helpers/stores.ts';
import { freePort, percentile, stop, waitUntilUp } from './support.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SAMPLES = arg('--samples', 30);
const USERS = arg('--users', 2000);
const POSTGRES_URL = process.env.TEST_POSTGRES_URL || null;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A receiver that answers 204 at once and calls back with each delivery's pairwise user id. */
async function receiver(onDelivery: (user: string) => void) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      res.writeHead(204).end();
      onDelivery((JSON.parse(body) as { data: { user: string } }).data.user);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, server };
}

interface Result {
  store: string;
  case: string;
  deliveries: number;
  p50: number;
  p99: number;
  perSecond: number | null;
}

async function bench(dialect: 'sqlite' | 'postgres'): Promise<Result[]> {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-bench-webhooks-'));
  const databaseUrl = dialect === 'postgres' ? await createTestDatabase() : join(dir, 'store.sqlite');
  let store: Store | undefined;
  let server: ChildProcess | undefined;
  const arrivals = new Map<string, number[]>();
  const hook = await receiver((user) => {
    const list = arrivals.get(user) ?? [];
    list.push(performance.now());
    arrivals.set(user, list);
  });
  try {
    store = await openStore(databaseUrl);
    const secret = await store.accounts.serverSecret();
    const app = await store.accounts.addApp({ name: 'bench' });
    await store.webhooks.endpoints.add({ appId: app.id, url: hook.url });
    const users: { id: string; pairwise: string; database: Database }[] = [];
    for (let i = 0; i < USERS; i++) {
      const user = await store.accounts.addUser({ login: `user${i}` });
      await store.tokens.issue({ userId: user.id, appId: app.id, scopes: ['games.read'], expiresAt: null });
      const database = await store.databases.add({ ownerId: user.id, name: 'Games' });
      users.push({ id: user.id, pairwise: pairwiseId(secret, app.sector, user.id), database });
    }
    const port = await freePort();
    const startServer = async () => {
      server = spawn(process.execPath, [join(ROOT, 'bin/chessport.js'), 'serve', '--port', String(port)], {
        env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: '1' },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      await waitUntilUp(`http://127.0.0.1:${port}/healthz`);
    };
    await startServer();
    let n = 0;
    const write = (database: Database) =>
      (store as Store).games.insert(database, [record(++n, { contentHash: `bench-${n}` })]);
    const firstArrival = (user: (typeof users)[number]) =>
      (arrivals.get(user.pairwise) as number[])[0] as number;
    const allArrived = async () => {
      while (users.some((u) => !arrivals.has(u.pairwise))) await sleep(5);
      return performance.now();
    };

    // ---- latency of single changes, one at a time, each after a quiet spell (no coalescing wait) -------
    const single = users[0] as (typeof users)[number];
    const latencies: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const before = arrivals.get(single.pairwise)?.length ?? 0;
      await write(single.database);
      const committed = performance.now();
      while ((arrivals.get(single.pairwise)?.length ?? 0) === before) await sleep(2);
      latencies.push(((arrivals.get(single.pairwise) as number[])[before] as number) - committed);
      // Past the coalescing spacing, so that the next change is delivered at once; a random part more, so
      // that changes fall anywhere in the worker's poll interval, as they do in use.
      await sleep(1200 + Math.random() * 500);
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const results: Result[] = [
      {
        store: dialect,
        case: 'one change at a time',
        deliveries: SAMPLES,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        perSecond: null,
      },
    ];

    // ---- a burst: one change for each of many users, written as fast as this process can ---------------
    await sleep(1200);
    arrivals.clear();
    const commits = new Map<string, number>();
    const started = performance.now();
    for (const user of users) {
      await write(user.database);
      commits.set(user.pairwise, performance.now());
    }
    const written = performance.now();
    await allArrived();
    const lags = users
      .map((u) => firstArrival(u) - (commits.get(u.pairwise) as number))
      .sort((a, b) => a - b);
    results.push({
      store: dialect,
      case: `burst: ${USERS} users, one change each, written in ${((written - started) / 1000).toFixed(1)} s`,
      deliveries: USERS,
      p50: percentile(lags, 50),
      p99: percentile(lags, 99),
      perSecond: null,
    });

    // ---- a backlog: the same, written while no server runs, then drained -------------------------------
    await stop(server);
    arrivals.clear();
    for (const user of users) await write(user.database);
    const restarted = performance.now();
    await startServer();
    const up = performance.now();
    const drained = await allArrived();
    const waits = users.map((u) => firstArrival(u) - up).sort((a, b) => a - b);
    results.push({
      store: dialect,
      case: `backlog of ${USERS} signals, from the server's start (up in ${((up - restarted) / 1000).toFixed(1)} s)`,
      deliveries: USERS,
      p50: percentile(waits, 50),
      p99: percentile(waits, 99),
      perSecond: USERS / ((drained - up) / 1000),
    });
    return results;
  } finally {
    await stop(server);
    await store?.close();
    hook.server.close();
    if (dialect === 'postgres') await dropTestDatabase(databaseUrl);
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [...(await bench('sqlite')), ...(POSTGRES_URL ? await bench('postgres') : [])];
if (!POSTGRES_URL) console.log('PostgreSQL skipped: set TEST_POSTGRES_URL to measure it too');
console.table(
  rows.map((r) => ({
    store: r.store,
    case: r.case,
    deliveries: r.deliveries,
    'p50 ms': Math.round(r.p50),
    'p99 ms': Math.round(r.p99),
    'deliveries/s': r.perSecond === null ? '' : Math.round(r.perSecond),
  })),
);
