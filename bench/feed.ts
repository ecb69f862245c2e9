// Latency of GET /changes over real HTTP against `chessport serve`, on a store of 100,000+ games: the plain
// feed, and the feed with every game's detail (expand=game), the take-over of a whole account, with and
// without gzip; on SQLite, and on PostgreSQL when it answers.
// Usage: node bench/feed.ts [--games N] [--stores sqlite,postgres]
//   (default 100000 games, real TWIC #920 games repeated; PostgreSQL: BENCH_POSTGRES_URL, else
//   TEST_POSTGRES_URL, else postgres://postgres@127.0.0.1:5432/postgres, in a database the bench makes and drops)
import type { ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { schemas, sharedSchemas } from '../src/api/schemas.ts';
import { expandedChangeJson } from '../src/api/serialize.ts';
import { openStore } from '../src/store/index.ts';
import {
  type Dialect,
  fillBenchStore,
  forEachStore,
  percentile,
  startChessport,
  stop,
  waitUntilUp,
  withScratchStore,
} from './support.ts';

const { values: options } = parseArgs({
  options: {
    games: { type: 'string', default: '100000' },
    stores: { type: 'string', default: 'sqlite,postgres' },
  },
});
const TOTAL = Number(options.games);
const DISTINCT = 500;
const PAGE = 500;
const BENCH_DATABASE = `chessport_bench_feed_${process.pid}`;

interface Row {
  case: string;
  requests: number;
  items: number;
  kb: number;
  p50: number;
  p99: number;
  max: number;
}

function row(name: string, latencies: number[], items: number, bytes: number): Row {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    case: name,
    requests: latencies.length,
    items,
    kb: bytes / latencies.length / 1024,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/**
 * One expanded page of 500 real changes serialised in this process, ms per page (median of 7 runs of 30):
 * by the route's compiled serialiser (Fastify's, fast-json-stringify, which checks each game against
 * GameDetail with Ajv to pick a branch of the nullable game's anyOf), and by JSON.stringify (what the route
 * sends), with a check that both give the same bytes.
 */
async function serialisationCosts(databaseUrl: string, ownerId: string): Promise<void> {
  const store = await openStore(databaseUrl);
  const page = {
    data: (await store.feed.expandedChanges(ownerId, 0, PAGE)).map(expandedChangeJson),
    nextCursor: 'x'.repeat(50),
    hasMore: true,
  };
  await store.close();
  const median = (run: () => string): number => {
    for (let i = 0; i < 30; i++) run();
    const times: number[] = [];
    for (let r = 0; r < 7; r++) {
      const start = performance.now();
      for (let i = 0; i < 30; i++) run();
      times.push((performance.now() - start) / 30);
    }
    return times.sort((a, b) => a - b)[3] as number;
  };
  const app = Fastify();
  for (const schema of sharedSchemas) app.addSchema(schema);
  let line = '';
  app.get(
    '/page',
    { schema: { response: { 200: { content: { 'application/json': { schema: schemas.changes } } } } } },
    async (_request, reply) => {
      const compiled = () => reply.serializeInput(page, '200', 'application/json') as string;
      const native = () => JSON.stringify(page);
      if (compiled() !== native()) throw new Error('the two serialisers disagree');
      line =
        `serialising one expanded page of ${page.data.length} changes (${(native().length / 1024).toFixed(0)} KB), ` +
        `ms: Fastify's compiled serialiser ${median(compiled).toFixed(2)}, JSON.stringify ${median(native).toFixed(2)}`;
      return page;
    },
  );
  const answer = await app.inject('/page');
  if (answer.statusCode !== 200) throw new Error(answer.body);
  await app.close();
  console.log(line);
}

/** Fills the empty store at databaseUrl, serves it, measures, and stops the server. */
async function benchStore(dialect: Dialect, databaseUrl: string): Promise<void> {
  let server: ChildProcess | undefined;
  try {
    // ---- fill the store directly: the bench measures reading, not importing ------------------------
    const filled = await fillBenchStore(databaseUrl, TOTAL, DISTINCT);
    const { token } = filled;
    console.log(
      `\n${dialect}: filled ${TOTAL} games (${filled.distinct} distinct TWIC games repeated) in ${filled.seconds.toFixed(1)} s`,
    );
    await serialisationCosts(databaseUrl, filled.database.ownerId);

    // ---- a real server in its own process -------------------------------------------------------------
    const started = await startChessport({
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '100000000',
    });
    server = started.child;
    const base = `${started.origin}/api/v1`;
    const auth = { authorization: `Bearer ${token}` };
    await waitUntilUp(`${base}/changes?limit=1`, auth);

    /** One request, timed until its body is read and decoded; `bytes` as they came over the wire. */
    const timed = async (query: string, coding = 'identity') => {
      const start = performance.now();
      const { status, encoding, wire } = await new Promise<{
        status: number;
        encoding: string;
        wire: Buffer;
      }>((resolve, reject) => {
        get(`${base}/changes?${query}`, { headers: { ...auth, 'accept-encoding': coding } }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              encoding: String(response.headers['content-encoding'] ?? ''),
              wire: Buffer.concat(chunks),
            }),
          );
          response.on('error', reject);
        }).on('error', reject);
      });
      const text = (encoding === 'gzip' ? gunzipSync(wire) : wire).toString();
      const ms = performance.now() - start;
      const bytes = wire.length;
      if (status !== 200) throw new Error(`${query}: ${status} ${text}`);
      const body = JSON.parse(text) as {
        data: { updatedAt: string }[];
        nextCursor: string;
        hasMore: boolean;
      };
      return { ms, body, bytes };
    };

    /** Follows the whole feed from the start and returns the latency of every page. */
    const walk = async (extra: string, coding?: string) => {
      const latencies: number[] = [];
      let items = 0;
      let bytes = 0;
      let query = `limit=${PAGE}${extra}`;
      let middle = '';
      const started = performance.now();
      for (;;) {
        const answer = await timed(query, coding);
        latencies.push(answer.ms);
        items += answer.body.data.length;
        bytes += answer.bytes;
        if (latencies.length === Math.ceil(TOTAL / PAGE / 2)) middle = answer.body.data[0]?.updatedAt ?? '';
        if (!answer.body.hasMore) {
          const seconds = (performance.now() - started) / 1000;
          return { latencies, items, bytes, end: answer.body.nextCursor, middle, seconds };
        }
        query = `limit=${PAGE}${extra}&cursor=${answer.body.nextCursor}`;
      }
    };

    await walk(''); // warm-up: JIT, the store's caches
    await walk('&expand=game');
    const rows: Row[] = [];
    const walks: [string, Awaited<ReturnType<typeof walk>>][] = [];
    for (const [name, extra, coding] of [
      [`full backfill, limit=${PAGE}`, '', undefined],
      [`expand=game, limit=${PAGE}`, '&expand=game', undefined],
      [`expand=game, limit=${PAGE}, gzip`, '&expand=game', 'gzip'],
    ] as const) {
      const result = await walk(extra, coding);
      rows.push(row(name, result.latencies, result.items, result.bytes));
      walks.push([name, result]);
    }
    const full = walks[0]?.[1] as Awaited<ReturnType<typeof walk>>;

    const tail: number[] = [];
    for (let i = 0; i < 50; i++) tail.push((await timed(`limit=${PAGE}&cursor=${full.end}`)).ms);
    rows.push(row('caught up (empty page)', tail, 0, 0));

    // since binary-searches the owner's games by seq for the first one at or after the time.
    const sinceCases: [string, string][] = [
      ['since: before everything', '2000-01-01T00:00:00.000Z'],
      ['since: the middle', full.middle],
      ['since: after everything', '2999-01-01T00:00:00.000Z'],
    ];
    for (const [name, since] of sinceCases) {
      const latencies: number[] = [];
      let items = 0;
      let bytes = 0;
      for (let i = 0; i < 20; i++) {
        const answer = await timed(`limit=${PAGE}&since=${since}`);
        latencies.push(answer.ms);
        items = answer.body.data.length;
        bytes += answer.bytes;
      }
      rows.push(row(name, latencies, items, bytes));
    }

    console.log(
      `\nGET /changes over HTTP on ${dialect}, ${TOTAL} games, one client, sequential requests (ms per request, body read)\n`,
    );
    const fmt = (n: number) => n.toFixed(1).padStart(7);
    console.log(
      `${'case'.padEnd(34)} ${'requests'.padStart(8)} ${'items'.padStart(7)} ${'KB/page'.padStart(8)}     p50     p99     max`,
    );
    for (const r of rows) {
      console.log(
        `${r.case.padEnd(34)} ${String(r.requests).padStart(8)} ${String(r.items).padStart(7)} ${r.kb.toFixed(0).padStart(8)} ${fmt(r.p50)} ${fmt(r.p99)} ${fmt(r.max)}`,
      );
    }
    console.log('');
    for (const [name, result] of walks) {
      console.log(
        `${name}: ${result.items} changes in ${result.seconds.toFixed(2)} s, ${Math.round(result.items / result.seconds)} changes/s`,
      );
    }
  } finally {
    await stop(server);
  }
}

await forEachStore(options.stores ?? '', (dialect) =>
  withScratchStore(dialect, BENCH_DATABASE, (databaseUrl) => benchStore(dialect, databaseUrl)),
);
