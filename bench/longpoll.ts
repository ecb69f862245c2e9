// Long-polls of GET /changes?wait= against `chessport serve`: how soon a waiting request is answered after a
// write of another process commits (the SQLite poller, PostgreSQL's LISTEN/NOTIFY), for one waiter and for
// 1,000 waiting at once, and the server's resident memory with 1,000 waiting requests against idle; on
// SQLite, and on PostgreSQL when it answers.
// Usage: node bench/longpoll.ts [--rounds N] [--waiters N] [--stores sqlite,postgres]
//   (default 50 rounds of one waiter, 1000 waiters; PostgreSQL: BENCH_POSTGRES_URL, else TEST_POSTGRES_URL,
//   else postgres://postgres@127.0.0.1:5432/postgres, in a database the bench makes and drops)
// The writes are made by this process through the store (as the CLI's import makes them): "commit" is when
// the write returned, its COMMIT acknowledged; "answered" is when the whole answer has arrived here.
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { parseArgs } from 'node:util';
import { openStore, type Store } from '../src/store/index.ts';
import {
  addBenchReader,
  type Dialect,
  forEachStore,
  percentile,
  rssMb,
  sampleRecords,
  startChessport,
  stop,
  waitUntilUp,
  withScratchStore,
} from './support.ts';

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '50' },
    waiters: { type: 'string', default: '1000' },
    stores: { type: 'string', default: 'sqlite,postgres' },
  },
});
const ROUNDS = Number(options.rounds);
const WAITERS = Number(options.waiters);
const BENCH_DATABASE = `chessport_bench_longpoll_${process.pid}`;

interface Page {
  data: unknown[];
  nextCursor: string;
}

/** One long-poll on a connection of its own; resolves with the page and when it arrived. */
function longPoll(url: string, token: string, cut?: AbortSignal): Promise<{ page: Page; at: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { headers: { authorization: `Bearer ${token}` }, agent: false, signal: cut },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const at = performance.now();
          if (res.statusCode !== 200) reject(new Error(`${res.statusCode}: ${Buffer.concat(chunks)}`));
          else resolve({ page: JSON.parse(Buffer.concat(chunks).toString()) as Page, at });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function waiting(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^chessport_feed_waiting (\d+)/m.exec(text)?.[1] ?? 0);
}

async function untilWaiting(base: string, n: number): Promise<void> {
  const until = Date.now() + 60_000;
  while ((await waiting(base)) < n) {
    if (Date.now() > until) throw new Error(`fewer than ${n} requests wait after 60 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const fmt = (n: number) => n.toFixed(1).padStart(7);

/** Adds the bench reader and the other users to the empty store at databaseUrl, serves it, measures, stops it. */
async function benchStore(dialect: Dialect, databaseUrl: string): Promise<void> {
  let server: ChildProcess | undefined;
  let store: Store | undefined;
  try {
    store = await openStore(databaseUrl);
    const { app, token, database } = await addBenchReader(store);
    const [record] = await sampleRecords(1);
    if (!record) throw new Error('no record');
    const write = async (): Promise<number> => {
      await store?.games.insert(database, [record], true);
      return performance.now();
    };
    // Other users, each with a request waiting, whom the bench user's writes must not wake.
    const others: string[] = [];
    for (let i = 1; i < WAITERS; i++) {
      const other = await store.accounts.addUser({ login: `other-${i}` });
      const issued = await store.tokens.issue({
        userId: other.id,
        appId: app.id,
        scopes: ['games.read'],
        expiresAt: null,
      });
      others.push(issued.token);
    }

    const started = await startChessport({
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '100000000',
      LONG_POLLS_PER_CLIENT: '5000',
    });
    server = started.child;
    const pid = server.pid as number;
    const base = started.origin;
    const headers = { authorization: `Bearer ${token}` };
    await waitUntilUp(`${base}/api/v1/changes`, headers);
    let cursor = ((await (await fetch(`${base}/api/v1/changes`, { headers })).json()) as Page).nextCursor;
    const feed = (after: string) => `${base}/api/v1/changes?wait=60&cursor=${encodeURIComponent(after)}`;

    /** Rounds of one waiter of the bench user and one write of it: ms from commit to answer. */
    const rounds = async (n: number, waitingBesides: number): Promise<number[]> => {
      const latencies: number[] = [];
      for (let round = 0; round < n; round++) {
        const answer = longPoll(feed(cursor), token);
        await untilWaiting(base, waitingBesides + 1);
        // A moment between writes: the SQLite poller's phase differs from round to round.
        await new Promise((r) => setTimeout(r, 37 * (round % 5)));
        const committed = await write();
        const { page, at } = await answer;
        if (page.data.length === 0) throw new Error('woken without the change');
        cursor = page.nextCursor;
        latencies.push(at - committed);
      }
      return latencies;
    };
    await rounds(3, 0); // warm-up
    const single = await rounds(ROUNDS, 0);

    // ---- memory: idle, then with many requests (of other users) waiting -------------------------------
    await new Promise((r) => setTimeout(r, 500));
    const idleMb = rssMb(pid);
    const cut = new AbortController();
    const othersWaiting = others.map((other) =>
      longPoll(`${base}/api/v1/changes?wait=60`, other, cut.signal).catch((error: unknown) => {
        if (!cut.signal.aborted) throw error;
      }),
    );
    await untilWaiting(base, others.length);
    const amongOthers = await rounds(ROUNDS, others.length);
    await new Promise((r) => setTimeout(r, 500));
    const waitingMb = rssMb(pid);
    // Their clients leave: every waiter is freed.
    cut.abort();
    await Promise.all(othersWaiting);
    while ((await waiting(base)) > 0) await new Promise((r) => setTimeout(r, 20));

    // ---- many waiters of one user, all woken by one write ---------------------------------------------
    const answers = Array.from({ length: WAITERS }, () => longPoll(feed(cursor), token));
    await untilWaiting(base, WAITERS);
    const committed = await write();
    const woken = (await Promise.all(answers)).map(({ at }) => at - committed);
    const afterMb = rssMb(pid);

    console.log(`\n${dialect}: from a write's commit (in another process) to the whole answer, ms`);
    console.log(`${'case'.padEnd(52)} ${'answers'.padStart(8)}     p50     p99     max`);
    const line = (name: string, latencies: number[]) => {
      const sorted = [...latencies].sort((a, b) => a - b);
      const figures = [percentile(sorted, 50), percentile(sorted, 99), sorted.at(-1) ?? Number.NaN];
      console.log(`${name.padEnd(52)} ${String(sorted.length).padStart(8)} ${figures.map(fmt).join(' ')}`);
    };
    line('one waiter, one write per round', single);
    line(`one waiter, ${others.length} of other users waiting too`, amongOthers);
    line(`${WAITERS} waiters of one user, one write`, woken);
    console.log(
      `server RSS: ${idleMb.toFixed(0)} MB idle, ${waitingMb.toFixed(0)} MB with ${WAITERS} requests waiting ` +
        `(+${(((waitingMb - idleMb) * 1024) / WAITERS).toFixed(1)} KB each), ${afterMb.toFixed(0)} MB after ` +
        `${WAITERS} were answered at once`,
    );
  } finally {
    await store?.close();
    await stop(server);
  }
}

await forEachStore(options.stores ?? '', (dialect) =>
  withScratchStore(dialect, BENCH_DATABASE, (databaseUrl) => benchStore(dialect, databaseUrl)),
);
